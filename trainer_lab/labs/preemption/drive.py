"""preemption lab: the driver (torch-free): preempt, requeue, compare with an uninterrupted run."""

from __future__ import annotations

from typing import Any

from trainer_lab.context import LabContext

# A gloo/CPU lab on any machine: its collectives use CPU tensors, and the numbers it reports
# should not change with the hardware it happens to run on.
CPU_ONLY = {"CUDA_VISIBLE_DEVICES": ""}
TASK = "trainer_lab.labs.preemption.worker:main"


def losses(events: dict[int, list[dict[str, Any]]]) -> dict[int, float]:
    return {e["step"]: e["loss"] for e in events.get(0, []) if e.get("event") == "train_step"}


def drive(run: LabContext) -> None:
    p = run.params
    steps = p["steps"]
    signal_step = steps // 2
    ckpt = run.out_dir / "checkpoints"
    base = {**p, "signal_step": signal_step, "collective_timeout_s": 5}
    run.plan(3)
    preempted = run.launch(
        TASK,
        {**base, "mode": "preempt", "ckpt_dir": str(ckpt)},
        variant="preempted",
        env=CPU_ONLY,
        expect_failure=True,
    )
    saved = sorted(ckpt.glob("step-*.pt"))  # before the requeued launch saves its own
    saved_step = int(saved[-1].stem.split("-")[1]) if saved else -1
    run.launch(
        TASK, {**base, "mode": "resume", "ckpt_dir": str(ckpt)}, variant="resumed", env=CPU_ONLY
    )
    run.launch(
        TASK,
        {**base, "mode": "resume", "ckpt_dir": str(run.out_dir / "none")},
        variant="reference",
        env=CPU_ONLY,
    )
    before = run.events("preempted")
    last = {
        rank: max((e["step"] for e in evs if e.get("event") == "train_step"), default=-1)
        for rank, evs in before.items()
    }
    last_step = max(last.values())
    stopped = {
        rank: [e["step"] for e in evs if e.get("event") == "preempted"]
        for rank, evs in before.items()
    }
    # every rank recorded stopping, all at one step (a rank killed or failing records nothing)
    together = len(stopped) == run.world_size and len({tuple(s) for s in stopped.values()}) == 1
    together = together and all(len(s) == 1 for s in stopped.values())
    clean = preempted.ok
    run.observe("preempted.signal_step", signal_step)
    run.observe("preempted.exit", "clean" if clean else "failed")
    run.observe("preempted.last_step", last_step)
    run.observe("preempted.ranks_stopped_together", together)
    run.observe("preempted.saved_step", saved_step)
    after = run.events("resumed")
    start = [e for e in after.get(0, []) if e.get("event") == "start"]
    first = start[0]["first_step"] if start else None
    resumed, reference = losses(after), losses(run.events("reference"))
    redone = last_step - saved_step
    same = bool(resumed) and all(resumed[s] == reference.get(s) for s in resumed)
    complete = set(resumed) == set(range(saved_step + 1, steps))
    run.observe("resumed.first_step", first)
    run.observe("resumed.continues_after_saved", first == saved_step + 1)
    run.observe("resumed.redone_steps", redone)
    run.observe("resumed.losses_match_uninterrupted", same and complete)
    run.check(
        "signal_checkpoints_current_step",
        clean and redone == 0 and together,
        f"SIGTERM at step {signal_step} (rank {run.world_size - 1}; the others one step later): "
        f"the launch ended {'cleanly' if clean else 'with a failure'}, ranks stopped at "
        f"{dict(sorted(stopped.items()))}, last steps {sorted(set(last.values()))}, newest "
        f"checkpoint step {saved_step}: {redone} finished steps must be run again",
    )
    run.check(
        "requeue_resumes_exactly",
        first == saved_step + 1 and same and complete,
        f"requeued launch starts at step {first} after checkpoint step {saved_step}; its "
        f"{len(resumed)} losses equal the uninterrupted run's: {same and complete}",
    )
