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
            "each rank's optimizer state is about 1/W of a full Adam state (2 values per "
            "parameter), at most 3/4. Optimizer state is every tensor the optimizer object or "
            "the module's globals hold besides the parameters, the gradients and copies of "
            "them (a master copy of a parameter shard, a gather buffer: tensors holding only "
            "parameter or gradient values and padding zeros), that is Adam's moments",
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
