"""`drill mock` for the coding round: grade, contract, followups, watch, notebook, coding
[resume], report coding. Registered by drill/cli/mock.py through `register(sub)`; the grading
itself is the conductor's (drill.mock.coding.conductor), this module parses and prints.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.cli import mock_followups, mock_rate, mock_watch
from drill.cli.mock_args import (
    coding_rounds,
    coding_session,
    command,
    minutes_option,
    phase_option,
    prompt_option,
    round_id,
    stretch_option,
)
from drill.cli.mock_grade import cmd_grade, print_checks
from drill.cli.output import say
from drill.mock.errors import MockError
from drill.text import printable

if TYPE_CHECKING:
    from drill.services import Services


def register(sub: Any) -> None:
    grade = command(
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
    phase_option(grade)
    grade.add_argument("--json", action="store_true", help="print result.json instead")
    grade.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="draw the fault plan (which rank is killed after which step) from seed N: the "
        "same seed gives the same kills, to reproduce a grading (its report names its seed)",
    )
    prompt_option(grade, argparse.SUPPRESS)

    contract = command(
        sub, "contract", cmd_contract, "print the coding contract and the dataset module"
    )
    prompt_option(contract, argparse.SUPPRESS)

    mock_followups.register(sub)
    mock_watch.register(sub)
    mock_rate.register(sub)

    notebook = command(
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
    minutes_option(notebook, argparse.SUPPRESS)  # the new round's clock, scaled
    prompt_option(notebook, argparse.SUPPRESS)
    stretch_option(notebook, argparse.SUPPRESS)

    coding = command(
        sub,
        "coding",
        cmd_coding,
        "the coding round: write train.py, graded by what it does",
        "The coding round: train.py beside the contract in an editor, a phase clock; ctrl+r\n"
        "grades it by running it. Files in DRILL_HOME/rounds/<id>/.",
    )
    minutes_option(coding, argparse.SUPPRESS)
    stretch_option(coding, argparse.SUPPRESS)
    prompt_option(coding, argparse.SUPPRESS)
    coding_sub = coding.add_subparsers(dest="coding_command", metavar="{resume}")
    coding_resume = command(
        coding_sub, "resume", cmd_coding_resume, "resume a coding round (default: the latest)"
    )
    coding_resume.add_argument("id", nargs="?", metavar="ID", help="the coding round's id")


def new_coding_session(args: argparse.Namespace, *, notebook: bool = False) -> Any:
    """A new coding round on --prompt (default: today's DDP round), scaled by --minutes, with
    the --stretch phases chosen up front; an unknown prompt is a MockError (one line)."""
    from drill.mock.coding.session import CodingSession
    from drill.mock.coding.stretch import choose
    from trainer_lab.grading import DEFAULT_PROMPT

    prompt = getattr(args, "prompt", None) or DEFAULT_PROMPT
    try:
        session = CodingSession.create(
            coding_rounds(), args.minutes, notebook=notebook, prompt=prompt
        )
    except OSError as error:
        raise MockError(f"cannot create the round: {error.strerror or error}") from None
    if getattr(args, "stretch", None):
        choose(session, args.stretch)
        session.save()
    return session


def cmd_contract(args: argparse.Namespace) -> int:
    from trainer_lab.grading import CONTRACT, DATASET_MODULE_FILE, dataset_source

    if getattr(args, "prompt", None) not in (None, "ddp"):
        from drill.mock.coding.catalogue import round_prompt

        entry = round_prompt(args.prompt)
        say(entry.contract)
        say(f"--- {DATASET_MODULE_FILE} (the given dataset module; import it from train.py) ---")
        sys.stdout.write(entry.entry.dataset())
        return 0
    say(CONTRACT)
    say(f"--- {DATASET_MODULE_FILE} (the given dataset module; import it from train.py) ---")
    sys.stdout.write(dataset_source())
    return 0


def cmd_notebook(args: argparse.Namespace) -> int:
    from shlex import quote

    from drill.mock.coding.notebook import write_round_notebook

    if args.out and args.minutes is not None:
        raise MockError("--minutes goes with a new round: drill mock notebook --minutes N")
    if args.out:  # just the notebook, where asked: no round, no clock
        from drill.files import require_parent_dir
        from drill.mock.coding.catalogue import round_prompt

        entry = round_prompt(getattr(args, "prompt", None) or "ddp")  # before anything is written
        require_parent_dir(Path(args.out))
        path = write_round_notebook(Path(args.out), prompt=entry)
        say(f"Notebook: {printable(str(path))}  (drill_data.py beside it)")
        say(f"Open it:  {_open_line(path)}")
        say(f"Grade it: drill mock grade {printable(quote(str(path)))}{_prompt_words(entry.id)}")
        return 0
    session = new_coding_session(args, notebook=True)
    path = session.notebook_path
    say(f"Notebook round {session.round_id}: {printable(str(path))}  (drill_data.py beside it)")
    say(f"Open it:   {_open_line(path)}")
    say(f"The clock: drill mock watch {session.round_id}   (or in the app: drill mock coding "
        f"resume {session.round_id})")  # fmt: skip
    say(f"Grade now: drill mock grade {printable(quote(str(path)))}"
        f"{_prompt_words(session.prompt.id)}")  # fmt: skip
    if args.stretch:
        say(f"Stretch:   {', '.join(args.stretch)} after the round, in this order")
    return 0


def _prompt_words(prompt: str) -> str:
    """` --prompt NAME` for a command line, empty for today's DDP round (the default)."""
    return "" if prompt == "ddp" else f" --prompt {prompt}"


def _open_line(path: Path) -> str:
    from shlex import quote

    folder, name = quote(str(path.parent)), quote(path.name)
    return printable(f"cd {folder} && jupyter lab {name}   (or VS Code; Colab: upload both)")


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
        return play_coding(new_coding_session(args), services, intro)


def cmd_coding_resume(args: argparse.Namespace) -> int:
    from drill.cli.services import open_services
    from drill.mock.coding.session import CodingSession

    if args.id is not None:
        session = coding_session(round_id(args.id))
    else:
        rounds = coding_rounds()
        session = CodingSession.latest(rounds) if rounds.is_dir() else None
        if session is None:
            raise MockError("no coding round to resume; start one with `drill mock coding`")
    with open_services(args) as services:
        return play_coding(session, services)


def cmd_coding_report(round_id: int, markdown: bool) -> int:
    from drill.mock.coding.report import build_report, to_markdown
    from drill.mock.report import clock

    report = build_report(coding_session(round_id))
    if markdown:
        sys.stdout.write(printable(to_markdown(report)))
        return 0
    say(f"Coding round {report.round_id}: {report.grades} grading runs")
    for phase in report.phases:
        held = sum(1 for c in phase.checks if c["passed"])
        counts = f"  {held}/{len(phase.checks)} checks hold" if phase.checks else ""
        say(f"  {phase.title:<42} {clock(phase.used_s):>6} of {clock(phase.budget_s)}{counts}")
    print_checks([c for c in report.checks if not c["passed"]])
    cards = report.failed_cards()
    if cards:
        say("Linked review cards: " + ", ".join(cards))
    say(f"Full report: drill mock report coding {report.round_id} --md")
    return 0


def play_coding(session: Any, services: Services, intro: str = "") -> int:
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
