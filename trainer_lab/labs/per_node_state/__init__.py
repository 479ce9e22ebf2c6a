"""per-node-state: two emulated nodes x 2 processes on torchrun's elastic agent (world size 4).
Shows what each worker sees (LOCAL_RANK, GROUP_RANK, RANK), that a "log on rank 0" guard written
with LOCAL_RANK logs once per node, and that a checkpoint LOCAL_RANK 0 wrote to a node-local
folder breaks the resume once node 1 is replaced by a fresh node (empty local folder), where one
RANK 0 wrote to shared storage resumes every rank at the same step."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec
from trainer_lab.cluster.nodes import NODES_KEY

SPEC = LabSpec(
    name="per-node-state",
    group="failures",
    summary=(
        "Two nodes x 2 processes (world size 4; world size 2: one process per node). Each node "
        "has its own node-local folder. Workers report LOCAL_RANK, GROUP_RANK and RANK, log "
        "through a rank-0 guard written with LOCAL_RANK and with RANK, and save a checkpoint "
        "both ways. Node 1 is killed and replaced by a fresh node with an empty local folder: "
        "the ranks resume from the store the script trusts."
    ),
    params=(
        ParamSpec("steps", "int", 8, "training steps", minimum=4, maximum=100),
        ParamSpec(
            "kill_after_step", "int", 3, "replace node 1 once every rank passed it", minimum=1
        ),
        ParamSpec("checkpoint_every", "int", 2, "save every N steps", minimum=1),
        ParamSpec(
            "log_guard",
            "choice",
            "RANK",
            "the script's 'log on rank 0' guard; debug LOCAL_RANK: one line per node",
            choices=("RANK", "LOCAL_RANK"),
        ),
        ParamSpec(
            "checkpoint",
            "choice",
            "shared",
            "the store the script saves to and resumes from: shared (RANK 0 writes) or debug "
            "node_local (LOCAL_RANK 0 writes its node's folder)",
            choices=("shared", "node_local"),
        ),
        ParamSpec("join_timeout_s", "int", 20, "c10d rendezvous join_timeout", minimum=1),
        ParamSpec("loopback", "bool", False, "run on loopback addresses even as root"),
    ),
    observations=(
        ObservationSpec("mode", "netns (namespaces on a bridge) or loopback"),
        ObservationSpec("mode_note", "why loopback mode ran (empty in netns mode)"),
        ObservationSpec("nproc_per_node", "processes per node (world size / 2)"),
        ObservationSpec("env.*.local_rank", "LOCAL_RANK each global rank (rankN) saw"),
        ObservationSpec("env.*.group_rank", "GROUP_RANK (node rank) each global rank saw"),
        ObservationSpec("env.*.node", "the emulated node each global rank ran on"),
        ObservationSpec("log_lines.local_rank", "lines the LOCAL_RANK == 0 guard logged"),
        ObservationSpec("log_lines.rank", "lines the RANK == 0 guard logged"),
        ObservationSpec("log_lines.script", "lines the script's own guard (log_guard) logged"),
        ObservationSpec("saved_before_kill.node_local", "ranks that wrote a node-local save"),
        ObservationSpec("saved_before_kill.shared", "ranks that wrote a shared save"),
        ObservationSpec("killed_after_step", "node 1's last step when it was killed"),
        ObservationSpec("last_saved_step", "the last step saved before the kill"),
        ObservationSpec(
            "resumed.*.*", "after the replacement: the step rank N found in a store (-1: none)"
        ),
        ObservationSpec(
            "ranks_without_checkpoint.node_local", "ranks that found no node-local save"
        ),
        ObservationSpec("ranks_without_checkpoint.shared", "ranks that found no shared save"),
        ObservationSpec("steps_agree.node_local", "every rank found the same node-local step"),
        ObservationSpec("steps_agree.shared", "every rank found the same shared step"),
        ObservationSpec("resumed_world_size", "ranks that reported after the replacement"),
        ObservationSpec("after_replacement", "what the restarted job did: finished or mismatch"),
        ObservationSpec("final_step", "the last step reached after the replacement"),
        ObservationSpec("duration_s", "wall time from the first agent start", "s"),
    ),
    checks=(
        CheckSpec("rank_zero_logs_once", "the script's rank-0 guard logged one line in the job"),
        CheckSpec(
            "resume_consistent",
            "after node 1 was replaced every rank resumed at the last saved step and finished",
        ),
    ),
    default_world_size=4,
    min_world_size=2,
    max_world_size=4,
    extra={NODES_KEY: 2},  # an emulated cluster of two nodes, world size / 2 processes each
    timeout_s=90.0,
)
