"""partition: node 1's link to the bridge goes down while both ranks are in all_reduces. Nothing
closes the TCP connections, so nobody sees an error until gloo's timeout: then every rank times
out; node 0's agent reports its failed worker, node 1's agent, cut off from the store,
hangs until something kills it. After the timeout each rank calls monitored_barrier on a second
gloo group: rank 0's error names the rank that did not arrive, which the plain all_reduce's
timeout does not. Needs network namespaces (root)."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec
from trainer_lab.cluster.nodes import NODES_KEY

SPEC = LabSpec(
    name="partition",
    group="failures",
    summary=(
        "Two nodes x 1 process on torchrun's elastic agent; node 1's link is taken down "
        "(ip link set down) mid-run. The all_reduce does not fail at once: each rank times out "
        "after the process group's timeout; node 0's agent reports its failed worker, node 1's "
        "agent, cut off from the store it must reach, hangs. A monitored_barrier after the "
        "timeout names the cut-off rank; the all_reduce's own error names none."
    ),
    params=(
        ParamSpec("steps", "int", 40, "optimizer steps", minimum=4, maximum=200),
        ParamSpec("cut_after_step", "int", 4, "cut once both ranks passed it", minimum=1),
        ParamSpec(
            "pg_timeout_s",
            "float",
            3.0,
            "init_process_group(timeout=...): how long a collective waits",
            minimum=1.0,
            maximum=30.0,
        ),
        ParamSpec(
            "cut",
            "bool",
            True,
            "take the link down; debug false: no partition, the job finishes and every "
            "check must fail",
        ),
        ParamSpec(
            "agent_wait_s",
            "float",
            5.0,
            "after node 0's agent ended, how long node 1's agent is given to end too",
            minimum=0.5,
            maximum=30.0,
        ),
        ParamSpec("max_restarts", "int", 0, "torchrun --max-restarts", minimum=0, maximum=5),
        ParamSpec(
            "monitored_barrier",
            "bool",
            True,
            "after the all_reduce fails, each rank calls monitored_barrier (wait_all_ranks) on a "
            "second gloo group; debug false: no barrier, nothing names the missing rank",
        ),
    ),
    observations=(
        ObservationSpec("mode", "netns (namespaces on a bridge); loopback cannot cut a link"),
        ObservationSpec("mode_note", "why loopback mode ran (empty in netns mode)"),
        ObservationSpec("cut_after_step", "node 1's last step when its link went down"),
        ObservationSpec("error.node0", "node 0's collective error: timeout, peer_gone, other"),
        ObservationSpec("error.node1", "node 1's collective error: timeout, peer_gone, other"),
        ObservationSpec("error_s.node0", "cut -> node 0's collective error", "s"),
        ObservationSpec("error_s.node1", "cut -> node 1's collective error", "s"),
        ObservationSpec(
            "error_over_timeout.node0", "node 0's error time / the process group's timeout"
        ),
        ObservationSpec(
            "error_over_timeout.node1", "node 1's error time / the process group's timeout"
        ),
        ObservationSpec("error_message.node0", "node 0's collective error, as raised"),
        ObservationSpec("agent_end.node0", "how node 0's agent ended"),
        ObservationSpec("agent_end.node1", "how node 1's agent ended"),
        ObservationSpec("agent_end_s.node0", "cut -> node 0's agent exited", "s"),
        ObservationSpec("agent_end_s.node1", "cut -> node 1's agent exited", "s"),
        ObservationSpec("final_step", "the last step node 0 reached"),
        ObservationSpec("cut_off_rank", "RANK of node 1's worker (the one behind the cut)"),
        ObservationSpec(
            "barrier_named.*",
            "ranks node N's monitored_barrier error names: node 0 those that did not arrive, "
            "node 1 the rank whose logs to check",
        ),
        ObservationSpec("barrier_message.*", "node N's monitored_barrier error, as raised"),
        ObservationSpec("barrier_error_s.*", "cut -> node N's monitored_barrier error", "s"),
        ObservationSpec(
            "all_reduce_named_a_rank.*", "whether node N's plain all_reduce error names a rank"
        ),
        ObservationSpec("duration_s", "wall time from the first agent start", "s"),
    ),
    checks=(
        CheckSpec("every_rank_timed_out", "each rank's all_reduce raised a timeout"),
        CheckSpec("waited_for_the_timeout", "no rank failed before 0.8 x the timeout"),
        CheckSpec("store_side_agent_reported_failure", "node 0's agent ended on its failed worker"),
        CheckSpec(
            "partitioned_agent_stuck",
            "node 1's agent, cut off from the store, still runs agent_wait_s after node 0's ended",
        ),
        CheckSpec(
            "monitored_barrier_named_the_cut_off_rank",
            "rank 0's monitored_barrier error names exactly the cut-off rank; its all_reduce "
            "error names none",
        ),
    ),
    default_world_size=2,
    min_world_size=2,
    max_world_size=2,
    extra={NODES_KEY: 2},  # an emulated cluster of two nodes, one process each
    timeout_s=90.0,  # the monitored_barrier waits a second timeout; slow agent starts under load
)
