from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="bucketed-allreduce",
    title="Bucketed all-reduce overlapped with backward",
    topic="data parallel",
    summary="BucketedAllReduce(model, bucket_bytes): gradient hooks pack the gradients into "
    "buckets of at most bucket_bytes and start an async all_reduce on each bucket as soon as it "
    "is full, during backward; wait() finishes them and leaves the average in every .grad.",
    file="buckets.py",
    checks=(
        ("matches_reference", "the parameters equal one process training on the whole batch"),
        (
            "bucket_count",
            "one all-reduce per bucket of <= bucket_bytes, not one per parameter; a bucket is "
            "launched only when the next gradient would not fit (one that the gradients fill "
            "exactly is launched whole), so two consecutive all-reduces never fit in one "
            "bucket; the gradients may be packed in arrival order or by a plan over the "
            "parameters",
        ),
        ("overlaps_backward", "the first all-reduce starts while gradients are still arriving"),
    ),
    hints=(
        "p.register_post_accumulate_grad_hook(fn) calls fn(p) once p.grad is complete; "
        "gradients arrive roughly from the last layer to the first.",
        "When the next gradient would not fit, torch.cat the bucket's gradients and "
        "dist.all_reduce(flat, async_op=True); keep (work, flat, params). Launch the last "
        "bucket when every parameter's gradient has arrived.",
        "In wait(): work.wait(), divide by dist.get_world_size(), copy the slices back into each "
        ".grad, and reset the bucket state for the next step.",
    ),
)
