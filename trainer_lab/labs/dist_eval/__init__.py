"""dist-eval: distributed evaluation that counts each sample once, and two ways it does not."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

METHODS = ("padded", "mean_of_means", "exact", "dedup")

SPEC = LabSpec(
    name="dist-eval",
    group="correctness",
    summary=(
        "A fixed classifier evaluated on W ranks over a set of per_rank * W + 1 samples (never "
        "divisible by W), four ways, each against a single pass over the whole set: "
        "DistributedSampler with its default padding and summed counts (some samples count "
        "twice), unpadded shards whose per-rank accuracies are averaged (uneven shards weigh "
        "the same), unpadded shards with summed correct and total counts, and the padded "
        "sampler with (id, correct) pairs gathered and de-duplicated by id."
    ),
    params=(
        ParamSpec(
            "per_rank", "int", 6, "samples per rank, plus one left over", minimum=2, maximum=500
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: exact_with_sampler shards the exact method with the padding sampler; "
            "no_dedup gathers pairs but keeps duplicates; divisible drops the left-over sample",
            choices=("none", "exact_with_sampler", "no_dedup", "divisible"),
        ),
    ),
    observations=(
        ObservationSpec("dataset_size", "samples in the evaluation set", derived=True),
        ObservationSpec("reference_accuracy", "one pass over the whole set"),
        ObservationSpec("*.accuracy", "the method's accuracy"),
        ObservationSpec("*.abs_error", "|accuracy - reference|"),
        ObservationSpec("*.counted", "samples the method counted"),
        ObservationSpec("*.counted_minus_dataset", "counted - dataset size"),
        ObservationSpec("*.per_rank_counts", "samples each rank evaluated"),
    ),
    checks=(
        CheckSpec("exact_matches_reference", "summed counts over unpadded shards: exact"),
        CheckSpec("dedup_matches_reference", "gathered ids, de-duplicated: exact"),
        CheckSpec("padding_biases_metric", "the padding sampler counts extra samples"),
    ),
    timeout_s=90.0,
)
