"""`drill mock grade FILE [--phase P] [--json] [--seed N]`: grade any script (or a notebook's
train.py cell) against the coding contract, and print its checks. The grading is the
conductor's (drill.mock.coding.conductor.grade_file); `drill mock followups` grades through
`graded_file` here too. Registered with the coding commands (drill/cli/mock_coding.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from drill.cli.output import say
from drill.errors import DrillError
from drill.mock.coding.conductor import FileGrading, grade_file, grader_phases, prepare_file
from drill.mock.errors import MockError
from drill.runs.checklist import CheckList, plain_lines, wrap
from storage.errors import DatabaseError

USAGE = "usage: drill mock grade FILE [--phase P] [--json]"


def grade_script(script: Path, out_dir: Path, phases: Any, **options: Any) -> Any:
    """trainer_lab's grader (a seam: tests put a saved grading in its place)."""
    from trainer_lab.grading import grade

    return grade(script, out_dir, phases, **options)


def graded_file(args: argparse.Namespace, *, quiet: bool) -> FileGrading:
    """Grade FILE as args say (--phase, --seed), recorded in the run log; progress on stderr
    unless `quiet`."""
    if args.file is None:
        raise MockError(USAGE)
    grader, contract, phases = _prompt_grader(args)
    path = Path(args.file)
    prepared = prepare_file(path)
    if prepared[2] is not None:
        say(f"Graded: {prepared[2]}", file=sys.stderr if quiet else sys.stdout)
    if not quiet:
        say(f"Grading {path} against {contract} ({', '.join(phases)})", file=sys.stderr)

    def progress(message: str) -> None:
        say(f"  {message}", file=sys.stderr, flush=True)

    return grade_file(
        prepared,
        phases,
        grader=grader,
        record=lambda result, out_dir: _record(args, result, out_dir),
        on_progress=None if quiet else progress,
        seed=getattr(args, "seed", None),
    )


def _prompt_grader(args: argparse.Namespace) -> tuple[Any, str, list[str]]:
    """The grader, the contract's name and the phases for --prompt (default: today's DDP round,
    graded exactly as before); an unknown prompt or phase is a MockError (one line, exit 2)."""
    name = getattr(args, "prompt", None)
    if name in (None, "ddp"):
        return grade_script, "the coding contract", grader_phases(args.phase)
    from drill.mock.coding.catalogue import round_prompt

    entry = round_prompt(name)
    phases = entry.grader_phases(args.phase)

    def grader(script: Path, out_dir: Path, chosen: Any, **options: Any) -> Any:
        return grade_script(script, out_dir, chosen, prompt=entry.id, **options)

    return grader, f"the {entry.id} prompt's contract ({entry.title})", phases


def _record(args: argparse.Namespace, result: Mapping[str, Any], out_dir: Path) -> list[str]:
    """The grading into the run log; a failure to write costs a notice (the grading stands)."""
    from drill.cli.services import open_services

    def notice(line: str) -> None:
        say(line, file=sys.stderr, flush=True)

    try:
        with open_services(args) as services:
            services.record_grading(result, out_dir, notice)
    except (DrillError, DatabaseError) as error:
        notice(f"drill mock: notice: this grading is not recorded in the run log: {error}")
    return []


def cmd_grade(args: argparse.Namespace) -> int:
    graded = graded_file(args, quiet=args.json)
    grading = graded.grading
    if args.json:
        print(json.dumps(dict(grading), indent=1, default=str))
        return 0 if grading.ok else 1
    print_verdicts(dict(grading))
    if grading.likely_causes:
        say("Likely causes:")
        for cause in grading.likely_causes:
            say("\n".join(wrap(cause, 100, initial_indent="  - ", subsequent_indent="    ")))
    say(
        f"{grading.passed}/{grading.total} checks hold ({grading.duration_s:.0f} s); "
        f"result: {graded.out_dir}"
    )
    seed = dict(grading).get("seed")
    if isinstance(seed, int):
        say(f"fault plan: seed {seed} (drill mock grade --seed {seed} reproduces it)")
    return 0 if grading.ok else 1


def print_verdicts(result: Mapping[str, Any]) -> None:
    """A reason several checks share once (with the checks it affects), then each check."""
    for line in plain_lines(CheckList.of(result), layout="columns"):
        say(line)


def print_checks(checks: list[dict[str, Any]]) -> None:
    for line in plain_lines(CheckList.of_checks(checks), layout="columns"):
        say(line)
