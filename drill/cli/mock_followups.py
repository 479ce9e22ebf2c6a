"""`drill mock followups FILE [--phase P] [--json]`: grade a train.py the way `drill mock grade`
does, then print the pushback questions its runs and its code lead to (drill.mock.coding.followups).

Registered under `drill mock` by drill/cli/mock.py: `mock_followups.register(sub)` with the mock
command's subparsers. The grading is `drill mock grade`'s (drill.cli.mock_grade.graded_file, the
conductor's grade_file, recorded in the run log as any grading); this module reads its result.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from drill.cli.mock_grade import graded_file, print_checks
from drill.cli.output import say
from drill.mock.errors import MockError

USAGE = "usage: drill mock followups FILE [--phase P] [--json] [--prompt NAME]"
DESCRIPTION = """\
Grade FILE as the coding round's train.py (the same runs as `drill mock grade`: under torchrun,
ranks killed and relaunched), then print 3-5 follow-up questions chosen from what its runs and
its code show: a failed check asks about that failure with the run's own facts filled in (the
step a rank was killed after, where the relaunch started); a phase that held asks a harder
what-if about the script's own design (its optimizer class, how and by whom it saves, the phase
names it logs). Each question comes with the rubric a good answer states and the review cards
it links to. The script is graded by running it; the questions read its source, never run it.
Exit 0 when the questions are printed, whatever the grading found."""
WIDTH = 100


def register(subparsers: Any) -> None:
    from drill.cli.mock_args import phase_option, prompt_option

    parser = subparsers.add_parser(
        "followups",
        help="grade a script, then ask follow-up questions from its own runs and code",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(run=cmd_followups)
    parser.add_argument("file", nargs="?", metavar="FILE", help="the script to grade")
    phase_option(parser)
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the questions (and the grading's summary) as JSON",
    )
    prompt_option(parser, argparse.SUPPRESS)  # graded and asked as that prompt's round


def graded_result(args: argparse.Namespace) -> dict[str, Any]:
    """The lab result of grading FILE as `drill mock grade FILE --json` grades it."""
    return dict(graded_file(args, quiet=True).grading)


def cmd_followups(args: argparse.Namespace) -> int:
    if args.file is None:
        raise MockError(USAGE)
    from drill.mock.coding.catalogue import round_prompt
    from drill.mock.coding.followups import follow_ups
    from trainer_lab.usercode.source import ScriptError, read_script

    prompt = round_prompt(getattr(args, "prompt", None) or "ddp")  # before any grading

    path = Path(args.file)
    if not args.json:
        say(f"Grading {path}, then choosing follow-up questions ...", file=sys.stderr)
    result = graded_result(args)
    # the text that was graded: FILE, or the train.py cell a notebook's grading wrote out
    graded = (result.get("params") or {}).get("script")
    source_path = Path(graded) if isinstance(graded, str) and Path(graded).is_file() else path
    try:
        source = read_script(source_path)
    except ScriptError as error:
        raise MockError(str(error)) from None
    questions = follow_ups(result, source, prompt)
    observations = result.get("observations") or {}
    summary = {
        "script": str(path),
        "status": result.get("status"),
        "checks_passed": observations.get("checks_passed"),
        "checks_total": observations.get("checks_total"),
        "result": result.get("out_dir"),
    }
    if args.json:
        print(json.dumps({**summary, "followups": [q.to_dict() for q in questions]}, indent=1))
        return 0
    print_checks([c for c in result.get("checks") or [] if isinstance(c, dict)])
    say(
        f"{summary['checks_passed']}/{summary['checks_total']} checks hold; "
        f"{len(questions)} follow-up questions:"
    )
    for number, q in enumerate(questions, 1):
        say()
        say(f"{number}. [{q.kind}: {q.source_check}] {q.id}")
        say(_wrap(q.question, "   ", "   "))
        say("   A good answer states:")
        for item in q.rubric:
            say(_wrap(item, "   - ", "     "))
        say(_wrap("Cards: " + ", ".join(q.cards), "   ", " " * 10))
    return 0


def _wrap(text: str, first: str, rest: str) -> str:
    # card ids and check names hold hyphens: never split them
    return textwrap.fill(
        text, WIDTH, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False
    )
