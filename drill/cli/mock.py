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
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.cli.output import say
from drill.errors import DrillError
from drill.mock.errors import MockError
from drill.text import printable
from storage.errors import DatabaseError
from trainer_lab.grading import PHASES

if TYPE_CHECKING:
    from drill.services import Services

PLAY = "play"
EPILOG = """\
The standard round is the coding round, as the interview runs it: clarify, skeleton,
distributed lift, monitoring and restart (write train.py; each phase's checks run by
themselves), then pushback (follow-up questions about your own code, answered in the notes).

  drill mock                  start it in the app (= drill mock coding; --minutes N scales it;
                              --stretch accum,fsdp2 adds stretch phases after it, in order)
  drill mock notebook         start it as a Jupyter notebook; drill mock watch keeps its clock
  drill mock resume           go on with the latest interrupted round, of either kind
  drill mock talk [ROUND]     talk-only practice: timed questions answered in text boxes,
                              graded by rubric (default: standard; `drill mock quick` = 10 min)

`drill mock COMMAND --help` explains each. In a talk-only round: type into the answer boxes
(autosaved every few seconds and on every phase change), F2 pause/resume, F3 next phase, F10
end the round (asked first), ctrl+s save now. At the end, confirm the pre-checked rubric
checklist and save: the cards of answered prompts that were not fully covered are rated
Again/Hard in your review schedule.
"""
MINUTES_HELP = "compress or stretch the round to N minutes in total (every phase scales)"
STRETCH_HELP = (
    "stretch phases chosen up front, run in this order after the round: "
    "accum, amp, fsdp2, throughput (comma-separated)"
)


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


def _minutes_option(parser: argparse.ArgumentParser, default: object = None) -> None:
    parser.add_argument("--minutes", type=float, metavar="N", default=default, help=MINUTES_HELP)


def _stretch_option(parser: argparse.ArgumentParser, default: object = None) -> None:
    parser.add_argument("--stretch", metavar="P,P", default=default, help=STRETCH_HELP)


def _command(sub: Any, name: str, func: Any, text: str, description: str = "") -> Any:
    parser = sub.add_parser(
        name,
        help=text,
        description=description or text[0].upper() + text[1:] + ".",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(run=func)
    return parser


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mock",
        help="timed 55-minute mock interview rounds with rubric grading",
        description="Timed mock rounds shaped like the real interview. `drill mock` alone starts "
        "the standard round, the coding round (write train.py; it is graded by what it does).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _minutes_option(parser)  # `drill mock --minutes N`: the standard (coding) round, rescaled
    _stretch_option(parser)
    parser.set_defaults(func=handle, run=cmd_standard, round="standard")
    sub = parser.add_subparsers(
        action=_CommandOrRound, dest="mock_command", metavar="[ROUND] | COMMAND"
    )
    _add_round_commands(sub)
    _add_coding_commands(sub)


def _add_round_commands(sub: Any) -> None:
    for name, text in (
        ("talk", "a talk-only practice round in the TUI (default: standard's talk track)"),
        (PLAY, "the same as talk (`drill mock ROUND` is the same too)"),
    ):
        play = _command(
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
        _minutes_option(play, argparse.SUPPRESS)  # SUPPRESS: keeps `drill mock --minutes N play`

    resume = _command(
        sub,
        "resume",
        cmd_resume,
        "resume an interrupted round, text or coding (default: the latest one)",
    )
    resume.add_argument("id", nargs="?", metavar="ID", help="the round's id (drill mock history)")

    _command(sub, "list", cmd_list, "list round definitions (bundled and in --decks dirs)")
    _command(sub, "history", cmd_history, "past rounds with their overall band")

    report = _command(
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


def _add_coding_commands(sub: Any) -> None:
    grade = _command(
        sub,
        "grade",
        cmd_grade,
        "grade any script against the coding contract",
        "Run FILE as the coding round's train.py (under torchrun, ranks killed and relaunched)\n"
        "and grade what it does. Exit 0 when every check holds, 1 when one does not.\n\n"
        "A Jupyter notebook (FILE.ipynb) is read, never run: the last code cell whose first\n"
        "line is `%%writefile train.py` (or `%%writefile ./train.py`, `%%file train.py`) is\n"
        "graded as train.py, exactly like a file (see `drill mock notebook`).",
    )
    grade.add_argument(
        "file", nargs="?", metavar="FILE", help="the script to grade, or a notebook (.ipynb)"
    )
    grade.add_argument(
        "--phase",
        action="append",
        metavar="P",
        help=f"grade only this phase (repeatable; default: all): {', '.join(PHASES)}",
    )
    grade.add_argument("--json", action="store_true", help="print result.json instead")

    _command(sub, "contract", cmd_contract, "print the coding contract and the dataset module")

    from drill.cli import mock_followups, mock_watch

    mock_followups.register(sub)
    mock_watch.register(sub)

    notebook = _command(
        sub,
        "notebook",
        cmd_notebook,
        "the standard round in a Jupyter notebook (as in a Colab interview)",
        "Start the standard (coding) round as a Jupyter notebook: per phase its prompt and the\n"
        "contract's checks, one `%%writefile train.py` cell (the starter), a `!torchrun\n"
        "--nproc-per-node 2 train.py ...` cell and a notes cell, with drill_data.py beside it.\n"
        "Default: a new round DRILL_HOME/rounds/<id>/round.ipynb with its clock: keep time and\n"
        "have each phase graded with `drill mock watch` (or `drill mock coding resume <id>`).\n"
        "With OUT.ipynb: only the notebook, there (no round, no clock). An existing notebook,\n"
        "or a drill_data.py there that is not drill's, is never replaced (exit 2). Grade it any\n"
        "time with `drill mock grade NOTEBOOK.ipynb`.",
    )
    notebook.add_argument(
        "out", nargs="?", metavar="OUT.ipynb", help="where to write it (default: a new workspace)"
    )
    _minutes_option(notebook, argparse.SUPPRESS)  # the new round's clock, scaled
    _stretch_option(notebook, argparse.SUPPRESS)

    coding = _command(
        sub,
        "coding",
        cmd_coding,
        "the coding round: write train.py, graded by what it does",
        "The coding round: train.py beside the contract in an editor, a phase clock; ctrl+r\n"
        "grades it by running it. Files in DRILL_HOME/rounds/<id>/.",
    )
    _minutes_option(coding, argparse.SUPPRESS)
    _stretch_option(coding, argparse.SUPPRESS)
    coding_sub = coding.add_subparsers(dest="coding_command", metavar="{resume}")
    coding_resume = _command(
        coding_sub, "resume", cmd_coding_resume, "resume a coding round (default: the latest)"
    )
    coding_resume.add_argument("id", nargs="?", metavar="ID", help="the coding round's id")


def _deck_dirs(args: argparse.Namespace) -> list[Path]:
    from drill.paths import user_deck_dirs

    return [p for p in user_deck_dirs(getattr(args, "decks", None) or []) if p.is_dir()]


MAX_ROUND_ID = 2**63 - 1  # SQLite's largest integer: a larger id names no round


def _round_id(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise MockError(f"round id must be a number, got {printable(repr(text))}") from None
    if not 1 <= number <= MAX_ROUND_ID:
        raise MockError(f"no round with id {text[:40]} (ids are whole numbers from 1)")
    return number


def handle(args: argparse.Namespace) -> int:
    """Check --minutes, then run the subcommand. Only starting a round takes --minutes; `drill
    mock --minutes N list` parses it before `list`, so it is refused here."""
    minutes = args.minutes
    if minutes is not None and not (math.isfinite(minutes) and minutes > 0):
        raise MockError(f"--minutes must be a positive number, got {minutes:g}")
    if minutes is not None and args.run not in (cmd_play, cmd_coding, cmd_standard, cmd_notebook):
        raise MockError("--minutes only goes with starting a round: drill mock [ROUND] --minutes N")
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


def _new_coding_session(args: argparse.Namespace, *, notebook: bool = False) -> Any:
    """A new coding round, scaled by --minutes, with the --stretch phases chosen up front."""
    from drill.mock.coding.session import CodingSession
    from drill.mock.coding.stretch import choose

    try:
        session = CodingSession.create(_coding_rounds(), args.minutes, notebook=notebook)
    except OSError as error:
        raise MockError(f"cannot create the round: {error.strerror or error}") from None
    if getattr(args, "stretch", None):
        choose(session, args.stretch)
        session.save()
    return session


def cmd_list(args: argparse.Namespace) -> int:
    from drill.mock.coding.session import CODING_PHASES
    from drill.mock.loader import list_rounds
    from drill.mock.past import CODING_TITLE

    total = sum(p.minutes for p in CODING_PHASES)
    say(f"{'coding':<12} {total:>4g} min  {CODING_TITLE}")
    phases = ", ".join(f"{p.id} {p.minutes:g}m" for p in CODING_PHASES)
    say(f"{'':<12} phases: {phases}")
    say(f"{'':<12} play: drill mock coding · in a notebook: drill mock notebook")
    for definition, path in list_rounds(_deck_dirs(args)):
        phases = ", ".join(f"{p.id} {p.minutes:g}m" for p in definition.phases)
        say(f"{definition.round:<12} {definition.total_minutes:>4g} min  {definition.title}")
        say(f"{'':<12} phases: {phases}  ({path.name})")
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    from drill.cli.services import open_services
    from drill.mock.past import coding_history

    with open_services(args) as services:
        rows = services.mock_store.history()
    coding = coding_history(_coding_rounds())
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
        return cmd_coding_report(_round_id(words[1]), args.md)
    if len(words) != 1:
        raise MockError("usage: drill mock report [coding] ID [--md]")
    from drill.cli.services import open_services

    with open_services(args) as services:
        report = services.mock_store.report(_round_id(words[0]))
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

    round_id = _round_id(args.id) if args.id is not None else None
    with open_services(args) as services:
        if round_id is None:
            latest = services.interrupted_mock()
            if latest is None:
                raise MockError("no interrupted mock round to resume (see `drill mock history`)")
            if latest[0] == "coding":
                return _play_coding(latest[1], services)
            round_id = latest[1]
        return _play(*services.resume_mock(round_id))


def cmd_contract(args: argparse.Namespace) -> int:
    from trainer_lab.grading import CONTRACT, DATASET_MODULE_FILE, dataset_source

    say(CONTRACT)
    say(f"--- {DATASET_MODULE_FILE} (the given dataset module; import it from train.py) ---")
    sys.stdout.write(dataset_source())
    return 0


def _wrap(text: str, width: int, **options: str) -> list[str]:
    """Lines of at most `width` where words allow: a word (a path, a prompt's term) is never
    cut in two; one longer than the line stands on a line of its own."""
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False, **options)


def _print_verdicts(result: dict[str, Any]) -> None:
    """A reason several checks share once (with the checks it affects), then each check."""
    from trainer_lab.usercode.verdict import shared_reasons

    reasons, checks = shared_reasons(result)
    for reason in reasons:
        head = f"{reason.label}: {reason.text}"
        say("\n".join(_wrap(head, 100, subsequent_indent="    ")))
        say("\n".join(_wrap(reason.affects, 100, initial_indent="  ", subsequent_indent="    ")))
    _print_checks([dict(c) for c in checks])


def _print_checks(checks: list[dict[str, Any]]) -> None:
    width = max((len(c["name"]) for c in checks), default=0)
    indent = " " * (width + 8)
    for c in checks:
        verdict = "PASS" if c["passed"] else "FAIL"
        lines = _wrap(c["detail"], 100 - len(indent)) or [""]
        say(f"{verdict:<4}  {c['name']:<{width}}  {lines[0]}")
        for line in lines[1:]:
            say(indent + line)


def cmd_grade(args: argparse.Namespace) -> int:
    if args.file is None:
        raise MockError("usage: drill mock grade FILE [--phase P] [--json]")
    phases: list[str] = args.phase or list(PHASES)
    unknown = [p for p in phases if p not in PHASES]
    if unknown:
        raise MockError(f"unknown phase {unknown[0]!r}; phases: {', '.join(PHASES)}")
    path = Path(args.file)
    notebook = path.suffix.lower() == ".ipynb"
    if not notebook and not path.is_file():
        raise MockError(f"no such file: {path}")
    import json

    from drill.paths import new_run_dir, runs_dir
    from trainer_lab.grading import LAB, ScriptError, grade

    def progress(message: str) -> None:
        say(f"  {message}", file=sys.stderr, flush=True)

    out_dir = new_run_dir(runs_dir(), LAB)
    graded = path
    if notebook:  # the cell's train.py, graded like a file (the notebook itself is never run)
        graded, cell = _notebook_script(path, out_dir)
        say(f"Graded: {cell}", file=sys.stdout if not args.json else sys.stderr)
    if not args.json:
        say(f"Grading {path} against the coding contract ({', '.join(phases)})", file=sys.stderr)
    try:
        grading = grade(graded, out_dir, phases, on_progress=None if args.json else progress)
    except ScriptError as error:
        raise MockError(str(error)) from None
    from drill.cli.services import open_services

    def notice(line: str) -> None:
        say(line, file=sys.stderr, flush=True)

    try:
        with open_services(args) as services:
            services.record_grading(grading, out_dir, notice)
    except (DrillError, DatabaseError) as error:  # the grading stands; only its log entry is lost
        notice(f"drill mock: notice: this grading is not recorded in the run log: {error}")
    if args.json:
        print(json.dumps(dict(grading), indent=1, default=str))
    else:
        _print_verdicts(dict(grading))
        if grading.likely_causes:
            say("Likely causes:")
            for cause in grading.likely_causes:
                say("\n".join(_wrap(cause, 100, initial_indent="  - ", subsequent_indent="    ")))
        say(
            f"{grading.passed}/{grading.total} checks hold ({grading.duration_s:.0f} s); "
            f"result: {out_dir}"
        )
    return 0 if grading.ok else 1


def _notebook_script(path: Path, out_dir: Path) -> tuple[Path, str]:
    """The notebook's graded train.py, written to out_dir/notebook/train.py, and which cell it
    came from (a line for the report)."""
    from drill.mock.notebook import find_train_cell

    cell = find_train_cell(path)
    script = out_dir / "notebook" / "train.py"
    try:
        script.parent.mkdir(parents=True)
        script.write_text(cell.source, encoding="utf-8")
    except OSError as error:
        raise MockError(f"cannot write {script}: {error.strerror or error}") from None
    where = (
        f"cell {cell.number} of {cell.cells} in {path} ({cell.magic}; train.py line 1 is the "
        f"cell's line {cell.first_line})"
    )
    return script, where


def cmd_notebook(args: argparse.Namespace) -> int:
    from shlex import quote

    from drill.mock.notebook import write_round_notebook

    if args.out and args.minutes is not None:
        raise MockError("--minutes goes with a new round: drill mock notebook --minutes N")
    if args.out:  # just the notebook, where asked: no round, no clock
        from drill.files import require_parent_dir

        require_parent_dir(Path(args.out))
        path = write_round_notebook(Path(args.out))
        say(f"Notebook: {printable(str(path))}  (drill_data.py beside it)")
        say(f"Open it:  {_open_line(path)}")
        say(f"Grade it: drill mock grade {printable(quote(str(path)))}")
        return 0
    session = _new_coding_session(args, notebook=True)
    path = session.notebook_path
    say(f"Notebook round {session.round_id}: {printable(str(path))}  (drill_data.py beside it)")
    say(f"Open it:   {_open_line(path)}")
    say(f"The clock: drill mock watch {session.round_id}   (or in the app: drill mock coding "
        f"resume {session.round_id})")  # fmt: skip
    say(f"Grade now: drill mock grade {printable(quote(str(path)))}")
    if args.stretch:
        say(f"Stretch:   {', '.join(args.stretch)} after the round, in this order")
    return 0


def _open_line(path: Path) -> str:
    from shlex import quote

    folder, name = quote(str(path.parent)), quote(path.name)
    return printable(f"cd {folder} && jupyter lab {name}   (or VS Code; Colab: upload both)")


def _coding_rounds() -> Path:
    from drill.paths import drill_home

    return drill_home() / "rounds"


STANDARD_INTRO = (
    "The standard round: the coding round (write train.py; each phase's checks run when it\n"
    "ends; pushback asks about your own code). Also: drill mock notebook (in Jupyter),\n"
    "drill mock talk (talk-only practice), drill mock resume, drill mock --help."
)


def cmd_standard(args: argparse.Namespace) -> int:
    """`drill mock` alone: the standard round, which is the coding round, in the app; the other
    ways to play are named first, on the terminal (flushed before the app takes the screen) and
    in the app as its opening notice (the app's screen hides the terminal while it runs)."""
    say(STANDARD_INTRO, flush=True)
    return cmd_coding(args, intro=" ".join(STANDARD_INTRO.split()))


def cmd_coding(args: argparse.Namespace, intro: str = "") -> int:
    from drill.cli.services import open_services

    with open_services(args) as services:
        return _play_coding(_new_coding_session(args), services, intro)


def cmd_coding_resume(args: argparse.Namespace) -> int:
    from drill.cli.services import open_services
    from drill.mock.coding.session import CodingSession

    if args.id is not None:
        session = _coding_session(_round_id(args.id))
    else:
        rounds = _coding_rounds()
        session = CodingSession.latest(rounds) if rounds.is_dir() else None
        if session is None:
            raise MockError("no coding round to resume; start one with `drill mock coding`")
    with open_services(args) as services:
        return _play_coding(session, services)


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
        sys.stdout.write(printable(to_markdown(report)))
        return 0
    say(f"Coding round {report.round_id}: {report.grades} grading runs")
    for phase in report.phases:
        held = sum(1 for c in phase.checks if c["passed"])
        counts = f"  {held}/{len(phase.checks)} checks hold" if phase.checks else ""
        say(f"  {phase.title:<42} {clock(phase.used_s):>6} of {clock(phase.budget_s)}{counts}")
    _print_checks([c for c in report.checks if not c["passed"]])
    cards = report.failed_cards()
    if cards:
        say("Linked review cards: " + ", ".join(cards))
    say(f"Full report: drill mock report coding {report.round_id} --md")
    return 0


def _play_coding(session: Any, services: Services, intro: str = "") -> int:
    from drill.services import ServicesSlot
    from drill.tui.screens.coding_round import CodingApp

    CodingApp(session, ServicesSlot(services), intro=intro).run()
    session.save()
    say(f"Coding round {session.round_id}: {session.script}")
    if session.finished and not session.in_stretch:
        say(f"Report: drill mock report coding {session.round_id} --md")
    else:
        say(f"Resume with: drill mock coding resume {session.round_id}")
    return 0
