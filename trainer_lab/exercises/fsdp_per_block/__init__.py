from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="fsdp-per-block",
    title="FSDP2: one fully_shard group per block",
    topic="sharding",
    summary="Write shard(model, mesh): apply fully_shard to every block in model.blocks, then "
    "to the root, so each rank holds 1/W of the parameters and forward gathers one block at a "
    "time.",
    file="shard.py",
    checks=(
        ("sharded_at_rest", "each rank's local shards hold about 1/W of the parameters"),
        ("one_block_at_a_time", "the gathered parameter bytes during forward stay near one block"),
        ("matches_reference", "losses and parameters equal one process training on all the data"),
    ),
    hints=(
        "fully_shard(module, mesh=mesh) makes one group: its parameters are gathered together "
        "before its forward and freed after it.",
        "Wrap bottom-up: each block in model.blocks first, the root model last.",
        "The root group owns whatever no block owns (here the head); without it nobody averages "
        "those gradients.",
    ),
    timeout_s=60.0,  # importing FSDP2 and DTensor alone takes seconds
)
