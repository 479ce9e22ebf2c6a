"""`drill mock watch [ROUND]`: a coding round's clock in a terminal, for a round played in a
notebook or an editor of the user's choice (drill.mock.coding.watch does the work).

Registered under `drill mock` by drill/cli/mock.py: `mock_watch.register(sub)`. On a terminal the
phase and time left are one line redrawn in place; to a pipe or a file they are plain lines, one
each time a minute passes or a phase changes. ctrl+c pauses the clock, saves it and exits 0.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from drill.cli.mock_args import round_id
from drill.cli.mock_rate import decide_options
from drill.cli.output import say
from drill.mock.errors import MockError

DESCRIPTION = """\
Keep the clock of a coding round from a terminal: the latest unfinished one (or round ROUND, see
`drill mock history`). The phase and the time left stay on one line; each save of train.py (or,
in a notebook round, of round.ipynb, whose %%writefile train.py cell is read) is noted; when a
phase's time is up its checks run (`drill mock contract` lists them) and the verdicts are printed;
at the end everything is graded, and the checklist is printed: no card is rated unless you
confirm it (--confirm, or y when asked on a terminal; --do-not-rate declines; see `drill mock
rate`). ctrl+c pauses the clock and saves it: `drill mock watch ROUND`
(or `drill mock coding resume ROUND`, the app's screen) goes on from there."""
POLL_S = 1.0
# Seams for tests: the clock's time source and the wait between polls.
NOW: Callable[[], float] = time.monotonic
SLEEP: Callable[[float], None] = time.sleep


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "watch",
        help="keep a coding round's clock in the terminal (for a notebook or your own editor)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(run=cmd_watch)
    parser.add_argument(
        "round", nargs="?", metavar="ROUND", help="the coding round's id (default: the latest)"
    )
    decide_options(parser)


def _session(round_text: str | None) -> Any:  # -> CodingSession
    from drill.mock.coding.session import STATE_FILE, CodingSession, default_rounds_dir

    rounds = default_rounds_dir()
    if round_text is None:
        session = CodingSession.latest_unfinished(rounds, now=NOW)
        if session is None:
            raise MockError(
                "no unfinished coding round to watch; start one with `drill mock notebook` "
                "or `drill mock coding`"
            )
        return session
    folder = rounds / str(round_id(round_text))
    if not (folder / STATE_FILE).is_file():
        raise MockError(f"no coding round with id {round_text} (see `drill mock history`)")
    session = CodingSession(folder, now=NOW)
    if session.finished and not session.in_stretch:  # a stretch phase after it runs on
        raise MockError(
            f"coding round {round_text} is over; see `drill mock report coding {round_text}`"
        )
    return session


def _grade(
    script: Path, out_dir: Path, phases: tuple[str, ...], **options: Any
) -> Mapping[str, Any]:
    from trainer_lab.grading import grade

    return grade(script, out_dir, phases, **options)  # options: the round's prompt


class _Screen:
    """The status line: redrawn in place on a terminal, a plain line per change elsewhere."""

    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.shown = ""
        self.width = 0

    def line(self, text: str) -> None:
        self._clear()
        say(text, flush=True)
        self.shown = ""

    def status(self, watch: Any) -> None:
        text = watch.status_line(seconds=self.tty)
        if text == self.shown:
            return
        if self.tty:
            pad = " " * max(0, self.width - len(text))
            sys.stdout.write(f"\r{text}{pad}")
            sys.stdout.flush()
            self.width = len(text)
        else:
            say(text, flush=True)
        self.shown = text

    def _clear(self) -> None:
        if self.tty and self.width:
            sys.stdout.write("\r" + " " * self.width + "\r")
            self.width = 0


def cmd_watch(args: argparse.Namespace) -> int:
    session = _session(args.round)
    with contextlib.ExitStack() as stack:
        return _watch(session, _services(args, stack), args.confirm, args.do_not_rate, args.flip)


def _watch(
    session: Any,
    services: Any,
    confirm: bool = False,
    skip: bool = False,
    flips: Sequence[str] = (),
) -> int:
    from drill.cli.mock_rate import decide_in_terminal
    from drill.mock.coding.watch import RoundWatch

    record = None
    if services is not None:

        def record(result: Mapping[str, Any], out_dir: Path) -> list[str]:
            notices: list[str] = []
            services.record_grading(result, out_dir, notices.append)
            return notices

    # no card is rated inside the watch: the checklist is confirmed once the round is over
    watch = RoundWatch(session, grade=session.grader(_grade), record=record)
    screen = _Screen(sys.stdout.isatty())
    try:
        for line in watch.start():
            screen.line(line)
        while not watch.finished:
            for line in watch.step():
                screen.line(line)
            screen.status(watch)
            if not watch.finished:
                SLEEP(POLL_S)
    except KeyboardInterrupt:
        watch.pause()
        screen.line(f"Paused and saved at: {watch.status_line()}")
        say(f"Resume with: drill mock watch {session.round_id}")
        return 0
    final = watch.status_line()
    if screen.tty or screen.shown != final:  # a plain line already said it: not twice
        screen.line(final)
    if services is not None:
        decide_in_terminal(services, session, confirm, skip, flips=flips)
    say(f"Report: drill mock report coding {session.round_id} --md")
    return 0


def _services(args: argparse.Namespace, stack: contextlib.ExitStack) -> Any:
    """The app's services for the run log and the feedback into review; None (and a notice)
    when the database cannot be opened: the clock and the grading work without it."""
    from drill.cli.services import open_services
    from drill.errors import DrillError
    from storage.errors import DatabaseError

    try:
        return stack.enter_context(open_services(args))
    except (DrillError, DatabaseError) as error:
        say(f"drill mock watch: notice: gradings are not recorded: {error}", file=sys.stderr)
        return None
