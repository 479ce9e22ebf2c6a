"""hang: what a stuck, mismatched, dead or late rank does to its peers, and how the root-cause
rank is found from every rank's logs (the first real error, not the peers' timeout noise).

The per-rank verdicts (which rank hung, which timed out) come from trainer_lab.root_cause's
`rank_reports` and `root_cause_from_reports`; the driver is in drive.py, the ranks in worker.py."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SCENARIOS = ("skip", "mismatch", "dead-rank", "straggler")

SPEC = LabSpec(
    name="hang",
    group="failures",
    summary=(
        "One rank misbehaves at step 2 of a loop of all-reduces: skip (the others time out "
        "after the collective timeout), mismatch (TORCH_DISTRIBUTED_DEBUG=DETAIL names op and "
        "shape at once; without it a timeout), dead-rank (survivors fail fast), straggler "
        "(monitored_barrier names the late rank). The root-cause rank comes from all ranks' "
        "logs: the first real error, not the timeout messages."
    ),
    params=(
        ParamSpec("scenario", "choice", "skip", "what the victim rank does", choices=SCENARIOS),
        ParamSpec(
            "collective_timeout_s", "float", 3.0, "process-group timeout", minimum=1, maximum=60
        ),
        ParamSpec(
            "mismatch",
            "choice",
            "op",
            "mismatch scenario: op (victim broadcasts while peers all-reduce) or shape (victim "
            "all-reduces half the elements)",
            choices=("op", "shape"),
        ),
        ParamSpec(
            "death",
            "choice",
            "raise",
            "dead-rank scenario: raise (an exception with a traceback) or sigkill (as the OOM "
            "killer would: no traceback; the exit signal comes from torchrun's log); debug "
            "thread: the exception kills only a background thread and the process lives on "
            "without reaching the all-reduce, so the survivors wait out the collective timeout "
            "and survivors_fail_fast must fail",
            choices=("raise", "sigkill", "thread"),
        ),
        ParamSpec(
            "pg_timeout_s",
            "float",
            0.0,
            "the process-group timeout the ranks really get, when not 0 (the checks still "
            "expect collective_timeout_s); debug 1: with the default 3 s the skip scenario's "
            "peers fail far too early, so peers_time_out and a card's timing claims must fail",
            minimum=0,
            maximum=60,
        ),
        ParamSpec(
            "detail",
            "bool",
            True,
            "debug: false runs the mismatch scenario's DETAIL launch without "
            "TORCH_DISTRIBUTED_DEBUG=DETAIL, so its check must fail",
        ),
        ParamSpec(
            "plain_detail",
            "bool",
            False,
            "debug: true sets TORCH_DISTRIBUTED_DEBUG=DETAIL on the mismatch scenario's plain "
            "launch too, so its no-diagnosis check must fail",
        ),
        ParamSpec(
            "monitored",
            "bool",
            True,
            "debug: false makes the straggler scenario use a plain barrier (no names)",
        ),
        ParamSpec(
            "blame",
            "choice",
            "logs",
            "root-cause rule. logs: first real error across all ranks' logs, else the rank "
            "that never reached the collective; debug first_error: whichever rank raised "
            "first, timeouts included (the naive reading)",
            choices=("logs", "first_error"),
        ),
    ),
    observations=(
        ObservationSpec("scenario", "the scenario run", derived=True),
        ObservationSpec("victim", "the rank that misbehaved", derived=True),
        ObservationSpec("root_cause.rank", "root-cause rank found from all ranks' logs"),
        ObservationSpec("root_cause.kind", "exception | abort | signal | hang | mismatch | late"),
        ObservationSpec("root_cause.message", "the root-cause rank's first error line"),
        ObservationSpec("root_cause_is_victim", "the analysis named the victim (bool)"),
        ObservationSpec("launcher_root_cause_rank", "the launcher's own root-cause rank"),
        ObservationSpec(
            "torchrun_root_cause_rank",
            "the rank torchrun's report names as 'Root Cause (first observed failure)'",
        ),
        ObservationSpec(
            "torchrun_blames_victim",
            "torchrun's root-cause rank is the victim (null: no report); a peer that timed out "
            "exits first, so torchrun usually blames it",
        ),
        ObservationSpec(
            "seconds_to_failure", "survivors: entering the collective -> their error", "s"
        ),
        ObservationSpec("collective_timeout_s", "the process-group timeout", "s", derived=True),
        ObservationSpec("survivor_errors", "kind of error per surviving rank"),
        ObservationSpec("launch_duration_s", "wall time of the (last) launch", "s"),
        ObservationSpec("detail.seconds_to_failure", "mismatch with DETAIL: seconds to error", "s"),
        ObservationSpec("detail.names_op_and_shape", "the DETAIL error names OpType and shape"),
        ObservationSpec("plain.seconds_to_failure", "mismatch without DETAIL", "s"),
        ObservationSpec("plain.outcome", "mismatch without DETAIL: timeout | abort | error"),
        ObservationSpec("named_late_ranks", "ranks monitored_barrier named as late"),
        ObservationSpec(
            "stall.heartbeats",
            "skip: heartbeats the survivors' side thread logged (every 0.2 s) while they waited "
            "in the step-K all-reduce",
        ),
        ObservationSpec("stall.steps_done", "skip: steps the survivors completed meanwhile"),
    ),
    checks=(
        CheckSpec("peers_time_out", "skip: peers fail after about the collective timeout"),
        CheckSpec("detail_fails_fast", "mismatch: DETAIL gives an immediate error naming op/shape"),
        CheckSpec("plain_gives_no_diagnosis", "mismatch: without DETAIL a timeout or a crash"),
        CheckSpec("survivors_fail_fast", "dead-rank: survivors fail well before the timeout"),
        CheckSpec("names_late_rank", "straggler: monitored_barrier names the late rank"),
        CheckSpec("root_cause_is_victim", "the root cause found from the logs is the victim"),
    ),
    timeout_s=90.0,
)
