"""`drill mock`: timed mock rounds. Registered by drill/cli/main.py through `register(subparsers)`.

    drill mock [--minutes N] [--stretch accum,fsdp2]   the standard round: the coding round
    drill mock talk [ROUND] [--minutes N]   a talk-only practice round (default: standard)
    drill mock ROUND [--minutes N]     the same as `drill mock talk ROUND`
    drill mock resume [ID]             resume an interrupted round (default: the latest)
    drill mock list                    the round definitions
    drill mock history                 past rounds with their bands
    drill mock report ID [--md]        a round's report (--md: full Markdown export)
    drill mock report coding ID [--md] a coding round's report
    drill mock grade FILE [--phase P] [--json]   grade a train.py (or a notebook's train.py cell)
    drill mock notebook [OUT.ipynb] [--minutes N]   the coding round in a notebook, with its clock
    drill mock watch [ROUND]           a coding round's clock and gradings in the terminal
    drill mock contract                the coding round's contract and its dataset module
    drill mock coding [resume [ID]] [--minutes N]   the coding round (editor, clock, grading)

Each command is an argparse subcommand; a first word that is none of them is the talk-only round
to play (`drill mock quick` runs `drill mock play quick`; `talk` is `play` by a clearer name).
Imports stay light: sqlmodel, the decks, textual and the grader's harness load only when a
command needs them.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from drill.cli import mock_coding
from drill.cli.mock_args import (
    coding_rounds,
    command,
    minutes_option,
    prompt_option,
    round_id,
    stretch_option,
)
from drill.cli.mock_coding import (
    cmd_coding,
    cmd_coding_report,
    cmd_contract,
    cmd_notebook,
    cmd_standard,
    play_coding,
)
from drill.cli.mock_followups import cmd_followups
from drill.cli.mock_grade import cmd_grade
from drill.cli.output import say
from drill.mock.errors import MockError
from drill.text import printable

PLAY = "play"
EPILOG = """\
The standard round is the coding round, as the interview runs it: clarify, skeleton,
distributed lift, monitoring and restart (write train.py; each phase's checks run by
themselves), then pushback (follow-up questions about your own code, one at a time, each on
its own clock; the answers are kept in the notes).

  drill mock                  start it in the app (= drill mock coding; --minutes N scales it;
                              --stretch accum,fsdp2 adds stretch phases after it, in order)
  drill mock notebook         start it as a Jupyter notebook; drill mock watch keeps its clock
  drill mock resume           go on with the latest interrupted round, of either kind
  drill mock talk [ROUND]     talk-only practice: timed questions answered in text boxes,
                              graded by rubric (default: standard; `drill mock quick` = 10 min)

`drill mock COMMAND --help` explains each. In a talk-only round: type into the answer boxes
(autosaved every few seconds and on every phase change), F2 pause/resume, F3 next phase, F10
end the round (asked first), ctrl+s save now. At the end, the pre-checked rubric checklist:
up/down move, space flips, enter confirms (the cards of answered prompts that were not fully
covered are rated Again/Hard in your review schedule), n saves without rating. No card is
rated before you confirm, in a coding round too (`drill mock rate ID --confirm` from a shell).
"""


class _CommandOrRound(argparse._SubParsersAction):  # argparse's subcommand action
    """Subcommands where the first word may instead name a round: a word that is no command is
    handed to the `play` subcommand (`drill mock quick` runs as `drill mock play quick`). An
    argument the subcommand does not take is its error (`drill mock list: error: ...`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.choices = None  # any first word is accepted: a round id or round file

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if values and values[0] not in self._name_parser_map:
            values = [PLAY, *values]
        super().__call__(parser, namespace, values, option_string)
        extra = vars(namespace).pop(argparse._UNRECOGNIZED_ARGS_ATTR, None)
        if extra:
            self._name_parser_map[values[0]].error(f"unrecognized arguments: {' '.join(extra)}")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mock",
        help="timed 55-minute mock interview rounds with rubric grading",
        description="Timed mock rounds shaped like the real interview. `drill mock` alone starts "
        "the standard round, the coding round (write train.py; it is graded by what it does).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    minutes_option(parser)  # `drill mock --minutes N`: the standard (coding) round, rescaled
    stretch_option(parser)
    prompt_option(parser)  # `drill mock --prompt NAME`: the coding round on that prompt
    parser.set_defaults(func=handle, run=cmd_standard, round="standard")
    sub = parser.add_subparsers(
        action=_CommandOrRound, dest="mock_command", metavar="[ROUND] | COMMAND"
    )
    _add_round_commands(sub)
    mock_coding.register(sub)


def _add_round_commands(sub: Any) -> None:
    for name, text in (
        ("talk", "a talk-only practice round in the TUI (default: standard's talk track)"),
        (PLAY, "the same as talk (`drill mock ROUND` is the same too)"),
    ):
        play = command(
            sub,
            name,
            cmd_play,
            text,
            "Play a talk-only practice round in the TUI: timed questions answered in text\n"
            "boxes, graded by rubric. ROUND: standard (the interview's time table, talk only),\n"
            "quick (10 minutes) or any round of `drill mock list`. The standard round with\n"
            "code is the coding round: `drill mock` or `drill mock coding`.",
        )
        play.add_argument(
            "round",
            nargs="?",
            default="standard",
            metavar="ROUND",
            help="a round id (see `drill mock list`) or a round file",
        )
        minutes_option(play, argparse.SUPPRESS)  # SUPPRESS: keeps `drill mock --minutes N play`

    resume = command(
        sub,
        "resume",
        cmd_resume,
        "resume an interrupted round, text or coding (default: the latest one)",
    )
    resume.add_argument("id", nargs="?", metavar="ID", help="the round's id (drill mock history)")

    command(sub, "list", cmd_list, "list round definitions (bundled and in --decks dirs)")
    command(sub, "history", cmd_history, "past rounds with their overall band")

    report = command(
        sub,
        "report",
        cmd_report,
        "show a round's report",
        "Show a round's report: `drill mock report ID` a text round's (bands per phase, the "
        "cards fed back), `drill mock report coding ID` a coding round's (checks per phase "
        "with their evidence, time, code).",
    )
    report.add_argument("words", nargs="*", metavar="[coding] ID", help="the round's id")
    report.add_argument("--md", action="store_true", help="print the full Markdown export")


def _deck_dirs(args: argparse.Namespace) -> list[Path]:
    from drill.paths import user_deck_dirs

    return [p for p in user_deck_dirs(getattr(args, "decks", None) or []) if p.is_dir()]


def handle(args: argparse.Namespace) -> int:
    """Check --minutes, then run the subcommand. Only starting a round takes --minutes; `drill
    mock --minutes N list` parses it before `list`, so it is refused here."""
    minutes = args.minutes
    if minutes is not None and not (math.isfinite(minutes) and minutes > 0):
        raise MockError(f"--minutes must be a positive number, got {minutes:g}")
    if minutes is not None and args.run not in (cmd_play, cmd_coding, cmd_standard, cmd_notebook):
        raise MockError("--minutes only goes with starting a round: drill mock [ROUND] --minutes N")
    prompted = (cmd_coding, cmd_standard, cmd_notebook, cmd_grade, cmd_contract, cmd_followups)
    if getattr(args, "prompt", None) is not None and args.run not in prompted:
        raise MockError(
            "--prompt goes with a coding round: drill mock --prompt NAME, drill mock notebook "
            "--prompt NAME, drill mock grade/contract --prompt NAME"
        )
    if getattr(args, "stretch", None) is not None and args.prompt not in (None, "ddp"):
        raise MockError("--stretch goes with the DDP round's prompt (stretch phases extend it)")
    if getattr(args, "stretch", None) is not None:
        if args.run not in (cmd_coding, cmd_standard, cmd_notebook) or getattr(args, "out", None):
            raise MockError(
                "--stretch goes with starting a coding round: drill mock --stretch accum,fsdp2"
            )
        from drill.mock.coding.stretch import parse_choice

        try:
            args.stretch = parse_choice(args.stretch)
        except ValueError as error:
            raise MockError(f"--stretch: {error}") from None
    return args.run(args)


def cmd_list(args: argparse.Namespace) -> int:
    from drill.mock.coding.past import CODING_TITLE
    from drill.mock.coding.session import CODING_PHASES
    from drill.mock.loader import list_rounds

    total = sum(p.minutes for p in CODING_PHASES)
    say(f"{'coding':<12} {total:>4g} min  {CODING_TITLE}")
    phases = ", ".join(f"{p.id} {p.minutes:g}m" for p in CODING_PHASES)
    say(f"{'':<12} phases: {phases}")
    from drill.mock.coding.catalogue import catalogue

    others = "".join(f" · --prompt {p.id}: {p.title} ({p.minutes} min)"
                     for p in catalogue() if p.id != "ddp")  # fmt: skip
    say(f"{'':<12} play: drill mock coding · in a notebook: drill mock notebook{others}")
    for definition, path in list_rounds(_deck_dirs(args)):
        phases = ", ".join(f"{p.id} {p.minutes:g}m" for p in definition.phases)
        say(f"{definition.round:<12} {definition.total_minutes:>4g} min  {definition.title}")
        say(f"{'':<12} phases: {phases}  ({path.name})")
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    from drill.cli.services import open_services
    from drill.mock.coding.past import coding_history

    with open_services(args) as services:
        rows = services.mock_store.history()
    coding = coding_history(coding_rounds())
    if not rows and not coding:
        say("No mock rounds yet. Start one with `drill mock coding` or `drill mock notebook`.")
        return 0
    lines = [
        (row.started_at, f"{row.id:>4}  {row.started_at:%Y-%m-%d %H:%M}  {row.round_key:<10} "
         f"{f'{row.band} {row.score:.0%}' if row.band is not None else row.status}")
        for row in rows
    ] + [
        (row.started_at, f"{row.id:>4}  {row.started_at:%Y-%m-%d %H:%M}  {row.kind:<10} "
         f"{row.result()}")
        for row in coding
    ]  # fmt: skip
    say(f"{'ID':>4}  {'STARTED (UTC)':<16}  {'ROUND':<10} RESULT")
    for _, line in sorted(lines, key=lambda pair: _utc(pair[0]), reverse=True):
        say(printable(line))
    if coding:
        say("Reports: drill mock report coding ID (coding, notebook); drill mock report ID (talk)")
    return 0


def _utc(moment: Any) -> Any:
    from datetime import UTC

    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def cmd_report(args: argparse.Namespace) -> int:
    words = list(args.words)
    if len(words) == 2 and words[0] == "coding":
        return cmd_coding_report(round_id(words[1]), args.md)
    if len(words) != 1:
        raise MockError("usage: drill mock report [coding] ID [--md]")
    from drill.cli.services import open_services

    with open_services(args) as services:
        report = services.mock_store.report(round_id(words[0]))
    return _text_report(report, args.md)


def _text_report(report: Any, markdown: bool) -> int:  # report: RoundReport
    from drill.mock.report import clock

    if markdown:
        sys.stdout.write(printable(report.to_markdown()))
        return 0
    say(f"Mock round {report.round_id}: {report.title}")
    say(
        f"Overall: {report.band} ({report.score:.0%})   time {clock(report.total_used_s)}"
        f" of {clock(report.total_budget_s)}"
    )
    for phase in report.phases:
        say(
            f"  {phase.title:<45} {phase.band:<10} {phase.score:>4.0%}"
            f"  {clock(phase.used_s)} / {clock(phase.budget_s)}"
        )
    fed = [p.feedback for phase in report.phases for p in phase.prompts if p.feedback]
    if fed:  # what each rating did to its card (issue 34), as the report stored it
        say("Fed back to review:")
        for line in fed:
            say(f"  {line}")
    say(f"Full report: drill mock report {report.round_id} --md")
    return 0


def _play(run: Any, rate: Any) -> int:
    from drill.tui.screens.mock_round import MockApp

    MockApp(run, rate=rate).run()
    if run.dirty:
        run.autosave()
    if run.store.load(run.round_id).status != "done":
        say(f"Round {run.round_id} saved. Resume with: drill mock resume {run.round_id}")
    else:
        say(f"Report: drill mock report {run.round_id} --md")
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from drill.cli.services import open_services

    with open_services(args) as services:
        return _play(*services.start_mock(args.round, args.minutes))


def cmd_resume(args: argparse.Namespace) -> int:
    from drill.cli.services import open_services

    chosen = round_id(args.id) if args.id is not None else None
    with open_services(args) as services:
        if chosen is None:
            latest = services.interrupted_mock()
            if latest is None:
                raise MockError("no interrupted mock round to resume (see `drill mock history`)")
            if latest[0] == "coding":
                return play_coding(latest[1], services)
            chosen = latest[1]
        return _play(*services.resume_mock(chosen))
