"""restart-accounting: how torchrun's `--max-restarts` counts on torch's elastic agent. Node 0
starts alone (--nnodes 1:2); node 1 joins (a membership change), then one of node 1's workers
is killed (a worker failure), then node 1's whole agent is killed (a node leaving). Each time the
workers restart; the lab reads the restart count they see (TORCHELASTIC_RESTART_COUNT) and what
each agent logs."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec
from trainer_lab.cluster.nodes import NODES_KEY

_PHASES = "join, failure, leave"

SPEC = LabSpec(
    name="restart-accounting",
    group="failures",
    summary=(
        "Two nodes on torchrun's elastic agent, --nnodes 1:2. Node 0 trains alone; node 1 joins; "
        "a worker on node 1 is SIGKILLed; node 1's agent is SIGKILLed. After each event the lab "
        "reads the restart count the restarted workers see and what the agents log: a join "
        "restarts the workers without counting, a failed worker counts on its node, and a node "
        "leaving counts too (the survivors' collective fails). The count is each agent's own: "
        "the other node may take a failure as a membership change and not count it."
    ),
    params=(
        ParamSpec(
            "steps",
            "int",
            400,
            "at most this many steps (the lab ends the run after its events)",
            minimum=50,
            maximum=2000,
        ),
        ParamSpec(
            "max_restarts",
            "int",
            2,
            "torchrun --max-restarts; debug 0: the worker failure ends the job (a join still "
            "restarts the workers)",
            minimum=0,
            maximum=5,
        ),
        ParamSpec(
            "min_nodes",
            "int",
            1,
            "torchrun --nnodes MIN:2; debug 2: node 0 waits for node 1 instead of training alone, "
            "so the join restarts nothing",
            minimum=1,
            maximum=2,
        ),
        ParamSpec("join_timeout_s", "int", 30, "c10d rendezvous join_timeout", minimum=5),
        ParamSpec("loopback", "bool", False, "run on loopback addresses even as root"),
    ),
    observations=(
        ObservationSpec("mode", "netns (namespaces on a bridge) or loopback"),
        ObservationSpec("mode_note", "why loopback mode ran (empty in netns mode)"),
        ObservationSpec("phases", f"the events that ran, in order ({_PHASES})"),
        ObservationSpec(
            "restart_count.*.*",
            f"TORCHELASTIC_RESTART_COUNT node N's workers saw after each event ({_PHASES}; "
            "'start': before any; -1: they did not restart)",
        ),
        ObservationSpec("world_size.*", f"node 0's world size after each event ({_PHASES})"),
        ObservationSpec(
            "agent_logged.*.membership_restarts",
            "times node N's agent logged new nodes waiting and restarted without counting",
        ),
        ObservationSpec(
            "agent_logged.*.failure_restarts",
            "times node N's agent logged a failed worker group and used up a restart",
        ),
        ObservationSpec("agent_end.*", "how node N's (last) agent ended"),
        ObservationSpec("final_step", "the last step node 0 reached"),
        ObservationSpec("duration_s", "wall time from the first agent start", "s"),
    ),
    checks=(
        CheckSpec("join_not_counted", "node 1 joining restarted node 0's workers, count unchanged"),
        CheckSpec("failure_counted", "a killed worker restarted node 1's workers, count + 1"),
        CheckSpec(
            "leave_counted", "node 1 leaving restarted node 0's workers alone, count + 1, finished"
        ),
    ),
    default_world_size=2,
    min_world_size=2,
    max_world_size=2,
    extra={NODES_KEY: 2},
    timeout_s=120.0,
)
