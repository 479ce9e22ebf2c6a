"""What `drill mock`'s commands share (drill/cli/mock.py the talk rounds, drill/cli/mock_coding.py
the coding round, mock_watch.py, mock_followups.py): subcommand parsers, --minutes and
--stretch, round ids, the coding rounds' folder."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from drill.mock.errors import MockError
from drill.text import printable

MINUTES_HELP = "compress or stretch the round to N minutes in total (every phase scales)"
STRETCH_HELP = (
    "stretch phases chosen up front, run in this order after the round: "
    "accum, amp, fsdp2, throughput (comma-separated)"
)


def phase_option(parser: argparse.ArgumentParser) -> None:
    """--phase P (repeatable): grade only these of the prompt's grader phases."""
    from drill.mock.coding.catalogue import phases_help

    parser.add_argument(
        "--phase",
        action="append",
        metavar="P",
        help=f"grade only this phase (repeatable; default: all of the prompt's): {phases_help()}",
    )


def prompt_option(parser: argparse.ArgumentParser, default: object = None) -> None:
    """--prompt NAME: which prompt of the catalogue (drill.mock.coding.catalogue) the round is.
    A subcommand's is argparse.SUPPRESS: `drill mock --prompt NAME coding` keeps the NAME."""
    from drill.mock.coding.catalogue import prompts_help

    parser.add_argument(
        "--prompt",
        metavar="NAME",
        default=default,
        help=f"the round's prompt (default: ddp); prompts: {prompts_help()}",
    )


def minutes_option(parser: argparse.ArgumentParser, default: object = None) -> None:
    parser.add_argument("--minutes", type=float, metavar="N", default=default, help=MINUTES_HELP)


def stretch_option(parser: argparse.ArgumentParser, default: object = None) -> None:
    parser.add_argument("--stretch", metavar="P,P", default=default, help=STRETCH_HELP)


def command(sub: Any, name: str, func: Any, text: str, description: str = "") -> Any:
    parser = sub.add_parser(
        name,
        help=text,
        description=description or text[0].upper() + text[1:] + ".",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(run=func)
    return parser


MAX_ROUND_ID = 2**63 - 1  # SQLite's largest integer: a larger id names no round


def round_id(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise MockError(f"round id must be a number, got {printable(repr(text))}") from None
    if not 1 <= number <= MAX_ROUND_ID:
        raise MockError(f"no round with id {text[:40]} (ids are whole numbers from 1)")
    return number


def coding_rounds() -> Path:
    from drill.paths import drill_home

    return drill_home() / "rounds"


def coding_session(round_id: int) -> Any:
    from drill.mock.coding.session import CodingSession, default_rounds_dir

    folder = default_rounds_dir() / str(round_id)
    if not (folder / "train.py").is_file():
        raise MockError(f"no coding round with id {round_id}")
    return CodingSession(folder)
