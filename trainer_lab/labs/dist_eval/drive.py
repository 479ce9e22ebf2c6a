"""dist-eval lab: the driver (torch-free): each method against one pass over the whole set."""

from __future__ import annotations

from trainer_lab.context import LabContext
from trainer_lab.labs.dist_eval import METHODS

# A gloo/CPU lab on any machine: its collectives use CPU tensors, and the numbers it reports
# should not change with the hardware it happens to run on.
CPU_ONLY = {"CUDA_VISIBLE_DEVICES": ""}


def drive(run: LabContext) -> None:
    run.plan(1)
    run.launch(
        "trainer_lab.labs.dist_eval.worker:main",
        {**run.params, "collective_timeout_s": 60},
        env=CPU_ONLY,
    )
    r = run.report("dist_eval")
    n, reference = r["n"], r["reference"]
    run.observe("dataset_size", n)
    run.observe("reference_accuracy", round(reference, 6))
    found = {}
    for method in METHODS:
        got = r["results"][method]
        error = abs(got["accuracy"] - reference)
        found[method] = (got["accuracy"], error, got["counted"])
        run.observe(f"{method}.accuracy", round(got["accuracy"], 6))
        run.observe(f"{method}.abs_error", round(error, 6))
        run.observe(f"{method}.counted", got["counted"])
        run.observe(f"{method}.counted_minus_dataset", got["counted"] - n)
        run.observe(f"{method}.per_rank_counts", [rank[method] for rank in r["per_rank"]])
    for method, name in (
        ("exact", "exact_matches_reference"),
        ("dedup", "dedup_matches_reference"),
    ):
        acc, error, counted = found[method]
        run.check(
            name,
            error == 0 and counted == n,
            f"{method}: accuracy {acc:.6f} over {counted} samples; one pass over all {n}: "
            f"{reference:.6f}",
        )
    acc, error, counted = found["padded"]
    run.check(
        "padding_biases_metric",
        counted > n and error > 0,
        f"padded sampler: {counted} samples counted for {n} ({counted - n} twice), accuracy "
        f"{acc:.6f} against {reference:.6f}",
    )
