"""first-step: time to first step after a restart; one reader broadcasts the checkpoint."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="first-step",
    group="performance",
    summary=(
        "A restart, phase by phase. The previous job (a fresh interpreter on rank 0: import "
        "torch timed) trains an MLP a few steps and saves model + AdamW state with torch.save. "
        "Then W ranks rendezvous a new process group, build the model, load the checkpoint, "
        "take the first step and steady steps, each phase timed. The load reads the file on "
        "one rank through a counting reader and broadcasts every tensor; each rank reports "
        "digests of its weights and optimizer state against the saved ones. Contrast: every "
        "rank reads the whole file (bytes read x W). Checks rest on bytes and digests; the "
        "timings are observations."
    ),
    params=(
        ParamSpec("hidden", "int", 1024, "MLP hidden width", minimum=16, maximum=8192),
        ParamSpec("depth", "int", 2, "MLP hidden layers", minimum=1, maximum=16),
        ParamSpec("steady_steps", "int", 8, "steps after the first one", minimum=3, maximum=100),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: every_rank_reads loads the whole file on every rank; wrong_source "
            "broadcasts from rank W-1 (which read nothing); skip_optimizer broadcasts the "
            "weights only",
            choices=("none", "every_rank_reads", "wrong_source", "skip_optimizer"),
        ),
    ),
    observations=(
        ObservationSpec("checkpoint.file_bytes", "size of the checkpoint file", "B"),
        ObservationSpec("checkpoint.model_bytes", "tensor bytes of the saved weights", "B"),
        ObservationSpec("checkpoint.optimizer_bytes", "tensor bytes of the saved AdamW state", "B"),
        ObservationSpec("checkpoint.params", "parameters of the model"),
        ObservationSpec("restart.read_per_rank", "bytes each rank read from the file", "B"),
        ObservationSpec("restart.read_total", "bytes read from the file, all ranks", "B"),
        ObservationSpec("restart.read_over_file", "read_total / file_bytes"),
        ObservationSpec("restart.readers", "ranks that read any byte of the file"),
        ObservationSpec("restart.read_calls_per_rank", "read()/readinto() calls per rank"),
        ObservationSpec(
            "restart.rchar_per_rank", "rchar delta (/proc/thread-self/io) around the read", "B"
        ),
        ObservationSpec("restart.broadcast_bytes", "tensor bytes each rank broadcast", "B"),
        ObservationSpec("restart.broadcast_over_state", "broadcast bytes / saved tensor bytes"),
        ObservationSpec(
            "restart.broadcast_over_weights", "broadcast bytes / the saved weights' bytes"
        ),
        ObservationSpec(
            "restart.skeleton_json_bytes", "size of the optimizer skeleton sent as an object", "B"
        ),
        ObservationSpec(
            "restart.ranks_missing_weights", "ranks whose loaded weights differ from the saved"
        ),
        ObservationSpec(
            "restart.ranks_missing_optimizer",
            "ranks whose loaded optimizer state differs from the saved",
        ),
        ObservationSpec(
            "restart.ranks_diverged_after_steps",
            "ranks whose weights differ from rank 0's after the steady steps",
        ),
        ObservationSpec("contrast.read_per_rank", "every rank reads: bytes per rank", "B"),
        ObservationSpec("contrast.read_total", "every rank reads: bytes, all ranks", "B"),
        ObservationSpec("contrast.read_over_file", "every rank reads: read_total / file_bytes"),
        ObservationSpec("contrast.readers", "every rank reads: ranks that read"),
        ObservationSpec("contrast.load_s", "every rank reads: slowest rank's read time", "s"),
        ObservationSpec("phases.import_torch_s", "import torch in a fresh interpreter", "s"),
        ObservationSpec(
            "phases.previous_job_s", "the previous job's subprocess, start to exit", "s"
        ),
        ObservationSpec(
            "phases.process_start_to_task_s",
            "rank process start to the lab's code (init_process_group inside), slowest rank",
            "s",
        ),
        ObservationSpec("phases.new_group_s", "new_group + its first all-reduce, slowest", "s"),
        ObservationSpec("phases.model_build_s", "model + optimizer build, slowest rank", "s"),
        ObservationSpec("phases.checkpoint_load_s", "read + broadcast + load, slowest rank", "s"),
        ObservationSpec("phases.first_step_s", "the first training step, slowest rank", "s"),
        ObservationSpec("phases.steady_step_s", "median later step, slowest rank", "s"),
        ObservationSpec(
            "phases.restart_to_first_step_s",
            "new group + model build + load + first step, slowest rank",
            "s",
        ),
        ObservationSpec("first_over_steady", "first step time / steady step time"),
    ),
    checks=(
        CheckSpec(
            "checkpoint_read_once",
            "one rank reads the file (read bytes ~ file size); the others read nothing",
        ),
        CheckSpec("weights_match_checkpoint", "every rank's weights equal the saved weights"),
        CheckSpec(
            "optimizer_state_matches_checkpoint",
            "every rank's AdamW state (moments, step, hyperparameters) equals the saved state",
        ),
    ),
    default_world_size=2,
    min_world_size=2,
    timeout_s=120.0,
)
