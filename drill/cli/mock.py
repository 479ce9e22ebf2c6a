"""`drill mock`: timed mock rounds. Registered by drill/cli/main.py through `register(subparsers)`.

    drill mock [ROUND] [--minutes N]   play a round (default: standard) in the TUI
    drill mock resume [ID]             resume an interrupted round (default: the latest)
    drill mock list                    the round definitions
    drill mock history                 past rounds with their bands
    drill mock report ID [--md]        a round's report (--md: full Markdown export)
    drill mock report coding ID [--md] a coding round's report
    drill mock grade FILE [--phase P] [--json]   grade a train.py against the coding contract
    drill mock contract                the coding round's contract and its dataset module
    drill mock coding [resume [ID]] [--minutes N]   the coding round (editor, clock, grading)

Imports stay light: sqlmodel, the decks and textual load only when a command needs them.
"""

from __future__ import annotations

import argparse
import math
import sys
import textwrap
from pathlib import Path
from typing import Any

from drill.mock.errors import MockError

COMMANDS = ("list", "history", "report", "resume", "grade", "contract", "coding")
PHASES = ("skeleton", "distributed", "restart", "torn", "monitoring")  # = coding.contract.PHASES
EPILOG = """\
commands:
  drill mock [ROUND] [--minutes N]  play a round (default: standard); N scales every phase
  drill mock resume [ID]            resume an interrupted round (default: the latest one)
  drill mock list                   list round definitions (bundled and in --decks dirs)
  drill mock history                past rounds with their overall band
  drill mock report ID [--md]       show a round's report; --md prints the Markdown export
  drill mock report coding ID [--md]  a coding round's report (checks per phase, time, code)
  drill mock grade FILE [--phase P] [--json]
                                    run FILE as the coding round's train.py and grade what it
                                    does (phases: skeleton, distributed, restart, torn,
                                    monitoring; default all); exit 0 all checks hold, 1 not
  drill mock contract               print the coding round's contract and dataset module
  drill mock coding [--minutes N]   a coding round: write train.py beside the contract, ctrl+r
                                    grades it by running it; files in DRILL_HOME/rounds/<id>/
  drill mock coding resume [ID]     resume a coding round (default: the latest)

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
    parser.add_argument(
        "--phase",
        action="append",
        metavar="P",
        help="with `grade`: grade only this phase (repeatable; default: all)",
    )
    parser.add_argument("--json", action="store_true", help="with `grade`: print result.json")
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
    if args.minutes is not None and not (math.isfinite(args.minutes) and args.minutes > 0):
        raise MockError(f"--minutes must be a positive number, got {args.minutes:g}")
    if (args.phase or args.json) and command != "grade":
        raise MockError("--phase and --json only go with `drill mock grade FILE`")
    if command == "coding":
        return cmd_coding(rest, args.minutes)
    if args.minutes is not None and command is not None:
        raise MockError("--minutes only goes with starting a round: drill mock [ROUND] --minutes N")
    if command == "list":
        return _no_extra(rest) or cmd_list(args)
    if command == "history":
        return _no_extra(rest) or cmd_history()
    if command == "report":
        if len(rest) == 2 and rest[0] == "coding":
            return cmd_coding_report(_round_id(rest[1]), args.md)
        if len(rest) != 1:
            raise MockError("usage: drill mock report [coding] ID [--md]")
        return cmd_report(_round_id(rest[0]), args.md)
    if command == "grade":
        if len(rest) != 1:
            raise MockError("usage: drill mock grade FILE [--phase P] [--json]")
        return cmd_grade(Path(rest[0]), args.phase or list(PHASES), args.json)
    if command == "contract":
        return _no_extra(rest) or cmd_contract()
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
    from drill.tui.screens.mock_round import MockApp

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
    from drill.mock.launch import latest_interrupted, open_store, resume_round

    if round_id is None:
        latest = latest_interrupted(open_store())
        if latest is None:
            raise MockError("no interrupted mock round to resume (see `drill mock history`)")
        if latest[0] == "coding":
            return _play_coding(latest[1])
        round_id = latest[1]
    return _play(*resume_round(round_id, getattr(args, "decks", None) or None))


def cmd_contract() -> int:
    from drill.mock.coding.contract import CONTRACT, DATASET_MODULE_FILE, dataset_source

    print(CONTRACT)
    print(f"--- {DATASET_MODULE_FILE} (the given dataset module; import it from train.py) ---")
    sys.stdout.write(dataset_source())
    return 0


def _print_checks(checks: list[dict[str, Any]]) -> None:
    width = max((len(c["name"]) for c in checks), default=0)
    indent = " " * (width + 8)
    for c in checks:
        verdict = "PASS" if c["passed"] else "FAIL"
        lines = textwrap.wrap(c["detail"], 100 - len(indent)) or [""]
        print(f"{verdict:<4}  {c['name']:<{width}}  {lines[0]}")
        for line in lines[1:]:
            print(indent + line)


def cmd_grade(path: Path, phases: list[str], as_json: bool) -> int:
    unknown = [p for p in phases if p not in PHASES]
    if unknown:
        raise MockError(f"unknown phase {unknown[0]!r}; phases: {', '.join(PHASES)}")
    if not path.is_file():
        raise MockError(f"no such file: {path}")
    import json

    from drill.mock.coding.grader import ScriptError, grade
    from drill.paths import new_run_dir, runs_dir

    def progress(message: str) -> None:
        print(f"  {message}", file=sys.stderr, flush=True)

    out_dir = new_run_dir(runs_dir(), "mock-coding")
    if not as_json:
        print(f"Grading {path} against the coding contract ({', '.join(phases)})", file=sys.stderr)
    try:
        result = grade(path, out_dir, phases=phases, on_progress=None if as_json else progress)
    except ScriptError as error:
        raise MockError(str(error)) from None
    from drill.mock.coding.history import record_grading

    record_grading(result, out_dir, lambda line: print(line, file=sys.stderr, flush=True))
    if as_json:
        print(json.dumps(result, indent=1, default=str))
    else:
        _print_checks(list(result["checks"]))
        causes = result["observations"].get("likely_causes") or []
        if causes:
            print("Likely causes:")
            for cause in causes:
                print(textwrap.fill(cause, 100, initial_indent="  - ", subsequent_indent="    "))
        passed = result["observations"]["checks_passed"]
        total = result["observations"]["checks_total"]
        print(f"{passed}/{total} checks hold ({result['duration_s']:.0f} s); result: {out_dir}")
    return 0 if result["status"] == "ok" else 1


def cmd_coding(rest: list[str], minutes: float | None) -> int:
    from drill.mock.coding.session import CodingSession
    from drill.paths import drill_home

    rounds = drill_home() / "rounds"
    if not rest:
        session = CodingSession.create(rounds, minutes)
    elif rest[0] == "resume" and len(rest) <= 2 and minutes is None:
        if len(rest) == 2:
            session = _coding_session(_round_id(rest[1]))
        else:
            latest = CodingSession.latest(rounds) if rounds.is_dir() else None
            if latest is None:
                raise MockError("no coding round to resume; start one with `drill mock coding`")
            session = latest
    else:
        raise MockError("usage: drill mock coding [--minutes N] | drill mock coding resume [ID]")
    return _play_coding(session)


def _coding_session(round_id: int) -> Any:
    from drill.mock.coding.session import CodingSession, default_rounds_dir

    folder = default_rounds_dir() / str(round_id)
    if not (folder / "train.py").is_file():
        raise MockError(f"no coding round with id {round_id}")
    return CodingSession(folder)


def cmd_coding_report(round_id: int, markdown: bool) -> int:
    from drill.mock.coding.report import build_report, to_markdown
    from drill.mock.report import clock

    report = build_report(_coding_session(round_id))
    if markdown:
        sys.stdout.write(to_markdown(report))
        return 0
    print(f"Coding round {report.round_id}: {report.grades} grading runs")
    for phase in report.phases:
        held = sum(1 for c in phase.checks if c["passed"])
        counts = f"  {held}/{len(phase.checks)} checks hold" if phase.checks else ""
        print(f"  {phase.title:<42} {clock(phase.used_s):>6} of {clock(phase.budget_s)}{counts}")
    _print_checks([c for c in report.checks if not c["passed"]])
    cards = report.failed_cards()
    if cards:
        print("Linked review cards: " + ", ".join(cards))
    print(f"Full report: drill mock report coding {report.round_id} --md")
    return 0


def _play_coding(session: Any) -> int:
    from drill.tui.screens.coding_round import CodingApp

    CodingApp(session).run()
    session.save()
    print(f"Coding round {session.round_id}: {session.script}")
    if session.finished:
        print(f"Report: drill mock report coding {session.round_id} --md")
    else:
        print(f"Resume with: drill mock coding resume {session.round_id}")
    return 0
