"""`drill verify`: run every linked lab once and check each card's claims (rendering only;
the logic is in drill/labs/verify.py)."""

from __future__ import annotations

import argparse
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.errors import DrillError
from drill.text import printable

if TYPE_CHECKING:
    from trainer_lab.result import LabResult

DESCRIPTION = """\
Run every distinct lab linked from a card (once per lab and params), evaluate every card's
`expect` claims and `predict` blocks (exactly one choice must hold), and print a table.
Every lab run is kept in the run log; a second verify reuses the result of a run with the same
(lab, params, world size, lab source version), so it is quick; --fresh reruns.
Independent runs go concurrently within --jobs cores (longest first).
--strength reruns each card's lab under each sabotage/debug setting of its SPEC and reports
which breaks a claim; a card no sabotage breaks tests nothing, and so does a claim that only
restates the lab's inputs (a param's value, an observation the lab computes from its params).
A card that pins no world_size must hold at W=2 and W=3: --strength flags one whose lab cannot
run at both or whose claims name a rank by number; --world-size N runs such cards at N.
A card whose `where:` does not hold here (a GPU-only lab on a CPU) is reported as skipped on
this device, by both, and is no failure.
Exit 0 when every claim holds (and, with --strength, every card run here is broken by some
sabotage), 1 otherwise, 2 for a usage error."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="check every card's claims against real lab runs",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--deck", metavar="ID", help="only cards of this deck")
    parser.add_argument(
        "--card",
        action="append",
        metavar="ID",
        help="only this card; repeatable (every card named is checked)",
    )
    parser.add_argument("--fresh", action="store_true", help="ignore cached lab results")
    parser.add_argument(
        "--failures-only", action="store_true", help="print only the rows that failed"
    )
    parser.add_argument(
        "--jobs",
        type=_positive_int,
        metavar="N",
        help="CPU cores to fill with concurrent lab runs (a W-rank run takes W; default: all)",
    )
    parser.add_argument(
        "--world-size",
        type=_world_size,
        metavar="N",
        help="run the cards that pin no world_size at N ranks instead of their lab's default "
        "(their claims must hold at any size the lab allows)",
    )
    parser.add_argument(
        "--strength",
        action="store_true",
        help="rerun each card's lab under every sabotage/debug setting and list the cards whose "
        "claims no sabotage breaks (they test nothing; exit 1)",
    )
    parser.set_defaults(func=cmd_verify)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _world_size(text: str) -> int:
    value = _positive_int(text)
    if value > 64:
        raise argparse.ArgumentTypeError("must be at most 64")
    return value


def _run_job(job: Any, out_dir: Path, progress: Any, cancel: threading.Event) -> LabResult:
    from trainer_lab.api import run_lab

    return run_lab(
        job.lab,
        dict(job.params),
        job.world_size,
        out_dir,
        None,
        cancel=cancel,
        on_progress=lambda event: progress(event.raw),
    )


class _Display:
    """One rich Progress: an overall bar and a line per running lab."""

    def __init__(self, progress: Any, total: int) -> None:
        self.progress = progress
        self.overall = progress.add_task("labs", total=total)
        self.lines: dict[Any, Any] = {}
        self.lock = threading.Lock()

    def start(self, job: Any, estimate_s: float) -> None:
        with self.lock:
            label = printable(f"  {job.label()} (~{estimate_s:.0f} s)")  # shown without markup
            self.lines[job] = self.progress.add_task(label, total=None)

    def finish(self, outcome: Any) -> None:
        with self.lock:
            task = self.lines.pop(outcome.job, None)
            if task is not None:
                self.progress.remove_task(task)
            self.progress.advance(self.overall)

    def event(self, job: Any, event: dict[str, Any]) -> None:
        with self.lock:
            task = self.lines.get(job)
            if task is None:
                return
            message = str(event.get("message", ""))[:60]
            done, total = _whole(event.get("done")), _whole(event.get("total"))
            steps: dict[str, Any] = {}
            if total:  # the lab said how many steps: its bar and done/total follow
                steps = {"completed": min(done or 0, total), "total": total}
            self.progress.update(task, description=printable(f"  {job.label()} {message}"), **steps)


def _whole(value: Any) -> int | None:
    """A progress event's count, or None when it is missing or not a number."""
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _make_progress(console: Any) -> Any:
    """The overall bar and a line per running lab; the count column shows done/total, or
    nothing while a lab has not said how many steps it runs (never "0/None")."""
    from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    class StepsColumn(ProgressColumn):
        def render(self, task: Any) -> Text:
            if task.total is None:
                return Text("")
            return Text(f"{task.completed:.0f}/{task.total:.0f}")

    return Progress(
        TextColumn("{task.description}", markup=False),  # job labels and lab messages
        BarColumn(),
        StepsColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def _open_run_log(console: Any) -> Any:
    """The app database, where verify records its runs and finds its cache; None (every lab
    runs, nothing is recorded) when it cannot be opened."""
    from drill.cli.output import text
    from drill.database import open_app_database
    from storage.errors import DatabaseError

    try:
        return open_app_database()
    except (DatabaseError, OSError) as error:
        console.print(text(f"no run log, every lab runs: {error}", "yellow"))
        return None


def cmd_verify(args: argparse.Namespace) -> int:
    from rich.console import Console

    from drill.cli.output import text
    from drill.decks import links as lab_links
    from drill.decks.loader import load_decks
    from drill.labs.schedule import default_budget
    from drill.labs.strength import run_strength, sabotaged_jobs
    from drill.labs.verify import ResultCache, code_version, linked_cards, plan_jobs, run_verify
    from drill.paths import VERIFY_RUNS, runs_dir

    console = Console()
    deckset = load_decks(getattr(args, "decks", None), link_checks=lab_links.LAB_LINK_CHECKS)
    if args.deck and deckset.deck(args.deck) is None:
        valid = ", ".join(d.deck.deck for d in deckset.decks)
        raise DrillError(f"unknown deck {args.deck!r} (valid: {valid})")
    named = list(dict.fromkeys(args.card)) if args.card else None
    unknown = [card_id for card_id in named or () if deckset.card(card_id) is None]
    if unknown:
        raise DrillError(f"unknown card(s): {', '.join(map(repr, unknown))}")
    for problem in deckset.problems:
        console.print(text(problem, "red"), highlight=False)
    cards = linked_cards(deckset, args.deck, named)
    left_out = sorted(set(named or ()) - {linked.card.id for linked in cards})
    if left_out:
        where = f" in deck {args.deck}" if args.deck else ""
        note = f"not verified (no lab block{where}): {', '.join(left_out)}"
        console.print(text(note, "yellow"), highlight=False)
    if not cards:
        console.print("no card with a lab block to verify")
        return 1 if deckset.problems else 0

    db = _open_run_log(console)
    cache = ResultCache(db, code_version())
    budget = args.jobs or default_budget()
    strength = getattr(args, "strength", False)
    world = getattr(args, "world_size", None)
    if strength:
        total = len({job for linked in cards for *_, job in sabotaged_jobs(linked, world)})
    else:
        total = len(plan_jobs(cards, world))
    started = time.monotonic()
    cancel = threading.Event()
    with _make_progress(console) as progress:
        display = _Display(progress, total)
        run = run_strength if strength else run_verify
        try:
            report = run(
                cards,
                _run_job,
                cache,
                runs_dir() / VERIFY_RUNS,
                world,
                fresh=args.fresh,
                budget=budget,
                cancel=cancel,
                on_start=display.start,
                on_finish=display.finish,
                on_progress=display.event,
            )
        except KeyboardInterrupt:
            console.print("[red]verify cancelled: every lab process it started was killed")
            return 130
        finally:
            if db is not None:
                db.close()
    elapsed = time.monotonic() - started
    cached = sum(1 for job in report.jobs if job.cached)
    runs = f"{len(report.jobs)} lab run(s) ({cached} cached) within {budget} core(s)"
    if strength:
        return _print_strength(console, report, runs, elapsed, len(deckset.problems))
    return _print_verify(console, args, report, len(cards), runs, elapsed, len(deckset.problems))


def _print_verify(
    console: Any, args: Any, report: Any, n_cards: int, runs: str, elapsed: float, problems: int
) -> int:
    from rich.table import Table
    from rich.text import Text

    from drill.cli.output import text

    table = Table(title="drill verify", show_lines=False)
    for column in ("card", "lab", "claim", "observed", "verdict"):
        table.add_column(column, overflow="fold")
    rows = report.failures if args.failures_only else report.rows
    for row in rows:
        verdict = Text("holds", "green")
        if row.skipped:
            verdict = Text("skipped on this device", "yellow")
        elif not row.passed:
            verdict = Text.assemble(("FAILS", "red"), " ", text(row.detail))
        cells = (row.card_id, row.lab, row.claim, row.observed)
        table.add_row(*(text(cell) for cell in cells), verdict)
    if rows:
        console.print(table)
    summary = f"{len(report.rows)} claim(s) on {n_cards} card(s), {runs} in {elapsed:.1f} s"
    skipped = len(report.skipped)
    if skipped:
        summary += f" ({skipped} skipped: their card's `where:` does not hold on this device)"
    failed = len(report.failures)
    if failed or problems:
        console.print(f"[red]{summary}: {failed} failed, {problems} deck problem(s)")
        return 1
    console.print(f"[green]{summary}: all hold")
    return 0


def _print_strength(console: Any, report: Any, runs: str, elapsed: float, problems: int) -> int:
    from rich.table import Table
    from rich.text import Text

    from drill.cli.output import text

    table = Table(title="drill verify --strength", show_lines=False)
    for column in ("card", "lab", "broken by", "verdict"):
        table.add_column(column, overflow="fold")
    for card in report.cards:
        if card.skipped_for_device:
            reason = next(iter(card.skipped.values()))
            verdict = Text.assemble(("skipped on this device", "yellow"), " ", text(reason))
        elif not card.broken_by:
            verdict = "[yellow]no sabotage in its lab[/yellow]"
        elif card.tests_nothing:
            verdict = "[red]TESTS NOTHING[/red]"
        else:
            verdict = "[green]strong[/green]"
        silent = [s for s, claims in card.broken_by.items() if claims is None]
        broken = ", ".join(card.breakers) or "-"
        if silent:
            broken += f" (no result: {', '.join(silent)})"
        table.add_row(text(card.card_id), text(card.lab), text(broken), verdict)
    console.print(table)
    for card in report.echoing:
        for echo in card.echoes:
            console.print(text(f"{card.card_id}: claim echoes its inputs: {echo}", "red"))
    for card in report.world_specific:
        for problem in card.world_claims:
            console.print(text(f"{card.card_id}: holds at one world size only: {problem}", "red"))
    weak = report.weak
    summary = f"{len(report.cards)} card(s), {runs} in {elapsed:.1f} s"
    skipped = len(report.device_skipped)
    if skipped:
        summary += f" ({skipped} skipped: their card's `where:` does not hold on this device)"
    if weak or report.echoing or report.world_specific or problems:
        names = ", ".join(card.card_id for card in weak)
        echoing = len(report.echoing)
        console.print(
            text(
                f"{summary}: {len(weak)} card(s) test nothing: {names}; "
                f"{echoing} card(s) with a claim that echoes its inputs; "
                f"{len(report.world_specific)} card(s) that hold at one world size only",
                "red",
            )
        )
        return 1
    console.print(text(f"{summary}: every card run here is broken by some sabotage", "green"))
    return 0
