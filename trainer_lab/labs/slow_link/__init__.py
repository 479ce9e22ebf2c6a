"""slow-link: two emulated nodes x 2 processes on torchrun's elastic agent (gloo, CPU). All-reduce
time against message size within a node and across the link, before and after node 1's link is
limited to rate_mbit (tc tbf: bandwidth only; delay and loss need netem, which this kernel may
lack, and the result says so); an alpha-beta fit per link. Then a flat all_reduce over the four
processes against a hierarchical one (intra-node reduce, one cross-node all_reduce between the
nodes' leaders, intra-node broadcast), by the bytes counted on the link's interface. Without
network namespaces (not root) it runs on loopback addresses: nothing is shaped or counted, and the
checks that need the link say they did not run."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec
from trainer_lab.cluster.nodes import NODES_KEY

SPEC = LabSpec(
    name="slow-link",
    group="performance",
    summary=(
        "Two nodes x 2 processes. Times all_reduce from 16 KiB up within a node and across "
        "nodes (median of reps, slowest rank), then limits node 1's link with tc (tbf) to "
        "rate_mbit and times the cross-node all_reduce again; fits t = alpha + beta * bytes "
        "per link. A flat all_reduce over all four processes is compared with a hierarchical "
        "one (reduce in the node, one exchange between the nodes, broadcast in the node) by "
        "the bytes counted on the link (/sys/class/net/*/statistics) and by time."
    ),
    params=(
        ParamSpec(
            "rate_mbit", "float", 400.0, "node 1's link rate (tc tbf)", minimum=20.0, maximum=2000.0
        ),
        ParamSpec(
            "delay_ms",
            "float",
            0.0,
            "one-way delay added to node 1's link; needs netem (skipped, and said, without it)",
            minimum=0.0,
            maximum=200.0,
        ),
        ParamSpec(
            "max_kib",
            "int",
            8192,
            "largest message (KiB; from 16 KiB by 4x)",
            minimum=256,
            maximum=16384,
        ),
        ParamSpec(
            "reps",
            "int",
            5,
            "timed repetitions per size (the median counts)",
            minimum=3,
            maximum=20,
        ),
        ParamSpec(
            "count_reps",
            "int",
            2,
            "flat and hierarchical all_reduces counted and timed",
            minimum=1,
            maximum=10,
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: no_shaping leaves node 1's link at full speed; cross_first makes the "
            "hierarchical all_reduce cross the link from every process before reducing in the "
            "node; no_broadcast leaves the non-leaders without the sum",
            choices=("none", "no_shaping", "cross_first", "no_broadcast"),
        ),
        ParamSpec("loopback", "bool", False, "run on loopback addresses even as root"),
    ),
    observations=(
        ObservationSpec("mode", "netns (namespaces on a bridge) or loopback (nothing shaped)"),
        ObservationSpec("mode_note", "why loopback mode ran (empty in netns mode)"),
        ObservationSpec("shaping.mode", "what limited node 1's link: tbf, netem or none"),
        ObservationSpec("shaping.netem", "whether this kernel has netem (delay and loss)"),
        ObservationSpec("shaping.note", "what was not applied, and why"),
        ObservationSpec(
            "rate_mbit", "the configured rate of node 1's link", "Mbit/s", derived=True
        ),
        ObservationSpec("sizes_bytes", "message sizes timed", "B", derived=True),
        ObservationSpec(
            "seconds.*",
            "median all_reduce time per size: intra (node 0), cross "
            "(unshaped), shaped (cross-node again once node 1's link is limited; shaping.mode "
            "none: nothing was)",
            "s",
        ),
        ObservationSpec("fit.*.alpha_us", "fitted latency term of the link", "us"),
        ObservationSpec("fit.*.beta_ns_per_byte", "fitted time per message byte", "ns/B"),
        ObservationSpec("fit.*.r2", "coefficient of determination of the fit"),
        ObservationSpec("fit.*.bandwidth_mbit", "1 / beta, in message bits", "Mbit/s"),
        ObservationSpec(
            "link_bytes_per_message_byte",
            "bytes one direction of the link carried per byte of a 2-process cross-node "
            "all_reduce (counted)",
        ),
        ObservationSpec(
            "shaped_link_mbit",
            "the shaped link's fitted rate: link bytes per message byte / beta",
            "Mbit/s",
        ),
        ObservationSpec("shaped_over_rate", "shaped_link_mbit / rate_mbit"),
        ObservationSpec("cross_over_intra", "cross-node time / intra-node time, largest size"),
        ObservationSpec("crossing_bytes.flat", "bytes over the link per flat all_reduce", "B"),
        ObservationSpec(
            "crossing_bytes.hierarchical", "bytes over the link per hierarchical one", "B"
        ),
        ObservationSpec(
            "crossing_over_size.*", "bytes over the link (both directions) / message bytes"
        ),
        ObservationSpec("hierarchical_over_flat_bytes", "hierarchical / flat crossing bytes"),
        ObservationSpec("results_agree", "hierarchical == flat on every rank"),
        ObservationSpec("time_s.flat", "median flat all_reduce of the largest message", "s"),
        ObservationSpec("time_s.hierarchical", "median hierarchical one", "s"),
        ObservationSpec(
            "flat_predicted_s",
            "the flat all_reduce's busier link direction (counted bytes) / the link rate",
            "s",
        ),
        ObservationSpec("flat_over_predicted", "time_s.flat / flat_predicted_s"),
        ObservationSpec("duration_s", "wall time from the first agent start", "s"),
    ),
    checks=(
        CheckSpec(
            "shaped_beta_matches_rate",
            "the shaped link's fitted rate is within 0.5x-2x of rate_mbit (needs netns)",
        ),
        CheckSpec(
            "slow_link_sets_the_pace",
            "the flat all_reduce takes 0.5x-2x its busier link direction's bytes / rate, and "
            "the cross-node all_reduce is slower than the intra-node one (needs netns)",
        ),
        CheckSpec(
            "hierarchical_crosses_fewer_bytes",
            "the hierarchical all_reduce puts at most 0.8x the flat one's bytes on the link "
            "and computes the same sums (needs netns)",
        ),
    ),
    default_world_size=4,
    min_world_size=4,
    max_world_size=4,
    extra={NODES_KEY: 2},  # an emulated cluster of two nodes, 2 processes each
    timeout_s=120.0,
)
