"""sampler: an exactly-once proof from the logged sample ids (torch-free driver)."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="sampler",
    group="correctness",
    summary=(
        "Exactly-once from logged sample ids: ranks disjoint within a step, every id once per "
        "epoch (padding / drop_last accounted), set_epoch reshuffles, a mid-epoch resume with "
        "sampler state continues the exact sequence; without it, duplicates and skips."
    ),
    params=(
        ParamSpec(
            "samples_per_rank",
            "int",
            15,
            "dataset size is samples_per_rank * W + 1, so padding/dropping always occurs",
            minimum=2,
            maximum=200,
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: skip_sampler_state resumes without sampler state, skip_set_epoch never "
            "calls set_epoch; the matching checks must then fail",
            choices=("none", "skip_sampler_state", "skip_set_epoch"),
        ),
    ),
    observations=(
        ObservationSpec("dataset_size", "samples in the dataset", derived=True),
        ObservationSpec("epoch_steps", "steps per epoch", "steps", derived=True),
        ObservationSpec("overlapping_steps", "steps where two ranks got the same id", "steps"),
        ObservationSpec("padded_duplicates", "ids seen twice per epoch (sampler padding)"),
        ObservationSpec(
            "expected_padding", "padding the sampler must add (W - n % W) % W", derived=True
        ),
        ObservationSpec("missing_ids", "ids never seen in an epoch without drop_last"),
        ObservationSpec("drop_last.dropped", "ids never seen in the drop_last epoch"),
        ObservationSpec(
            "drop_last.expected_dropped", "sampler tail + partial last batches", derived=True
        ),
        ObservationSpec("drop_last.duplicates", "ids seen twice in the drop_last epoch"),
        ObservationSpec("set_epoch.orders_differ", "epoch 0 and 1 orders differ (bool)"),
        ObservationSpec("no_set_epoch.orders_identical", "without set_epoch: same order (bool)"),
        ObservationSpec("resume.step", "the checkpoint step (mid-epoch)", "steps", derived=True),
        ObservationSpec("resume.sequence_matches", "ids after resume == uninterrupted (bool)"),
        ObservationSpec("resume.duplicated", "ids seen twice in the resumed epoch"),
        ObservationSpec("resume.skipped", "ids never seen in the resumed epoch"),
        ObservationSpec("no_sampler_state.duplicated", "resume without sampler state"),
        ObservationSpec("no_sampler_state.skipped", "resume without sampler state"),
        ObservationSpec("no_sampler_state.sequence_matches", "ids after resume match (bool)"),
    ),
    checks=(
        CheckSpec("ranks_disjoint_within_step", "no id on two ranks in the same step"),
        CheckSpec("epoch_exactly_once", "every id once per epoch; duplicates == padding"),
        CheckSpec("drop_last_accounted", "no duplicates; dropped == sampler tail + partial batch"),
        CheckSpec("set_epoch_reshuffles", "set_epoch changes the order, forgetting it repeats it"),
        CheckSpec("resume_continues_sequence", "resume with sampler state: exact id sequence"),
        CheckSpec("resume_exactly_once", "the resumed epoch still sees every id exactly once"),
        CheckSpec("missing_state_detected", "resume without sampler state duplicates and skips"),
    ),
    timeout_s=90.0,
)
