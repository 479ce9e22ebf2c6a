from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="uneven-join",
    title="Uneven inputs with Join",
    topic="data parallel",
    summary="train_epoch(ddp_model, optimizer, batches): train on all of this rank's batches; "
    "rank 1 has more batches than rank 0. Finish without hanging and with replicas in sync.",
    file="uneven.py",
    checks=(
        ("no_hang", "every rank finishes its batches (DDP's all-reduce times out in 4 s)"),
        ("all_batches_used", "each rank ran forward on every one of its batches"),
        ("params_in_sync", "all ranks hold identical parameters afterwards"),
    ),
    hints=(
        "The rank that runs out first stops joining DDP's gradient all-reduce; its peer waits.",
        "torch.distributed.algorithms.join.Join([ddp_model]) shadows the missing all-reduces "
        "of a rank that finished early: wrap the whole loop in `with Join([ddp_model]):`.",
    ),
)
