"""`drill verify`: run every linked lab once and check each card's claims (rendering only;
the logic is in drill/verify.py)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from drill.errors import DrillError

DESCRIPTION = """\
Run every distinct lab linked from a card (once per lab and params), evaluate every card's
`expect` claims and `predict` blocks (exactly one choice must hold), and print a table.
Results are cached by (lab, params, code version): a second run is quick; --fresh reruns.
Exit 0 when every claim holds, 1 when any fails, 2 for a usage error."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="check every card's claims against real lab runs",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--deck", metavar="ID", help="only cards of this deck")
    parser.add_argument("--card", metavar="ID", help="only this card")
    parser.add_argument("--fresh", action="store_true", help="ignore cached lab results")
    parser.add_argument(
        "--failures-only", action="store_true", help="print only the rows that failed"
    )
    parser.set_defaults(func=cmd_verify)


def _run_job(job: Any, out_dir: Path, progress: Any) -> dict[str, Any]:
    from trainer_lab.catalogue_types import ParamError
    from trainer_lab.runner import run_lab

    try:
        return run_lab(
            job.lab,
            dict(job.params),
            job.world_size,
            out_dir,
            None,
            on_progress=lambda event: progress(event.raw),
        )
    except ParamError as error:
        return {"status": "error", "error": {"message": str(error)}}


def cmd_verify(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from drill import lab_links
    from drill.deck_loader import load_decks
    from drill.paths import cache_dir, runs_dir
    from drill.verify import ResultCache, code_version, linked_cards, run_verify

    lab_links.register()
    console = Console()
    deckset = load_decks(getattr(args, "decks", None))
    if args.deck and deckset.deck(args.deck) is None:
        valid = ", ".join(d.deck.deck for d in deckset.decks)
        raise DrillError(f"unknown deck {args.deck!r} (valid: {valid})")
    if args.card and deckset.card(args.card) is None:
        raise DrillError(f"unknown card {args.card!r}")
    for problem in deckset.problems:
        console.print(f"[red]{escape(str(problem))}[/red]", highlight=False)
    cards = linked_cards(deckset, args.deck, args.card)
    if not cards:
        console.print("no card with a lab block to verify")
        return 1 if deckset.problems else 0

    cache = ResultCache(cache_dir() / "verify", code_version())
    started = time.monotonic()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        overall = progress.add_task("labs", total=None)

        def on_job(index: int, total: int, job: Any, cached: bool) -> None:
            progress.update(overall, total=total, completed=index)
            note = " (cached)" if cached else ""
            label = escape(f"lab {index + 1}/{total}: {job.label()}{note}")
            progress.update(overall, description=label)

        def on_progress(job: Any, event: dict[str, Any]) -> None:
            message = event.get("message", "")
            done, total = event.get("done", 0), event.get("total", 0)
            step = f" [{done}/{total}]" if total else ""
            progress.update(overall, description=escape(f"{job.label()}{step} {message}"))

        report = run_verify(
            cards,
            _run_job,
            cache,
            runs_dir() / "verify",
            fresh=args.fresh,
            on_job=on_job,
            on_progress=on_progress,
        )
        progress.update(overall, completed=len(report.jobs))

    table = Table(title="drill verify", show_lines=False)
    for column in ("card", "lab", "claim", "observed", "verdict"):
        table.add_column(column, overflow="fold")
    rows = report.failures if args.failures_only else report.rows
    for row in rows:
        verdict = "[green]holds[/green]"
        if not row.passed:
            verdict = f"[red]FAILS[/red] {escape(row.detail)}"
        cells = (row.card_id, row.lab, row.claim, row.observed)
        table.add_row(*(escape(cell) for cell in cells), verdict)
    if rows:
        console.print(table)
    cached = sum(1 for job in report.jobs if job.cached)
    elapsed = time.monotonic() - started
    summary = (
        f"{len(report.rows)} claim(s) on {len(cards)} card(s), {len(report.jobs)} lab run(s) "
        f"({cached} cached) in {elapsed:.1f} s"
    )
    failed = len(report.failures)
    if failed or deckset.problems:
        console.print(f"[red]{summary}: {failed} failed, {len(deckset.problems)} deck problem(s)")
        return 1
    console.print(f"[green]{summary}: all hold")
    return 0
