from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="activation-checkpointing",
    title="Activation checkpointing on a block",
    topic="memory",
    summary="CheckpointedBlock(block): a module whose forward runs block so that its "
    "intermediate activations are not kept for backward but recomputed during it.",
    file="ckpt_block.py",
    checks=(
        (
            "same_gradients",
            "input and parameter gradients equal the plain block's; the block holds dropout "
            "(training mode), so the rerun must draw the forward's random numbers; also for "
            "an input that does not require grad (raw data into a first block)",
        ),
        ("saves_less", "bytes saved for backward drop to about the block's input"),
        ("recomputes", "the block's forward runs again during backward"),
    ),
    hints=(
        "torch.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False) runs fn without "
        "saving its activations and reruns it in backward.",
        "Under torch.no_grad() nothing is saved, but nothing gets gradients either.",
    ),
    world_size=0,
)
