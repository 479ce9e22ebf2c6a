"""replica-recovery: the replica as the unit of failure (the torchft idea) at toy size. A killed
replica drops out of the quorum, the survivors keep training from memory, a replacement recovers
from a live peer; against the same kill handled by restarting every replica from disk."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

MODES = ("live", "restart")
SABOTAGES = ("none", "old_divisor", "fresh_init", "weights_only", "fatal_errors")

SPEC = LabSpec(
    name="replica-recovery",
    group="failures",
    summary=(
        "W replicas (one process each, started and supervised by one torchrun rank each) train "
        "an MLP data-parallel. Before every step each replica asks a lighthouse (rank 0, over a "
        "TCPStore) for the quorum; a new quorum means a new ProcessGroupGloo on a PrefixStore "
        "for that quorum id, and the gradient all-reduce spans only its members. Replica W-1 "
        "is SIGKILLed in step kill_after_step + 1, after its backward. live: the survivors' "
        "all-reduce raises, the lighthouse drops the dead replica once its heartbeat is stale, "
        "and the survivors retry the same step in the smaller quorum, averaging over the live "
        "replicas (the global batch shrinks). shrunk_steps later a replacement process starts, "
        "joins the quorum and receives weights and SGD momentum from a live peer over the new "
        "group. restart: the same kill, but every replica gives up and is restarted from the "
        "last disk checkpoint. Rank 0 replays the live run in one process as the reference."
    ),
    params=(
        ParamSpec("steps", "int", 12, "optimizer steps per mode", minimum=4, maximum=200),
        ParamSpec("kill_after_step", "int", 6, "the victim dies in the next step", minimum=1),
        ParamSpec(
            "shrunk_steps", "int", 3, "steps the survivors train before the spare joins", minimum=1
        ),
        ParamSpec("checkpoint_every", "int", 4, "replica 0 saves to disk every N steps", minimum=1),
        ParamSpec("batch", "int", 8, "samples per replica per step", minimum=1, maximum=4096),
        ParamSpec("lr", "float", 0.05, "SGD learning rate", minimum=0.0, maximum=10.0),
        ParamSpec("momentum", "float", 0.9, "SGD momentum", minimum=0.0, maximum=0.999),
        ParamSpec("seed", "int", 0, "init and data seed", minimum=0),
        ParamSpec(
            "heartbeat_timeout_s",
            "float",
            2.0,
            "the lighthouse drops a replica whose heartbeat has not moved for this long (a "
            "live replica's heartbeat thread must not stall this long on a loaded machine)",
            minimum=0.3,
            maximum=30.0,
        ),
        ParamSpec(
            "tolerance",
            "float",
            1e-6,
            "allowed |survivor - reference| weight difference (all-reduce order differs from "
            "the replay's once 3+ replicas add)",
            minimum=0.0,
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: old_divisor divides the survivors' gradient sum by the original replica "
            "count; fresh_init: the replacement receives the peer's state but keeps its fresh "
            "init; weights_only: the peer sends weights, not momentum; fatal_errors: live "
            "survivors treat the collective error as fatal and restart from disk",
            choices=SABOTAGES,
        ),
    ),
    observations=(
        ObservationSpec("replicas", "replica processes at the start", derived=True),
        ObservationSpec("*.survivor_pid_changes", "new processes the survivors' slots got"),
        ObservationSpec("*.steps_redone", "steps replica 0 committed more than once"),
        ObservationSpec("*.final_step", "lowest last step of the replicas that finished"),
        ObservationSpec("*.failed_step", "the step whose all-reduce raised"),
        ObservationSpec("*.error_message", "the survivors' first collective error"),
        ObservationSpec("live.retried_allreduces", "failed all-reduces the survivors retried"),
        ObservationSpec(
            "live.buffer_changed_by_failed_allreduce",
            "a failed all-reduce left its buffer different from the local gradient",
        ),
        ObservationSpec("live.detect_s", "kill -> the smaller quorum formed", "s"),
        ObservationSpec("live.quorum.sizes", "quorum sizes in order (one per quorum id)"),
        ObservationSpec("live.quorum.epochs", "quorum ids used"),
        ObservationSpec("live.quorum.min_size", "smallest quorum"),
        ObservationSpec("live.quorum.final_size", "last quorum's size"),
        ObservationSpec("live.global_batch.*", "samples per step: before, shrunk, after"),
        ObservationSpec("live.divisor.*", "gradient divisor used: before, shrunk, after"),
        ObservationSpec("live.recovery.step", "step at which the replacement joined"),
        ObservationSpec("live.recovery.src", "replica id it recovered from"),
        ObservationSpec("live.recovery.bytes", "bytes it received from the peer", "B"),
        ObservationSpec(
            "live.recovery.same_digests", "its weight and momentum digests = the peer's at the join"
        ),
        ObservationSpec(
            "live.replacement.*", "params/momentum max abs diff vs the peer at the join"
        ),
        ObservationSpec(
            "live.lockstep.*",
            "after the join: max abs weight diff across replicas, steps whose digests differed",
        ),
        ObservationSpec(
            "live.reference.*",
            "survivor vs the one-process replay, max abs diff: to the join, after it",
        ),
        ObservationSpec("restart.restarted_processes", "replica processes started again"),
        ObservationSpec("restart.resumed_from_step", "the checkpoint step they loaded"),
        ObservationSpec("restart.checkpoint_bytes", "bytes each read from disk", "B"),
        ObservationSpec("restart.detect_s", "kill -> every replica running again", "s"),
    ),
    checks=(
        CheckSpec(
            "survivors_kept_training",
            "same survivor processes, no step redone, the failed step retried in a smaller quorum",
        ),
        CheckSpec("gradient_average_over_live_replicas", "survivors = the replay up to the join"),
        CheckSpec("replacement_matches_peer", "weights and momentum bitwise = the peer's"),
        CheckSpec("replicas_in_lockstep_after_join", "all replicas bitwise equal after the join"),
    ),
    min_world_size=2,
    max_world_size=4,
    timeout_s=120.0,
)
