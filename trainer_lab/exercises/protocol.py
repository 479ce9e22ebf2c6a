"""Names shared by an exercise's checker processes and the runner (torch-free)."""

from __future__ import annotations

ENTRY_SCRIPT = "_drill_check.py"  # written into the run's workspace; the harness runs it
ENTRY_SOURCE = (
    "import sys\n"
    "from trainer_lab.exercises._checker.ctx import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)


def checks_file(rank: int) -> str:
    """One JSON line per recorded check ({check, passed, detail}) or error ({error})."""
    return f"exercise-rank{rank}.jsonl"
