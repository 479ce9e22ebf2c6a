"""False-fail rate from gloo's shutdown abort: grade correct scripts N times and count verdicts
that are not ok, and the aborts (SIGABRT) that the harness attributed to the runtime's teardown.

    python benchmarks/shutdown_abort.py [--n 50] [--phase distributed] [--script PATH ...]

Defaults: the model answer and the second correct answer (a test fixture), each graded N times
on one phase. Prints per script: grades, not ok, launches, teardown aborts noted. A benchmark,
never a test: 50 grades of a W=2/W=3 phase take several minutes.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from trainer_lab.grading import grade
from trainer_lab.grading.contract import FILES

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SCRIPTS = (
    FILES / "train.py",
    REPO / "trainer_lab/grading/prompts/ddp_files/second_answer.py",
)


def measure(script: Path, n: int, phase: str) -> dict[str, int]:
    counts = {"grades": 0, "not_ok": 0, "launches": 0, "teardown_aborts": 0}
    for _ in range(n):
        with tempfile.TemporaryDirectory() as tmp:
            grading = grade(script, Path(tmp) / "out", (phase,))
        counts["grades"] += 1
        counts["not_ok"] += 0 if grading.ok else 1
        for launch in grading["launches"]:
            counts["launches"] += 1
            counts["teardown_aborts"] += bool(launch.get("notes"))
        if not grading.ok:
            print(f"  not ok: {grading.failed}")
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--phase", default="distributed")
    parser.add_argument("--script", type=Path, action="append")
    args = parser.parse_args()
    for script in args.script or DEFAULT_SCRIPTS:
        c = measure(script, args.n, args.phase)
        rate = c["not_ok"] / max(c["grades"], 1)
        print(
            f"{script.name}: {c['grades']} grades ({args.phase}), {c['not_ok']} not ok "
            f"(false-fail rate {rate:.1%}), {c['launches']} launches, "
            f"{c['teardown_aborts']} teardown aborts noted"
        )


if __name__ == "__main__":
    main()
