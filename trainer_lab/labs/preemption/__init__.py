"""preemption: a SIGTERM handler that checkpoints before exit, and a requeue that resumes."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="preemption",
    group="failures",
    summary=(
        "A training loop that checkpoints every few steps is sent SIGTERM mid-run, as a "
        "scheduler does before preempting a job: the last rank gets it one step before the "
        "others. The handler only sets a flag; at the end of each step the ranks agree on it "
        "(all-reduce MAX), checkpoint that step and exit cleanly. A requeued launch resumes "
        "from the newest checkpoint; its losses are compared with an uninterrupted run and the "
        "steps done twice are counted."
    ),
    params=(
        ParamSpec("steps", "int", 14, "steps of the whole run", minimum=8, maximum=200),
        ParamSpec(
            "checkpoint_every", "int", 5, "periodic checkpoint interval", minimum=2, maximum=100
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: no_handler leaves SIGTERM's default action (the process dies at once); "
            "no_agreement acts on each rank's own flag without agreeing first; "
            "no_optimizer_state resumes the weights but not the momentum",
            choices=("none", "no_handler", "no_agreement", "no_optimizer_state"),
        ),
    ),
    observations=(
        ObservationSpec(
            "preempted.signal_step", "step at which the first rank got SIGTERM", derived=True
        ),
        ObservationSpec("preempted.exit", "clean | failed (how the preempted launch ended)"),
        ObservationSpec("preempted.last_step", "last step any rank finished", "steps"),
        ObservationSpec(
            "preempted.ranks_stopped_together", "every rank recorded stopping, at one step"
        ),
        ObservationSpec("preempted.saved_step", "step of the newest checkpoint", "steps"),
        ObservationSpec("resumed.first_step", "first step of the requeued launch"),
        ObservationSpec("resumed.continues_after_saved", "first step == saved step + 1"),
        ObservationSpec("resumed.redone_steps", "steps finished before the signal and run again"),
        ObservationSpec("resumed.losses_match_uninterrupted", "requeued losses == uninterrupted"),
    ),
    checks=(
        CheckSpec("signal_checkpoints_current_step", "clean exit, no step lost to the signal"),
        CheckSpec("requeue_resumes_exactly", "resumes after the saved step, same losses"),
    ),
    timeout_s=120.0,
)
