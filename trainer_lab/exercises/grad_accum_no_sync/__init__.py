from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="grad-accum-no-sync",
    title="Gradient accumulation with no_sync",
    topic="data parallel",
    summary="accumulate_step(ddp_model, optimizer, micro_batches): one optimizer step over k "
    "micro-batches that equals one step on their concatenation, with one gradient all-reduce. "
    "The micro-batches of one call are the same size (not k in general), and k differs from "
    "call to call.",
    file="accumulate.py",
    checks=(
        ("matches_big_batch", "parameters equal one step on the whole batch (mean loss)"),
        ("params_in_sync", "after the steps every rank holds identical parameters"),
        (
            "one_allreduce_per_step",
            "DDP all-reduces gradients once per optimizer step, not per micro-batch",
        ),
    ),
    hints=(
        "Each backward adds into .grad; the mean over k micro-batches needs loss / k.",
        "ddp_model.no_sync() is a context manager, and DDP reads it in forward: run both "
        "forward and backward inside it to skip the all-reduce (a forward outside it syncs "
        "the next backward anyway). Use it for all micro-batches but the last.",
        "contextlib.nullcontext() is the 'no context' for the last micro-batch.",
    ),
)
