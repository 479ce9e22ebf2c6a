from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="ddp-by-hand",
    title="DDP by hand: average the gradients",
    topic="data parallel",
    summary="Write sync_gradients(model): after backward, every rank's gradients become the "
    "average over all ranks, so one optimizer step keeps the replicas identical.",
    file="sync.py",
    checks=(
        ("params_in_sync", "after 3 steps every rank holds bit-identical parameters"),
        ("matches_reference", "the parameters equal one process training on the whole batch"),
    ),
    hints=(
        "torch.distributed.all_reduce sums a tensor in place across ranks.",
        "A sum over W ranks is W times the average: divide by dist.get_world_size().",
        "Loop over model.parameters(); skip a parameter whose .grad is None.",
    ),
)
