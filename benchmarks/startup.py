"""Startup and rating-latency benchmark for the drill TUI (a script, not a test).

Builds 5,000 cards (generated deck files in a temp DRILL_DECKS dir) and 100,000 review-log rows
in a temp DRILL_HOME, then prints medians over several runs of
  (a) process start -> first review card painted, the real app, headless;
  (b) the same for a bare Textual app with the same widgets and stylesheet (no decks, no DB);
and their ratio; the cold start (no deck cache yet); the median time of `drill due`; and the
median time from a rating keypress to the next card painted. Each figure is printed beside its
target (issue 40): at the default size the ratio <= 1.3 and a rating <= 50 ms; at
`--size large` (50,000 cards, 1,000,000 reviews) the ratio <= 1.5, the cold start <= 3 s,
`drill due` <= 300 ms and a rating <= 10 ms.

    python benchmarks/startup.py [--size default|large] [--runs 7] [--ratings 30]

Each measured process is a fresh interpreter; the clock starts in the parent just before the
spawn and stops when the child reports the paint on stdout. One untimed run first builds the
deck cache (the state every later start finds).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import ClassVar

REPO = Path(__file__).resolve().parent.parent
TCSS = REPO / "drill" / "tui" / "drill.tcss"
SAMPLE_FRONT = "Why does **gradient accumulation** change the meaning of `lr` in a sweep? (#0)"


# --- data ----------------------------------------------------------------------------------
def write_decks(deck_dir: Path, cards: int, decks: int) -> list[str]:
    """`cards` cards split over `decks` YAML files; returns the card ids in deck order."""
    deck_dir.mkdir(parents=True, exist_ok=True)
    ids: list[str] = []
    per_deck = cards // decks
    for d in range(decks):
        lines = [f"deck: bench-{d}", f"title: Benchmark deck {d}", "cards:"]
        for c in range(per_deck):
            card_id = f"bench-{d}-{c}"
            ids.append(card_id)
            lines += [
                f"  - id: {card_id}",
                "    level: medium",
                "    tags: [bench, generated]",
                f'    front: "Why does **gradient accumulation** change `lr`? (#{d}-{c})"',
                "    back: |",
                "      Each optimizer step sees `micro_batch * accum * world` samples.",
                "",
                "      - keep tokens per step fixed when comparing runs",
                "      - rescale warmup in steps",
                "    rubric: [tokens per step, warmup in steps]",
            ]
        (deck_dir / f"bench-{d}.yaml").write_text("\n".join(lines) + "\n")
    return ids


def fill_database(db_path: Path, card_ids: list[str], reviews: int) -> None:
    """Schema via the app's own open_database, rows via sqlite3 (fast bulk insert): every
    card reviewed before, ~10% due now, `reviews` log rows spread over them."""
    sys.path.insert(0, str(REPO))
    from storage.db import open_database
    from storage.schema_names import CARD_STATE, REVIEW_LOG, TIMESTAMP_FORMAT

    open_database(db_path).close()
    rng = random.Random(7)
    now = datetime.now(UTC).replace(tzinfo=None)

    def ts(moment: datetime) -> str:
        return moment.strftime(TIMESTAMP_FORMAT)

    states = []
    for card_id in card_ids:
        due = now + timedelta(days=rng.uniform(-3, 30))
        deck_id = card_id.rsplit("-", 1)[0]
        states.append(
            (
                card_id,
                deck_id,
                2,
                None,
                rng.uniform(1, 60),
                rng.uniform(2, 8),
                ts(due),
                ts(due - timedelta(days=5)),
                20,
                1,
                0,
                None,
                None,
                ts(now - timedelta(days=90)),
            )
        )
    per_card = max(1, reviews // len(card_ids))
    state_json = json.dumps({"state": 2, "stability": 12.5, "difficulty": 5.1, "reps": 3})
    log = []
    for i in range(reviews):
        card_id = card_ids[(i // per_card) % len(card_ids)]
        when = now - timedelta(days=90) + timedelta(minutes=i)
        log.append(
            (
                card_id,
                card_id.rsplit("-", 1)[0],
                rng.randint(1, 4),
                ts(when),
                rng.randint(800, 20_000),
                state_json,
                state_json,
                None,
            )
        )
    conn = sqlite3.connect(db_path)
    with conn:
        # columns added by later migrations (e.g. the leech flag) are flags that start at 0
        width = len(conn.execute(f"PRAGMA table_info({CARD_STATE})").fetchall())
        states = [row + (0,) * (width - len(row)) for row in states]
        conn.executemany(f"INSERT INTO {CARD_STATE} VALUES ({','.join('?' * width)})", states)
        conn.executemany(
            f"INSERT INTO {REVIEW_LOG} (card_id, deck_id, rating, reviewed_at, duration_ms, "
            "state_before, state_after, content_hash) VALUES (?,?,?,?,?,?,?,?)",
            log,
        )
    conn.close()


# --- children ------------------------------------------------------------------------------
def report_painted() -> None:
    """Tell the parent, with this process's CPU seconds so far, and stop at once: what the
    app would do next (drill: load the repository in a thread) is not part of the measure."""
    print(f"PAINTED {time.process_time():.6f}", flush=True)
    os._exit(0)


def child_drill(mode: str, ratings: int) -> None:
    from drill.tui.app import AppOptions, DrillApp

    painted: list[tuple[str, float, float]] = []

    def on_paint(card_id: str) -> None:
        painted.append((card_id, time.perf_counter(), time.process_time()))
        if mode == "start":
            report_painted()

    app = DrillApp(AppOptions(start_review="all"), on_card_painted=on_paint)
    if mode == "start":
        app.run(headless=True)
        return

    import asyncio

    async def rate_loop() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await app.wait_services()
            await pilot.pause()
            latencies, cpu = [], []
            for _ in range(ratings):
                await pilot.press("space")
                count = len(painted)
                start, start_cpu = time.perf_counter(), time.process_time()
                await pilot.press("3")
                if len(painted) <= count:
                    raise SystemExit("no card painted after a rating")
                latencies.append(painted[count][1] - start)
                cpu.append(painted[count][2] - start_cpu)
            print("LATENCIES " + json.dumps([latencies, cpu]), flush=True)

    asyncio.run(rate_loop())


def child_bare() -> None:
    """Same widgets and stylesheet as the real home + review screens, fixed text, no data."""
    from rich.markdown import Markdown
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.containers import Horizontal, VerticalScroll
    from textual.screen import Screen
    from textual.widgets import DataTable, Footer, Static

    # The same keys in the footers as drill's screens show on this card (one action each: the
    # footer shows one key per action), and no command-palette key, as in drill.
    home_keys = [("enter,space", "Review"), ("a", "All"), ("c", "Study"), ("m", "Mock")]
    home_keys += [("L", "Labs"), ("X", "Kata"), ("S", "Stats"), ("B", "Browse"), ("q", "Quit")]
    review_keys = [("space", "Show/Good"), ("u", "Undo"), ("b", "Bury"), ("s", "Suspend")]
    review_keys += [("escape,q", "Home")]
    hidden_keys = [("1", "Again"), ("2", "Hard"), ("3", "Good"), ("4", "Easy")]

    def bindings(keys: list[tuple[str, str]], show: bool = True) -> list[Binding]:
        return [Binding(key, f"key_{text}", text, show=show) for key, text in keys]

    class Home(Screen[None]):
        BINDINGS: ClassVar = bindings(home_keys)

        def compose(self) -> ComposeResult:
            yield Static("drill · review", id="home-title")
            table: DataTable[str] = DataTable(id="decks", cursor_type="row", zebra_stripes=True)
            table.add_columns("Deck", "Due", "New", "Next due")
            for d in range(12):
                table.add_row(f"Benchmark deck {d}", "40", "20", "now", key=str(d))
            yield table
            yield Static("All decks", id="home-totals")
            yield Footer(show_command_palette=False)

    class Review(Screen[None]):
        BINDINGS: ClassVar = bindings(review_keys) + bindings(hidden_keys, show=False)

        def compose(self) -> ComposeResult:
            yield Static("All decks · bench-0 · review · 500 left", id="review-status")
            with VerticalScroll(id="card"):
                yield Static("", id="edited-marker")
                yield Static(id="front", classes="card-text")
                yield Static("", id="divider")
                yield Static(id="back", classes="card-text")
                yield Static(id="more", classes="card-text")
            yield Static("space: show the answer", id="reveal-hint")
            with Horizontal(id="ratings"):
                for rating, name in enumerate(("Again", "Hard", "Good", "Easy"), 1):
                    yield Static(f"{rating} {name}", id=f"rate-{rating}", classes="rating")
            yield Footer(show_command_palette=False)

        def on_mount(self) -> None:
            self.query_one("#front", Static).update(Markdown(SAMPLE_FRONT))
            self.query_one("#back", Static).display = False  # drill renders it on reveal
            self.query_one("#more", Static).display = False
            self.query_one("#ratings").display = False
            self.call_after_refresh(self.painted)

        def painted(self) -> None:
            report_painted()

    class Bare(App[None]):
        CSS_PATH = TCSS

        def on_mount(self) -> None:
            self.push_screen(Home())
            self.push_screen(Review())

    Bare().run(headless=True)


# --- parent --------------------------------------------------------------------------------
def time_start(kind: str, env: dict[str, str]) -> tuple[float, float]:
    """Seconds from spawning the child to its 'first card painted' line, and the CPU seconds
    the child had used by then."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", kind],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("PAINTED"):
            elapsed = time.perf_counter() - start
            cpu = float(line.split()[1])
            break
    else:
        raise SystemExit(f"{kind} child ended without painting: {proc.stderr.read()[-2000:]}")
    proc.wait(timeout=60)
    return elapsed, cpu


def run_ratings(env: dict[str, str], ratings: int) -> list[list[float]]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", "rate", "--ratings", str(ratings)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    for line in done.stdout.splitlines():
        if line.startswith("LATENCIES "):
            return json.loads(line.split(" ", 1)[1])
    raise SystemExit(f"rating child failed: {done.stderr[-2000:]}")


# size -> (cards, reviews, targets); the targets are issue 40's
SIZES = {
    "default": (5000, 100_000, {"ratio": 1.3, "cold_s": None, "due_ms": None, "rate_ms": 50.0}),
    "large": (50_000, 1_000_000, {"ratio": 1.5, "cold_s": 3.0, "due_ms": 300.0, "rate_ms": 10.0}),
}


def beside(value: float, target: float | None, unit: str = "") -> str:
    """'(target <= T: met)' or '(not met)'; '' without a target at this size."""
    if target is None:
        return ""
    return f" (target <= {target:g}{unit}: {'met' if value <= target else 'NOT met'})"


def time_due(env: dict[str, str]) -> float:
    """Seconds of one `drill due` (a fresh interpreter, as a status bar runs it)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "drill", "due"], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"drill due failed: {done.stderr[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="default")
    parser.add_argument("--cards", type=int, help="overrides the size's card count")
    parser.add_argument("--decks", type=int, default=5)
    parser.add_argument("--reviews", type=int, help="overrides the size's review count")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--ratings", type=int, default=30)
    parser.add_argument(
        "--data",
        type=Path,
        help="keep the generated decks and database in this folder and reuse them on the next "
        "run (building 1,000,000 reviews takes minutes); the rating run changes the schedule",
    )
    parser.add_argument("--child", choices=["start", "rate", "bare"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "bare":
        child_bare()
        return 0
    if args.child:
        child_drill(args.child, args.ratings)
        return 0
    size_cards, size_reviews, target = SIZES[args.size]
    args.cards = args.cards or size_cards
    args.reviews = args.reviews or size_reviews

    with tempfile.TemporaryDirectory(prefix="drill-bench-") as tmp:
        root = args.data or Path(tmp)
        home, deck_dir = root / "home", root / "decks"
        env = {**os.environ, "DRILL_HOME": str(home), "DRILL_DECKS": str(deck_dir)}
        # An installed drill has bytecode like any package; this sandbox sets
        # PYTHONDONTWRITEBYTECODE, which would make every start recompile drill's own modules
        # (~100 ms) while textual's come precompiled. The untimed first run writes them.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ.update(DRILL_HOME=env["DRILL_HOME"], DRILL_DECKS=env["DRILL_DECKS"])
        if args.data is not None and (home / "drill.sqlite3").exists():
            ids = [
                f"bench-{d}-{c}" for d in range(args.decks) for c in range(args.cards // args.decks)
            ]
            print(f"reusing the decks and database in {args.data}")
            (home / "cache" / "decks.json").unlink(missing_ok=True)  # the cold start below
        else:
            ids = write_decks(deck_dir, args.cards, args.decks)
            fill_database(home / "drill.sqlite3", ids, args.reviews)
        print(f"data: {len(ids)} cards in {args.decks} deck files, {args.reviews} review rows")
        print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")

        cold, _ = time_start("start", env)  # builds the deck cache (and writes bytecode)
        print(
            f"cold start (no deck cache yet): {cold * 1000:.0f} ms"
            + beside(cold, target["cold_s"], " s")
        )
        time_start("bare", env)  # untimed: same for the bare app
        drill_runs, bare_runs = [], []
        for _ in range(args.runs):
            bare_runs.append(time_start("bare", env))
            drill_runs.append(time_start("start", env))
        drill_ms = statistics.median(t for t, _ in drill_runs) * 1000
        bare_ms = statistics.median(t for t, _ in bare_runs) * 1000
        drill_cpu = statistics.median(c for _, c in drill_runs) * 1000
        bare_cpu = statistics.median(c for _, c in bare_runs) * 1000
        print(f"(a) drill: start -> first card painted, median of {args.runs}: {drill_ms:.0f} ms")
        print(f"(b) bare Textual app, same widgets, median of {args.runs}: {bare_ms:.0f} ms")
        ratio = drill_ms / bare_ms
        print(f"ratio a/b: {ratio:.2f}{beside(ratio, target['ratio'])}")
        drill_min = min(t for t, _ in drill_runs) * 1000
        bare_min = min(t for t, _ in bare_runs) * 1000
        print(
            f"  fastest runs (least disturbed): drill {drill_min:.0f} ms, bare {bare_min:.0f} ms,"
            f" ratio {drill_min / bare_min:.2f}"
        )
        print(
            f"  process CPU until the paint, medians: drill {drill_cpu:.0f} ms, bare"
            f" {bare_cpu:.0f} ms, ratio {drill_cpu / bare_cpu:.2f}"
        )

        due_ms = statistics.median(time_due(env) for _ in range(args.runs)) * 1000
        print(
            f"`drill due`, median of {args.runs}: {due_ms:.0f} ms"
            + beside(due_ms, target["due_ms"], " ms")
        )

        latencies, cpu = run_ratings(env, args.ratings)
        rate_ms = statistics.median(latencies) * 1000
        print(
            f"rating keypress -> next card painted, median of {len(latencies)}: {rate_ms:.1f} ms"
            f"{beside(rate_ms, target['rate_ms'], ' ms')} (max {max(latencies) * 1000:.1f} ms)"
        )
        # CPU time of the app process over the same span: what the wall time would approach
        # on an idle machine (the wall figure includes waiting for a busy CPU).
        print(f"  CPU time in that span, median: {statistics.median(cpu) * 1000:.1f} ms")
        print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
