"""masked-loss: a sparse multi-task assay matrix trained with a masked loss vs zero-filled gaps."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="masked-loss",
    group="correctness",
    summary=(
        "A multi-task bioassay matrix where each assay was run on a few chemical series only "
        "(synthetic, with the true label of every entry known). The same model is trained "
        "with the loss masked to observed entries and with missing entries filled with 0. "
        "The zero-filled model learns the missingness: its predictions on untested entries "
        "collapse toward 0 and rank them worse, while its accuracy on the filled matrix looks "
        "better than the masked model's."
    ),
    params=(
        ParamSpec("steps", "int", 300, "full-batch Adam steps per model", minimum=50, maximum=3000),
        ParamSpec("seed", "int", 0, "data and init seed", minimum=0),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: mask_ignored trains the 'masked' model on the zero-filled matrix; "
            "mostly_observed observes 90 % of entries at random (little to learn from gaps)",
            choices=("none", "mask_ignored", "mostly_observed"),
        ),
    ),
    observations=(
        ObservationSpec("observed_share", "share of matrix entries with a measured label"),
        ObservationSpec("true_rate_observed", "share of actives among observed test entries"),
        ObservationSpec("true_rate_hidden", "share of actives among hidden (untested) entries"),
        ObservationSpec("test_compounds", "held-out compounds the models are scored on"),
        ObservationSpec("masked", "the masked-loss model on held-out compounds"),
        ObservationSpec("zero_filled", "the zero-filled model on held-out compounds"),
        ObservationSpec("*.auroc_observed", "AUROC over observed entries"),
        ObservationSpec("*.auroc_hidden", "AUROC over hidden entries (true labels known)"),
        ObservationSpec("*.mean_pred_observed", "mean predicted P(active), observed entries"),
        ObservationSpec("*.mean_pred_hidden", "mean predicted P(active), hidden entries"),
        ObservationSpec("*.filled_accuracy", "accuracy against the zero-filled matrix"),
        ObservationSpec("hidden_pred_ratio", "zero-filled / masked mean prediction on hidden"),
        ObservationSpec("auroc_hidden_gain", "masked minus zero-filled AUROC on hidden entries"),
        ObservationSpec("auroc_observed_gain", "the same on observed entries"),
    ),
    checks=(
        CheckSpec("zero_fill_collapses_missing", "zero-filled: P(active) on gaps near 0"),
        CheckSpec("masked_calibrated_on_missing", "masked: P(active) on gaps near the truth"),
        CheckSpec("masked_ranks_missing_better", "masked: higher AUROC on hidden entries"),
        CheckSpec(
            "filled_matrix_flatters_zero_fill", "zero-filled looks better on the filled matrix"
        ),
    ),
    default_world_size=1,
    min_world_size=1,
    timeout_s=180.0,
)
