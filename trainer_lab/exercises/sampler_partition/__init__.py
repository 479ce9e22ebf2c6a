from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="sampler-partition",
    title="Partition the data with DistributedSampler and set_epoch",
    topic="data loading",
    summary="Write epoch_batches(dataset, epoch, batch_size, loader_state): yield this rank's "
    "batches of batch_size ids (an epoch's last may hold fewer) for one epoch so that the "
    "ranks split every epoch, in a new order each epoch (a new shuffle of the whole dataset, "
    "so a rank's share changes too). "
    "Every rank gets the same number of ids: when the dataset's size N is not a multiple of "
    "the number of ranks W, pad like DistributedSampler's default (drop_last=False): each rank "
    "gets ceil(N / W) ids, the few extra ones repeat ids of the epoch, and no id is dropped.",
    file="partition.py",
    checks=(
        (
            "exactly_once",
            "in every epoch each id is seen by exactly one rank, none missing, except the "
            "padding: every rank gets ceil(N / W) ids, so W * ceil(N / W) - N ids repeat once",
        ),
        (
            "new_order",
            "epoch 1 visits the ids in another order than epoch 0, and the ranks' shares "
            "change: the whole dataset is shuffled anew, then split",
        ),
        ("same_split_per_epoch", "a rerun of the same epoch gives each rank the same ids"),
        (
            "batch_shape",
            "every batch holds batch_size ids, except an epoch's last, which may hold fewer",
        ),
    ),
    hints=(
        "torch.utils.data.distributed.DistributedSampler(dataset, shuffle=True, seed=...) gives "
        "each rank a disjoint slice, padded to ceil(N / W) ids each; pass it as "
        "DataLoader(sampler=...) and drop shuffle=True. Keep drop_last=False: it would drop the "
        "N % W leftover ids.",
        "The sampler shuffles with seed + epoch: call sampler.set_epoch(epoch) before iterating, "
        "or every epoch repeats epoch 0's order.",
        "Build the sampler and loader once and keep them in loader_state (a dict the checker "
        "passes back each epoch), as a training loop builds them once.",
    ),
)
