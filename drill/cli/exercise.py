"""`drill exercise list | start | check | watch | hint | solution NAME`: code katas checked by real
runs (drill.exercises). Registered by drill/cli/main.py through `register(subparsers)`.

Exit codes: 0 solved (or done), 1 a check fails, 2 usage error (unknown exercise, not started,
solution still locked), 3 the check was cancelled.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.cli.output import say

if TYPE_CHECKING:
    from drill.exercises.service import CheckOutcome, ExerciseService

EXIT_OK, EXIT_FAILING, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 3
WATCH_POLL_S = 0.5


def register(subparsers: Any) -> None:
    ex = subparsers.add_parser(
        "exercise",
        help="code katas linked from cards, checked by real torch.distributed runs",
        description="Small exercises: start one, edit the file, check it (exit 0 solved, 1 a "
        "check fails, 2 usage error).",
    )
    ex.set_defaults(func=lambda args: _usage(ex))
    sub = ex.add_subparsers(
        dest="exercise_command", metavar="{list,start,check,watch,hint,solution}"
    )
    p = sub.add_parser("list", help="list exercises with status", description="List exercises.")
    p.add_argument("--json", action="store_true", help="print JSON (one object per exercise)")
    p.set_defaults(func=cmd_list)
    for name, text, func in (
        ("start", "copy the starter into DRILL_HOME/exercises/NAME/", cmd_start),
        ("check", "run the checks on your file", cmd_check),
        ("watch", "re-run the checks each time your file is saved (Ctrl-C ends)", cmd_watch),
        ("hint", "show the next hint", cmd_hint),
        ("solution", "show the model answer (after a check was run)", cmd_solution),
    ):
        p = sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        p.add_argument("name", help="exercise name (see `drill exercise list`)")
        p.set_defaults(func=func)
        if name == "solution":
            p.add_argument("--diff", action="store_true", help="a diff from your file to it")
        if name == "watch":
            p.add_argument("--once", action="store_true", help=argparse.SUPPRESS)  # tests


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return EXIT_USAGE


def _error(message: str) -> int:
    say(f"drill exercise: error: {message}", file=sys.stderr)
    return EXIT_USAGE


@contextmanager
def _service(args: argparse.Namespace) -> Iterator[ExerciseService]:
    """The exercise service of the app's services (drill.cli.services), closed afterwards."""
    from drill.cli.services import open_services

    with open_services(args) as services:
        yield services.exercises


def _guard(func: Any) -> Any:
    def wrapped(args: argparse.Namespace) -> int:
        from drill.exercises.service import ExerciseError

        try:
            return func(args)
        except ExerciseError as error:
            return _error(str(error))

    return wrapped


@_guard
def cmd_list(args: argparse.Namespace) -> int:
    from drill.review.stats import counted

    with _service(args) as service:
        rows = service.list()
    if args.json:
        print(json.dumps([r.to_dict() for r in rows], indent=1))
        return EXIT_OK
    width = max((len(r.name) for r in rows), default=0)
    solved = sum(r.status == "solved" for r in rows)
    for r in rows:
        n = r.progress.attempts
        tries = f"  ({counted(n, 'check')})" if n else ""
        say(f"{r.name:<{width}}  {r.status:<11}  {r.spec.topic:<16}  {r.spec.title}{tries}")
    say(f"{solved}/{len(rows)} solved")
    return EXIT_OK


@_guard
def cmd_start(args: argparse.Namespace) -> int:
    with _service(args) as service:
        spec = service.spec(args.name)
        path, created = service.start(args.name)
    say(f"{spec.title}\n  {spec.summary}")
    say(f"{'created' if created else 'already there, kept'}: {path}")
    say(f"edit it, then: drill exercise check {spec.name}  (or: drill exercise watch {spec.name})")
    return EXIT_OK


def print_outcome(outcome: CheckOutcome, name: str) -> None:
    from drill.runs.checklist import CheckList, plain_lines

    result = outcome.result
    for line in plain_lines(CheckList.of(result, shared=False), layout="inline", indent=""):
        say(line)
    passed = sum(c["passed"] for c in result["checks"])
    took = f"{result['duration_s']:.1f} s"
    if outcome.solved:
        say(f"solved: {passed}/{len(result['checks'])} checks pass ({took})")
    elif result["status"] == "cancelled":
        say(f"cancelled after {took}")
    else:
        say(f"{passed}/{len(result['checks'])} checks pass ({took}); stuck? "
              f"drill exercise hint {name}")  # fmt: skip
    for change in outcome.changes:
        say(f"card {change.describe()}")
    for notice in outcome.notices:
        say(f"note: {notice}", file=sys.stderr)


def _check_once(service: ExerciseService, name: str) -> int:
    from drill.cli.signals import signals_cancel

    cancel = threading.Event()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["outcome"] = service.check(name, cancel=cancel)
        except BaseException as error:  # re-raised in the main thread
            box["error"] = error

    thread = threading.Thread(target=work, name=f"check-{name}")
    notify = lambda text: say(text, file=sys.stderr)  # noqa: E731
    with signals_cancel(cancel, notify):
        thread.start()
        thread.join()
    if "error" in box:
        raise box["error"]
    outcome = box["outcome"]
    print_outcome(outcome, name)
    if outcome.result["status"] == "cancelled":
        return EXIT_CANCELLED
    return EXIT_OK if outcome.solved else EXIT_FAILING


@_guard
def cmd_check(args: argparse.Namespace) -> int:
    with _service(args) as service:
        return _check_once(service, args.name)


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


@_guard
def cmd_watch(args: argparse.Namespace) -> int:
    with _service(args) as service:
        return _watch(service, args)


def _watch(service: ExerciseService, args: argparse.Namespace) -> int:
    path = service.user_file(args.name)
    if not path.is_file():
        service.start(args.name)
    say(f"watching {path} (Ctrl-C ends)")
    seen: float | None = None
    code = EXIT_FAILING
    try:
        while True:
            now = _mtime(path)
            if now is not None and now != seen:
                seen = now
                code = _check_once(service, args.name)
                if args.once or code == EXIT_CANCELLED:
                    return code
                say(f"-- waiting for {path.name} to change (Ctrl-C ends)")
            time.sleep(WATCH_POLL_S)
    except KeyboardInterrupt:
        say("\nstopped watching")
        return code


@_guard
def cmd_hint(args: argparse.Namespace) -> int:
    with _service(args) as service:
        spec = service.spec(args.name)
        number, text = service.next_hint(args.name)
    say(f"hint {number}/{len(spec.hints)}: {text}")
    return EXIT_OK


@_guard
def cmd_solution(args: argparse.Namespace) -> int:
    with _service(args) as service:
        text = service.solution(args.name, diff=args.diff)
    say(text if text else "your file already matches the model answer\n", end="")
    return EXIT_OK
