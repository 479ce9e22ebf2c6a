"""`drill mock`: timed mock rounds. Registered by drill/cli.py through `register(subparsers)`.

    drill mock [ROUND] [--minutes N]   play a round (default: standard) in the TUI
    drill mock resume [ID]             resume an interrupted round (default: the latest)
    drill mock list                    the round definitions
    drill mock history                 past rounds with their bands
    drill mock report ID [--md]        a round's report (--md: full Markdown export)

Imports stay light: sqlmodel, the decks and textual load only when a command needs them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from drill.mock.errors import MockError

COMMANDS = ("list", "history", "report", "resume")
EPILOG = """\
commands:
  drill mock [ROUND] [--minutes N]  play a round (default: standard); N scales every phase
  drill mock resume [ID]            resume an interrupted round (default: the latest one)
  drill mock list                   list round definitions (bundled and in --decks dirs)
  drill mock history                past rounds with their overall band
  drill mock report ID [--md]       show a round's report; --md prints the Markdown export

In a round: type into the answer boxes (autosaved every few seconds and on every phase change),
F2 pause/resume, F3 next phase, F10 end the round, ctrl+s save now. At the end, confirm the
pre-checked rubric checklist and save: weak cards are rated Again/Hard in your review schedule.
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mock",
        help="timed 55-minute mock interview rounds with rubric grading",
        description="Timed mock rounds shaped like the real interview.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "words",
        nargs="*",
        metavar="ROUND | list | history | report ID | resume [ID]",
        help="a round id or round file (default: standard), or one of the commands below",
    )
    parser.add_argument(
        "--minutes", type=float, help="compress or stretch the round to N minutes in total"
    )
    parser.add_argument("--md", action="store_true", help="with `report`: print Markdown")
    parser.set_defaults(func=handle)


def _deck_dirs(args: argparse.Namespace) -> list[Path]:
    from drill.paths import user_deck_dirs

    return [p for p in user_deck_dirs(getattr(args, "decks", None) or []) if p.is_dir()]


def _open_store():  # -> MockStore (sqlmodel is imported here, not at module import)
    from drill.mock.launch import open_store

    return open_store()


def _round_id(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise MockError(f"round id must be a number, got {text!r}") from None


def handle(args: argparse.Namespace) -> int:
    words: list[str] = list(args.words)
    command = words[0] if words and words[0] in COMMANDS else None
    rest = words[1:] if command else words
    if args.md and command != "report":
        raise MockError("--md only goes with `drill mock report ID`")
    if args.minutes is not None and command is not None:
        raise MockError("--minutes only goes with starting a round: drill mock [ROUND] --minutes N")
    if command == "list":
        return _no_extra(rest) or cmd_list(args)
    if command == "history":
        return _no_extra(rest) or cmd_history()
    if command == "report":
        if len(rest) != 1:
            raise MockError("usage: drill mock report ID [--md]")
        return cmd_report(_round_id(rest[0]), args.md)
    if command == "resume":
        if len(rest) > 1:
            raise MockError("usage: drill mock resume [ID]")
        return cmd_resume(args, _round_id(rest[0]) if rest else None)
    if len(rest) > 1:
        raise MockError(f"one round at a time, got {' '.join(rest)!r} (see `drill mock --help`)")
    return cmd_play(args, rest[0] if rest else "standard")


def _no_extra(rest: list[str]) -> int:
    if rest:
        raise MockError(f"unexpected argument {rest[0]!r} (see `drill mock --help`)")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from drill.mock.loader import list_rounds

    for definition, path in list_rounds(_deck_dirs(args)):
        phases = ", ".join(f"{p.id} {p.minutes:g}m" for p in definition.phases)
        print(f"{definition.round:<12} {definition.total_minutes:>4g} min  {definition.title}")
        print(f"{'':<12} phases: {phases}  ({path.name})")
    return 0


def cmd_history() -> int:
    store = _open_store()
    rows = store.history()
    if not rows:
        print("No mock rounds yet. Start one with `drill mock`.")
        return 0
    for row in rows:
        result = f"{row.band} {row.score:.0%}" if row.band is not None else row.status
        print(f"{row.id:>4}  {row.started_at:%Y-%m-%d %H:%M}  {row.round_key:<10} {result}")
    return 0


def cmd_report(round_id: int, markdown: bool) -> int:
    from drill.mock.report import clock

    report = _open_store().report(round_id)
    if markdown:
        sys.stdout.write(report.to_markdown())
        return 0
    print(f"Mock round {report.round_id}: {report.title}")
    print(
        f"Overall: {report.band} ({report.score:.0%})   time {clock(report.total_used_s)}"
        f" of {clock(report.total_budget_s)}"
    )
    for phase in report.phases:
        print(
            f"  {phase.title:<45} {phase.band:<10} {phase.score:>4.0%}"
            f"  {clock(phase.used_s)} / {clock(phase.budget_s)}"
        )
    weak = report.weak_cards()
    if weak:
        print(
            "Fed back to review: "
            + ", ".join(f"{c} ({'Again' if r == 1 else 'Hard'})" for c, r in weak)
        )
    print(f"Full report: drill mock report {report.round_id} --md")
    return 0


def _play(run: Any, rate: Any) -> int:
    from drill.tui.mock_screen import MockApp

    MockApp(run, rate=rate).run()
    if run.dirty:
        run.autosave()
    if run.store.load(run.round_id).status != "done":
        print(f"Round {run.round_id} saved. Resume with: drill mock resume {run.round_id}")
    else:
        print(f"Report: drill mock report {run.round_id} --md")
    return 0


def cmd_play(args: argparse.Namespace, name: str) -> int:
    from drill.mock.launch import start_round

    return _play(*start_round(name, args.minutes, getattr(args, "decks", None) or None))


def cmd_resume(args: argparse.Namespace, round_id: int | None) -> int:
    from drill.mock.launch import resume_round

    return _play(*resume_round(round_id, getattr(args, "decks", None) or None))
