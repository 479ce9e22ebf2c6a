from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="full-state-checkpoint",
    title="Checkpoint everything a bit-exact resume needs",
    topic="checkpointing",
    summary="save(path, model, optimizer, scheduler, scaler, sampler) and load(path, ...same): "
    "a run with fp16 autocast, dropout and a shuffling sampler, stopped mid-epoch after step K "
    "and resumed from the file in fresh objects, must continue exactly like the uninterrupted "
    "run.",
    file="checkpoint.py",
    checks=(
        ("losses_match", "every loss after the resume equals the uninterrupted run's, bit for bit"),
        ("optimizer_state", "after load the optimizer holds the saved Adam moments and step"),
        ("lr_continues", "after load the scheduler's LR is the one at save, and it goes on"),
        (
            "scaler_continues",
            "after load the GradScaler's scale and growth count are those at save, and the "
            "scale grows and backs off as in the uninterrupted run",
        ),
        (
            "sampler_resumes",
            "after load the batches fetch the ids the uninterrupted run fetched: the rest of "
            "the epoch, none replayed, none skipped",
        ),
        ("rng_continues", "after load torch and python random draw what the run would have drawn"),
    ),
    hints=(
        "model, optimizer, scheduler, the GradScaler and this sampler each have state_dict() / "
        "load_state_dict(): put all five in one dict and torch.save it.",
        "Dropout draws from torch's global generator and the loop from python's random: save "
        "torch.get_rng_state() and random.getstate(), restore them with torch.set_rng_state "
        "and random.setstate.",
        "Restore the RNG states last, after building or loading anything else that might draw "
        "random numbers. The scaler's state is more than its scale (the count of steps since "
        "it last grew), and the sampler's is its epoch and how far into it the run got.",
    ),
    world_size=0,
)
