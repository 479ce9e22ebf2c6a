"""`drill mock rate ID [--confirm | --do-not-rate]`: a finished coding round's checklist, and the
only way the terminal rates its cards (drill.mock.checklist: nothing is rated unconfirmed).

It prints each failed check and each answered follow-up's rubric items with the matcher's ticks
and the ratings they would give. `--confirm` rates as shown; `--do-not-rate` closes the checklist
without rating; with neither, a terminal is asked (y: rate, n: do not rate, anything else:
later) and a pipe is told how to decide. Flipping items is the app's (`drill mock coding resume
ID`, then ctrl+r, opens the checklist). `drill mock watch --confirm` does the same when its
round ends.
Registered with the coding commands (drill/cli/mock_coding.py).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from drill.cli.mock_args import coding_session, command, round_id
from drill.cli.output import say

DESCRIPTION = """\
Show a finished coding round's checklist before any card is rated: each failed check and each
answered follow-up's rubric items with the matcher's ticks, and the rating each card would get.
--confirm rates the cards as shown; --do-not-rate closes the checklist without rating; with
neither, a terminal asks (y rates, n does not rate, Enter decides later) and a pipe rates
nothing. To flip items first, confirm in the app: drill mock coding resume ID, then ctrl+r."""


def register(sub: Any) -> None:
    parser = command(
        sub, "rate", cmd_rate, "confirm a coding round's checklist, then rate", DESCRIPTION
    )
    parser.add_argument("id", metavar="ID", help="the coding round's id")
    decide_options(parser)


def decide_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--confirm", action="store_true", help="rate the cards as the checklist shows"
    )
    group.add_argument(
        "--do-not-rate", action="store_true", help="close the checklist without rating any card"
    )


def cmd_rate(args: argparse.Namespace) -> int:
    from drill.cli.services import open_services
    from drill.mock.errors import MockError

    session = coding_session(round_id(args.id))
    if not session.finished:
        raise MockError(f"coding round {session.round_id} is not over yet: nothing to rate")
    with open_services(args) as services:
        decided = decide_in_terminal(services, session, args.confirm, args.do_not_rate)
    return 0 if decided or decided is None else 1


def decide_in_terminal(services: Any, session: Any, confirm: bool, skip: bool) -> bool | None:
    """Print the round's checklist and rate it only as the user decided: True rated (or
    declined), False left for later, None when there was nothing to decide."""
    from drill.mock.coding.confirm import settle

    checklist = services.coding_checklist(session)
    if checklist is None:
        say(f"Round {session.round_id}: no checklist to confirm (already settled, or not graded).")
        return None
    say(f"Round {session.round_id}: the checklist (the matcher's ticks; nothing rated yet):")
    for line in checklist.plain_lines():
        say(f"  {line}")
    if not (confirm or skip):
        choice = _ask() if sys.stdin.isatty() else ""
        confirm, skip = choice == "y", choice == "n"
    if not (confirm or skip):
        say(f"Not rated. Rate as shown: drill mock rate {session.round_id} --confirm "
            "(--do-not-rate closes it; in the app, ctrl+r in the round flips items).")  # fmt: skip
        return False
    outcome = checklist.confirm() if confirm else checklist.do_not_rate()
    say("Fed back to review:")
    for line in settle(session, outcome):
        say(f"  {line}")
    return True


def _ask() -> str:
    try:
        answer = input("Rate these cards as shown? [y: rate, n: do not rate, Enter: later] ")
    except EOFError:
        return ""
    return answer.strip().lower()[:1]
