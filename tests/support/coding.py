"""Helpers for the coding-round tests: grade a script given as source text."""

from __future__ import annotations

from pathlib import Path

from trainer_lab.grading import grade
from trainer_lab.result import LabResult


def grade_source(
    source: str,
    tmp_path: Path,
    phases: tuple[str, ...],
    timeout_s: float = 90.0,
    seed: int | None = None,
) -> LabResult:
    """The grading's result; `seed` draws its fault plan (None: a fresh one, in the result's
    "seed")."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    script = tmp_path / "train.py"
    script.write_text(source)
    return grade(script, tmp_path / "out", phases, timeout_s=timeout_s, seed=seed).result


def grade_prompt_source(
    source: str, tmp_path: Path, phases: tuple[str, ...], seed: int, prompt: str
) -> dict:
    """A round prompt's grading of `source` as train.py (its fault plan drawn from `seed`)."""
    script = tmp_path / "train.py"
    script.write_text(source)
    return dict(grade(script, tmp_path / "out", phases, seed=seed, prompt=prompt).result)


def failed(result: LabResult) -> list[str]:
    return sorted(c["name"] for c in result["checks"] if not c["passed"])


def detail(result: LabResult, name: str) -> str:
    return next(c["detail"] for c in result["checks"] if c["name"] == name)


HANG = (
    "hang: no rank made progress for 8 s (optimizer steps done: rank 0: 4, rank 1: 4), killed "
    "after 13 s (rank 0: in barrier (a collective) called at train.py:80); expected an "
    "optimizer step on some rank at least every 8 s; probably the ranks wait for each other"
)


def hung_grading() -> dict:
    """A grading (result.json) by hand: the W=2 run hung, so three failed checks quote its
    summary; the kill run was SIGKILLed as planned; one check held."""
    launches = [
        {"name": "w2", "status": "timeout", "summary": HANG, "root_cause": {"kind": "hang"}},
        {
            "name": "kill",
            "status": "error",
            "summary": "rank 1: SIGKILLed as planned after step 8",
            "root_cause": {"kind": "planned"},
        },
        {"name": "single", "status": "ok", "summary": "exit 0 in 1.0 s"},
    ]
    checks = [
        {"name": "skeleton.exits", "passed": True, "detail": "exit 0 in 1.0 s"},
        {"name": "distributed.exactly_once", "passed": False, "detail": f"W=2: {HANG}; no ids"},
        {"name": "distributed.new_order", "passed": False, "detail": f"W=2: {HANG}"},
        {"name": "monitoring.named_phases", "passed": False, "detail": f"no step lines ({HANG})"},
    ]
    return {
        "checks": checks,
        "launches": launches,
        "observations": {"likely_causes": ["the ranks wait for each other"]},
    }
