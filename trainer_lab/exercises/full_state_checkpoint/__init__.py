from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="full-state-checkpoint",
    title="Checkpoint everything a bit-exact resume needs",
    topic="checkpointing",
    summary="save(path, model, optimizer, scheduler) and load(path, model, optimizer, "
    "scheduler): a run with dropout stopped after step K and resumed from the file in fresh "
    "objects must continue exactly like the uninterrupted run.",
    file="checkpoint.py",
    checks=(
        ("losses_match", "every loss after the resume equals the uninterrupted run's, bit for bit"),
        ("optimizer_state", "after load the optimizer holds the saved Adam moments and step"),
        ("lr_continues", "after load the scheduler's LR is the one at save, and it goes on"),
        ("rng_continues", "after load torch and python random draw what the run would have drawn"),
    ),
    hints=(
        "model, optimizer and scheduler each have state_dict() / load_state_dict(): put all "
        "three in one dict and torch.save it.",
        "Dropout draws from torch's global generator and the loop from python's random: save "
        "torch.get_rng_state() and random.getstate(), restore them with torch.set_rng_state "
        "and random.setstate.",
        "Restore the RNG states last, after building or loading anything else that might draw "
        "random numbers.",
    ),
    world_size=0,
)
