from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="uneven-join",
    title="Uneven inputs with Join",
    topic="data parallel",
    summary="train_epoch(ddp_model, optimizer, batches): train on all of this rank's batches; "
    "rank 1 has more batches than rank 0. Train on every batch (zero the gradients, "
    "backward, optimizer step) and finish without hanging, with replicas in sync.",
    file="uneven.py",
    checks=(
        ("no_hang", "every rank finishes its batches (DDP's all-reduce times out in 4 s)"),
        (
            "all_batches_used",
            "each rank ran forward on every sample of its batches (how many forward calls it "
            "took is not counted)",
        ),
        ("params_in_sync", "all ranks hold identical parameters afterwards"),
        (
            "matches_reference",
            "the parameters equal one process taking one SGD step per batch on the gradient "
            "summed over the ranks that still have a batch and divided by the world size "
            "(Join's default) or by the number of those ranks",
        ),
    ),
    hints=(
        "The rank that runs out first stops joining DDP's gradient all-reduce; its peer waits.",
        "torch.distributed.algorithms.join.Join([ddp_model]) shadows the missing all-reduces "
        "of a rank that finished early: wrap the whole loop in `with Join([ddp_model]):`.",
    ),
)
