"""`drill mock rate ID [--flip N.M ...] [--confirm | --do-not-rate]`: a finished coding round's
checklist, and the only way the terminal rates its cards (drill.mock.checklist: nothing is rated
unconfirmed).

It prints each failed check and each answered follow-up's rubric items, numbered N.M, with the
matcher's ticks and the ratings they would give. `--flip` changes ticks first (the person
decides, the matcher only proposes); `--confirm` rates as shown; `--do-not-rate` closes the
checklist without rating; with neither, a terminal is asked (y: rate, n: do not rate, f N.M:
flip, anything else: later) and a pipe is told how to decide. Flips are not stored: a later
call starts from the matcher's ticks again. `drill mock watch` takes the same options when its
round ends.
Registered with the coding commands (drill/cli/mock_coding.py).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from drill.cli.mock_args import coding_session, command, round_id
from drill.cli.output import say
from drill.mock.errors import MockError

DESCRIPTION = """\
Show a finished coding round's checklist before any card is rated: each failed check and each
answered follow-up's rubric items (numbered N.M) with the matcher's ticks, and the rating each
card would get. --flip N.M ... changes those ticks first (the app: drill mock coding resume ID,
then ctrl+r). --confirm rates the cards as shown; --do-not-rate closes the checklist without
rating; with neither, a terminal asks (y rates, n does not rate, f N.M flips, Enter decides
later) and a pipe rates nothing. Flips are not kept between calls: give them with --confirm."""


def register(sub: Any) -> None:
    parser = command(
        sub, "rate", cmd_rate, "confirm a coding round's checklist, then rate", DESCRIPTION
    )
    parser.add_argument("id", metavar="ID", help="the coding round's id")
    decide_options(parser)


def decide_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--flip",
        nargs="+",
        action="extend",
        default=[],
        metavar="N.M",
        help="flip these items' ticks (numbered as the checklist prints them) before deciding",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--confirm", action="store_true", help="rate the cards as the checklist shows"
    )
    group.add_argument(
        "--do-not-rate", action="store_true", help="close the checklist without rating any card"
    )


def cmd_rate(args: argparse.Namespace) -> int:
    from drill.cli.services import open_services

    session = coding_session(round_id(args.id))
    if not session.finished:
        raise MockError(f"coding round {session.round_id} is not over yet: nothing to rate")
    with open_services(args) as services:
        decided = decide_in_terminal(
            services, session, args.confirm, args.do_not_rate, flips=args.flip
        )
    return 0 if decided or decided is None else 1


def decide_in_terminal(
    services: Any, session: Any, confirm: bool, skip: bool, flips: Sequence[str] = ()
) -> bool | None:
    """Print the round's checklist (with `flips` applied) and rate it only as the user decided:
    True rated (or declined), False left for later, None when there was nothing to decide. A
    flip that names no item is a MockError before anything is printed or rated."""
    from drill.mock.coding.confirm import settle

    checklist = services.coding_checklist(session)
    if checklist is None:
        say(f"Round {session.round_id}: no checklist to confirm (already settled, or not graded).")
        return None
    for label in flips:
        checklist.flip_labelled(label)
    shown = "your flips applied" if flips else "the matcher's ticks"
    say(f"Round {session.round_id}: the checklist ({shown}; nothing rated yet):")
    _print(checklist)
    while not (confirm or skip):
        choice = _ask() if sys.stdin.isatty() else ""
        if choice.startswith("f"):
            try:
                for label in choice[1:].split():
                    checklist.flip_labelled(label)
            except MockError as error:
                say(f"Not flipped: {error}")
            _print(checklist)
            continue
        confirm, skip = choice == "y", choice == "n"
        break
    if not (confirm or skip):
        say(f"Not rated. Rate as shown: drill mock rate {session.round_id} --confirm "
            "(add --flip N.M to change a tick; --do-not-rate closes it).")  # fmt: skip
        return False
    outcome = checklist.confirm() if confirm else checklist.do_not_rate()
    say("Fed back to review:")
    for line in settle(session, outcome):
        say(f"  {line}")
    return True


def _print(checklist: Any) -> None:
    for line in checklist.plain_lines():
        say(f"  {line}")


def _ask() -> str:
    try:
        answer = input(
            "Rate these cards as shown? [y: rate, n: do not rate, f N.M: flip, Enter: later] "
        )
    except EOFError:
        return ""
    answer = answer.strip().lower()
    return answer if answer.startswith("f") else answer[:1]
