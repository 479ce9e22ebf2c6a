from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="sampler-partition",
    title="Partition the data with DistributedSampler and set_epoch",
    topic="data loading",
    summary="Write epoch_batches(dataset, epoch, batch_size, loader_state): yield this rank's "
    "batches for one epoch so that the ranks split every epoch exactly once, in a new order "
    "each epoch.",
    file="partition.py",
    checks=(
        ("exactly_once", "in every epoch each id is seen by exactly one rank, none missing"),
        ("new_order", "epoch 1 visits the ids in another order than epoch 0"),
        ("same_split_per_epoch", "a rerun of the same epoch gives each rank the same ids"),
    ),
    hints=(
        "torch.utils.data.distributed.DistributedSampler(dataset, shuffle=True, seed=...) gives "
        "each rank a disjoint slice; pass it as DataLoader(sampler=...) and drop shuffle=True.",
        "The sampler shuffles with seed + epoch: call sampler.set_epoch(epoch) before iterating, "
        "or every epoch repeats epoch 0's order.",
        "Build the sampler and loader once and keep them in loader_state (a dict the checker "
        "passes back each epoch), as a training loop builds them once.",
    ),
)
