"""split-leakage: test scores inflated by near-duplicates across a random vs a group split."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="split-leakage",
    group="correctness",
    summary=(
        "Synthetic molecules in series of near-duplicates (analogues of one scaffold); "
        "activity = a part that transfers across series + a series-specific offset. The same "
        "MLP is scored on a random split and on a group (scaffold) split that keeps every "
        "series on one side; a 1-nearest-neighbour lookup on the training set is the leak "
        "detector. The random split's R² is inflated by memorised series, and 1-NN scores "
        "almost as well there."
    ),
    params=(
        ParamSpec("steps", "int", 300, "full-batch Adam steps per fit", minimum=50, maximum=3000),
        ParamSpec("seed", "int", 0, "data, split and init seed", minimum=0),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: leaky_group_split splits rows instead of groups; no_series makes every "
            "molecule its own series (no near-duplicates)",
            choices=("none", "leaky_group_split", "no_series"),
        ),
    ),
    observations=(
        ObservationSpec("molecules", "rows in the dataset"),
        ObservationSpec("groups", "series (scaffold groups)"),
        ObservationSpec("random", "scores on the random split"),
        ObservationSpec("group", "scores on the group (scaffold) split"),
        ObservationSpec("*.model_r2", "test R² of the MLP"),
        ObservationSpec("*.nn_r2", "test R² of 1-nearest-neighbour lookup in the training set"),
        ObservationSpec("*.median_nn_distance", "median distance of a test row to training"),
        ObservationSpec("*.shared_groups", "series with rows on both sides of the split"),
        ObservationSpec("*.test_rows", "rows in the test set"),
        ObservationSpec("r2_inflation", "random-split R² minus group-split R² (the MLP)"),
    ),
    checks=(
        CheckSpec("group_split_disjoint", "no series on both sides of the group split"),
        CheckSpec("random_split_inflated", "the random split's R² is >= 0.3 above the group's"),
        CheckSpec(
            "nn_lookup_exposes_leak",
            "1-NN is within 0.1 of the MLP on the random split and far below on the group split",
        ),
    ),
    default_world_size=1,
    min_world_size=1,
    timeout_s=180.0,
)
