"""equivariance: rotate the input point cloud; invariant and equivariant heads hold, broken
layers (raw coordinates, per-coordinate normalisation) are caught by the same test."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="equivariance",
    group="correctness",
    summary=(
        "An EGNN (messages from distances, coordinate updates along relative positions) on "
        "random point clouds with a scalar head (sum-pooled, must be invariant) and a vector "
        "head (displacements scaled by the RMS of their norms, must rotate with the input). "
        "The test rotates and translates the input and compares outputs (relative max error, "
        "float32). The same test must catch layers that break equivariance: raw coordinates "
        "in the scalar features, batch norm per coordinate, LayerNorm over xyz."
    ),
    params=(
        ParamSpec("seed", "int", 0, "data, rotation and init seed", minimum=0),
        ParamSpec("tolerance", "float", 1e-4, "relative error allowed (float32)", minimum=0.0),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: raw_coords feeds absolute coordinates into the model's scalar features; "
            "coord_batchnorm normalises the model's vectors per coordinate over the batch; "
            "identity_rotation makes the test rotate by the identity (a test that cannot fail)",
            choices=("none", "raw_coords", "coord_batchnorm", "identity_rotation"),
        ),
    ),
    observations=(
        ObservationSpec("model", "the model under test"),
        ObservationSpec("model.*", "invariant_err, equivariant_err, raw_coords, vector_norm"),
        ObservationSpec("references.*", "a known-broken variant (the test must flag it)"),
        ObservationSpec(
            "references.*.*", "references.<raw_coords|coord_batchnorm|coord_layernorm>.<field>"
        ),
        ObservationSpec("rotation_angle_deg", "angle of the test rotation", "deg"),
        ObservationSpec("translation_norm", "length of the test translation"),
        ObservationSpec("weakest_catch", "smallest error among the broken references' outputs"),
    ),
    checks=(
        CheckSpec("invariant_output_invariant", "scalar output equal within tolerance"),
        CheckSpec("vector_output_equivariant", "vector output rotates with the input"),
        CheckSpec("test_catches_broken_layers", "each broken reference errs > 100 x tolerance"),
    ),
    default_world_size=1,
    min_world_size=1,
    timeout_s=180.0,
)
