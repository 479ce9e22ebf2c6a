from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="zero1-sharded-optimizer",
    title="ZeRO-1: shard the optimizer state",
    topic="sharding",
    summary="ShardedAdam(params, lr): each rank keeps Adam state only for its share of the "
    "parameters, steps that share, then every rank gets the updated parameters. The shares "
    "are about equal in size (by number of values, at most 3/4 of the state on one rank). "
    "torch.optim.Adam, a hand-written Adam or torch's ZeroRedundancyOptimizer are all fine.",
    file="zero1.py",
    checks=(
        (
            "state_sharded",
            "each rank's optimizer state (every tensor it holds besides the parameters and "
            "gradients) is about 1/W of a full Adam state, at most 3/4",
        ),
        ("params_in_sync", "after the steps all ranks hold identical parameters"),
        ("matches_adam", "the parameters equal plain Adam's on the same gradients"),
    ),
    hints=(
        "Give each parameter to the rank holding the fewest values so far (shards of about "
        "equal size); build torch.optim.Adam over your own parameters only.",
        "After your Adam step, dist.broadcast(p.data, src=owner) for every parameter, in the "
        "same order on every rank.",
        "The gradients arrive already averaged (DDP); step() is all that is left to write.",
    ),
)
