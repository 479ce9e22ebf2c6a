"""checkpoint-atomicity: a rank SIGKILLed in the middle of a save never leaves a checkpoint
that gets picked; the latest complete one is always found and loads; a checkpoint from another
config is refused with a message naming the difference."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="checkpoint-atomicity",
    group="failures",
    summary=(
        "Over N trials a rank is SIGKILLed in the middle of a checkpoint save (a partial rank "
        "or shared file, a partial meta.json, before or after the commit rename; random stage, "
        "byte offset and save). After each kill torchrun restarts the job: the latest complete "
        "checkpoint is always found and loads, a torn one is never picked. A checkpoint of "
        "another config is refused with a clear message. Save latency is reported."
    ),
    params=(
        ParamSpec(
            "trials",
            "int",
            2,
            "saves killed (one per torchrun attempt; each costs a restart, ~6 s). The stage "
            "order is a seeded shuffle without repeats: the default seed's two trials kill "
            "after the commit rename and in the middle of a rank file",
            minimum=1,
            maximum=10,
        ),
        ParamSpec("saves_per_attempt", "int", 3, "saves per attempt", minimum=1, maximum=20),
        ParamSpec("seed", "int", 7, "seed of the kill points"),
        ParamSpec("hidden", "int", 256, "MLP width (checkpoint size)", minimum=4, maximum=4096),
        ParamSpec(
            "incompatible",
            "choice",
            "hidden",
            "the field changed in the config that tries to load the last checkpoint; debug "
            "steps: a run-length field, not part of the identity, so the load is (rightly) "
            "accepted and the refusal check fails",
            choices=("hidden", "lr", "steps"),
        ),
        ParamSpec(
            "picker",
            "choice",
            "latest_complete",
            "latest_complete: the trainer's rule (highest committed step-N dir); debug "
            "newest_dir: the most recently modified directory, torn or not",
            choices=("latest_complete", "newest_dir"),
        ),
        ParamSpec(
            "kill",
            "choice",
            "mid_save",
            "mid_save: the victim dies inside the planned save; debug never: the kill is armed "
            "for a save that never comes, so no rank dies, torchrun restarts nothing and "
            "every_kill_landed must fail",
            choices=("mid_save", "never"),
        ),
    ),
    observations=(
        ObservationSpec("trials", "kills planned"),
        ObservationSpec("restarts", "torchrun restarts"),
        ObservationSpec("kills", "where each kill landed: stage, byte fraction, rank, file"),
        ObservationSpec("torn_dirs_seen", "directories that were torn or uncommitted at a restart"),
        ObservationSpec("picks", "per restart: picked dir, the newest complete dir, loaded"),
        ObservationSpec("wrong_picks", "restarts that did not pick the newest complete dir"),
        ObservationSpec("torn_picks", "restarts that picked a torn or uncommitted dir"),
        ObservationSpec("mismatch.refused", "a checkpoint of another config was refused"),
        ObservationSpec("mismatch.message", "the refusal message"),
        ObservationSpec("save_latency_ms.median", "median save time (rank 0)", "ms"),
        ObservationSpec("save_latency_ms.max", "slowest save (rank 0)", "ms"),
        ObservationSpec("checkpoint_bytes", "bytes of one committed checkpoint", "B"),
    ),
    checks=(
        CheckSpec("every_kill_landed", "each trial killed a rank inside a save"),
        CheckSpec("latest_complete_always_found", "each restart loaded the newest complete dir"),
        CheckSpec("torn_never_picked", "no restart picked a torn or uncommitted dir"),
        CheckSpec("incompatible_config_refused", "other config: refused, naming the field"),
    ),
    timeout_s=120.0,
)
