"""node-loss: two emulated nodes (network namespaces, or loopback addresses without root) each
run torchrun's elastic agent; node 1's agent and worker are killed mid-run. The survivor's
collective fails, its agent restarts the workers, and with --nnodes 1:2 the job goes on at world
size 1 from the last checkpoint, with the global batch the script chose. With `replacement` a
fresh node 1 then joins the rendezvous: the survivor's agent restarts its workers for the join and
the job scales back to world size 2, both ranks resuming from the last checkpoint."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec
from trainer_lab.cluster.nodes import NODES_KEY

SPEC = LabSpec(
    name="node-loss",
    group="failures",
    summary=(
        "Two nodes x 1 process on torchrun's elastic agent (c10d rendezvous); node 1's agent "
        "and worker are SIGKILLed mid-run. The survivor's all_reduce fails, its agent restarts "
        "the workers; with min nodes 1 the job resumes at world size 1 from the last checkpoint, "
        "with min nodes 2 it waits for a replacement until the join timeout. With replacement, a "
        "fresh node 1 joins and the job scales back to world size 2 from the last checkpoint."
    ),
    params=(
        ParamSpec("steps", "int", 14, "optimizer steps", minimum=4, maximum=100),
        ParamSpec("kill_after_step", "int", 5, "kill node 1 once both ranks passed it", minimum=1),
        ParamSpec(
            "min_nodes",
            "int",
            1,
            "torchrun --nnodes MIN:2; 2: the survivor waits for a replacement that never comes",
            minimum=1,
            maximum=2,
        ),
        ParamSpec(
            "max_restarts",
            "int",
            1,
            "torchrun --max-restarts; debug 0: the survivor's agent gives up at once",
            minimum=0,
            maximum=5,
        ),
        ParamSpec(
            "batch_policy",
            "choice",
            "keep_global",
            "the script's choice at a smaller world: keep_global (each rank takes more, LR "
            "stays) or keep_per_rank (the global batch shrinks, LR scaled with it)",
            choices=("keep_global", "keep_per_rank"),
        ),
        ParamSpec(
            "resume",
            "bool",
            True,
            "a start loads the latest checkpoint; debug false: the survivor starts over",
        ),
        ParamSpec("checkpoint_every", "int", 2, "rank 0 saves every N steps", minimum=1),
        ParamSpec("join_timeout_s", "int", 8, "c10d rendezvous join_timeout", minimum=1),
        ParamSpec(
            "replacement",
            "bool",
            False,
            "start a fresh node 1 once the survivor trains alone (at once with min nodes 2); "
            "the lab ends the job a few steps after both nodes trained at world size 2",
        ),
        ParamSpec("loopback", "bool", False, "run on loopback addresses even as root"),
    ),
    observations=(
        ObservationSpec("mode", "netns (namespaces on a bridge) or loopback"),
        ObservationSpec("mode_note", "why loopback mode ran (empty in netns mode)"),
        ObservationSpec("killed_after_step", "node 1's last step when it was killed"),
        ObservationSpec("survivor_error", "the survivor's collective error: peer_gone, timeout"),
        ObservationSpec("survivor_error_message", "the survivor's collective error, as raised"),
        ObservationSpec("survivor_error_s", "kill -> the survivor's collective error", "s"),
        ObservationSpec("restarts", "restarts of the survivor's workers (its attempts - 1)"),
        ObservationSpec(
            "agent_end", "how node 0's agent ended: finished, rendezvous_timeout, worker_failed"
        ),
        ObservationSpec("agent_exit.node0", "node 0's agent exit code"),
        ObservationSpec(
            "agent_exit.node1", "node 1's (last) agent exit code (killed: -9; a replacement's own)"
        ),
        ObservationSpec("world_size_before", "world size before the kill"),
        ObservationSpec("world_size_after", "world size of the survivor's first restarted attempt"),
        ObservationSpec("world_sizes", "the survivor's world size at each start, e.g. '2, 1, 2'"),
        ObservationSpec("last_saved_step", "last checkpoint rank 0 wrote before the kill"),
        ObservationSpec("resumed_from_step", "the step the restarted attempt started at"),
        ObservationSpec("redone_steps", "steps trained twice (killed_after_step - resumed)"),
        ObservationSpec("global_batch_before", "samples per step before the kill"),
        ObservationSpec("global_batch_after", "samples per step after the restart"),
        ObservationSpec("per_rank_batch_before", "samples per rank and step before the kill"),
        ObservationSpec("per_rank_batch_after", "samples per rank and step after the restart"),
        ObservationSpec("lr_before", "learning rate before the kill"),
        ObservationSpec("lr_after", "learning rate after the restart"),
        ObservationSpec("final_step", "the last step the survivor reached"),
        ObservationSpec("restart_gap_s", "kill -> first step of the restarted attempt", "s"),
        ObservationSpec("agent_end_s", "kill -> node 0's agent exited", "s"),
        ObservationSpec("duration_s", "wall time from the first agent start", "s"),
        ObservationSpec("replacement_rank", "RANK the fresh node 1's worker got (replacement)"),
        ObservationSpec("replacement_world_size", "world size the fresh node 1's worker saw"),
        ObservationSpec(
            "replacement_resumed_from_step", "the step the fresh node 1's worker started at"
        ),
        ObservationSpec("survivor_rank_after_join", "RANK node 0's worker got after the join"),
        ObservationSpec(
            "survivor_resumed_after_join", "the step node 0's worker restarted at for the join"
        ),
        ObservationSpec("last_saved_before_join", "last checkpoint saved before the join"),
        ObservationSpec(
            "replacement_behind_last_save",
            "last_saved_before_join - the fresh node's start step (0: it resumed from it)",
        ),
        ObservationSpec(
            "survivor_behind_last_save",
            "last_saved_before_join - node 0's start step after the join (0: it resumed from it)",
        ),
        ObservationSpec(
            "replacement_join_s", "fresh node 1's agent start -> its worker's first step", "s"
        ),
    ),
    checks=(
        CheckSpec("survivor_saw_collective_error", "node 0's all_reduce failed after the kill"),
        CheckSpec("agent_restarted_workers", "node 0's agent started its worker again"),
        CheckSpec(
            "continued_at_smaller_world",
            "the restarted workers ran at world size 1 and the job finished",
        ),
        CheckSpec("resumed_from_last_checkpoint", "the restart began at the last saved step"),
        CheckSpec(
            "replacement_scaled_back",
            "(replacement only) a fresh node 1 joined: both ranks at world size 2 from the last "
            "checkpoint, both agents finished",
        ),
    ),
    default_world_size=2,
    min_world_size=2,
    max_world_size=2,
    extra={NODES_KEY: 2},  # an emulated cluster of two nodes, one process each
    timeout_s=90.0,  # with a replacement: a third agent's start and a second rendezvous
)
