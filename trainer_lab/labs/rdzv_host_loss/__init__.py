"""rdzv-host-loss: node 0 hosts the c10d rendezvous store in its torchrun agent; killing that
agent (and its worker) ends the job on node 1 too, even with --nnodes 1:2 and restarts left,
because the store is not fault tolerant. Measures the time to fail and what node 1's agent says."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec
from trainer_lab.cluster.nodes import NODES_KEY

SPEC = LabSpec(
    name="rdzv-host-loss",
    group="failures",
    summary=(
        "Two nodes x 1 process on torchrun's elastic agent, c10d rendezvous hosted by node 0's "
        "agent. Node 0's agent and worker are SIGKILLed mid-run: node 1's all_reduce fails, its "
        "agent tries to rendezvous again, cannot reach the store, and the job ends although "
        "--nnodes 1:2 and --max-restarts would allow it to go on."
    ),
    params=(
        ParamSpec("steps", "int", 14, "optimizer steps", minimum=4, maximum=100),
        ParamSpec("kill_after_step", "int", 5, "kill once both ranks passed it", minimum=1),
        ParamSpec(
            "kill_node",
            "int",
            0,
            "the node whose agent and worker are killed; debug 1: the store's host survives "
            "and the job goes on, so job_ended must fail",
            minimum=0,
            maximum=1,
        ),
        ParamSpec("max_restarts", "int", 1, "torchrun --max-restarts", minimum=0, maximum=5),
        ParamSpec("join_timeout_s", "int", 8, "c10d rendezvous join_timeout", minimum=1),
        ParamSpec("loopback", "bool", False, "run on loopback addresses even as root"),
    ),
    observations=(
        ObservationSpec("mode", "netns (namespaces on a bridge) or loopback"),
        ObservationSpec("mode_note", "why loopback mode ran (empty in netns mode)"),
        ObservationSpec("killed_after_step", "the killed node's last step"),
        ObservationSpec("survivor_error", "the survivor's collective error: peer_gone, timeout"),
        ObservationSpec("survivor_error_s", "kill -> the survivor's collective error", "s"),
        ObservationSpec("survivor_restarts", "restarts of the survivor's worker"),
        ObservationSpec("survivor_final_step", "the last step the survivor reached"),
        ObservationSpec(
            "survivor_agent_end",
            "how the survivor's agent ended: finished, rendezvous_error, rendezvous_timeout, "
            "worker_failed, running",
        ),
        ObservationSpec("survivor_agent_exit", "the survivor's agent exit code"),
        ObservationSpec("survivor_agent_error", "the last exception its agent's log names"),
        ObservationSpec("time_to_fail_s", "kill -> the survivor's agent exited", "s"),
        ObservationSpec("duration_s", "wall time from the first agent start", "s"),
    ),
    checks=(
        CheckSpec("survivor_saw_collective_error", "the survivor's all_reduce failed"),
        CheckSpec("job_ended", "the survivor's agent exited with an error, never restarting"),
        CheckSpec("store_loss_named", "the survivor's agent failed in the rendezvous"),
    ),
    default_world_size=2,
    min_world_size=2,
    max_world_size=2,
    extra={NODES_KEY: 2},  # an emulated cluster of two nodes, one process each
    timeout_s=60.0,
)
