"""Stats screen and card browser at scale (a script, not a test).

Builds 5,000 cards (generated deck files) and 100,000 review-log rows spread over a year (with
real scheduled intervals in state_before, so true retention has ~half the rows to work on) in a
temp DRILL_HOME, starts the real app headless, and prints medians of
  (a) `S` pressed on the home screen -> stats figures loaded, mounted and painted (target 300 ms);
  (b) one keystroke in the browser's search box -> results filtered and the table redrawn
      (target 50 ms), and the search-plus-redraw call alone;
  (c) compute_stats() alone (SQLite aggregation + Python).

A key is delivered as the terminal driver delivers it (`driver.send_message(Key)`), and the time
runs until the frame after the change has been refreshed (`call_after_refresh`). Pilot.press is
not used for the timing: it also waits until the process has been idle for a while (about 60 ms
per key here, on a bare app too), which is the test harness's settling time, not latency.

`--size large` (issue 40): 50,000 cards and 1,000,000 reviews; the stats target is 500 ms there.
Each figure is printed beside its target.

    python benchmarks/stats_browser.py [--size default|large] [--runs 7]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

TAGS = ["fsdp", "ddp", "checkpoint", "memory", "data", "protein", "nccl", "optimizer"]
LEVELS = ["easy", "medium", "hard"]


def write_decks(deck_dir: Path, cards: int, decks: int) -> list[tuple[str, str]]:
    deck_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(1)
    ids: list[tuple[str, str]] = []
    for d in range(decks):
        lines = [f"deck: bench-{d}", f"title: Benchmark deck {d}", "cards:"]
        for c in range(cards // decks):
            card_id = f"bench-{d}-{c}"
            ids.append((card_id, f"bench-{d}"))
            tags = ", ".join(rng.sample(TAGS, 2))
            lines += [
                f"  - id: {card_id}",
                f"    level: {rng.choice(LEVELS)}",
                f"    tags: [{tags}]",
                f'    front: "Why does gradient accumulation change the lr? (#{d}-{c})"',
                "    back: Each optimizer step sees micro_batch * accum * world samples.",
            ]
        (deck_dir / f"bench-{d}.yaml").write_text("\n".join(lines) + "\n")
    return ids


def fill_database(db_path: Path, cards: list[tuple[str, str]], reviews: int) -> None:
    from storage.db import open_database
    from storage.schema_names import CARD_STATE, REVIEW_LOG, TIMESTAMP_FORMAT

    open_database(db_path).close()
    rng = random.Random(7)
    now = datetime.now(UTC)

    def ts(moment: datetime) -> str:
        return moment.astimezone(UTC).strftime(TIMESTAMP_FORMAT)

    states, log = [], []
    for i, (card_id, deck_id) in enumerate(cards):
        if i % 10 == 0:
            continue  # 10 % new
        interval = rng.uniform(1, 60)
        due = now + timedelta(days=rng.uniform(-3, 30))
        states.append(
            (card_id, deck_id, 2, None, interval, 5.0, ts(due), ts(due - timedelta(days=interval)),
             20, rng.randint(0, 9), i % 50 == 0, None, None, ts(now - timedelta(days=200)))
        )  # fmt: skip
    for _ in range(reviews):
        card_id, deck_id = cards[rng.randrange(len(cards))]
        when = now - timedelta(days=rng.uniform(0, 365))
        interval = rng.choice((1, 3, 8, 15, 25, 40, 60))
        before = {"state": 2, "due": when.isoformat(),
                  "last_review": (when - timedelta(days=interval)).isoformat()}  # fmt: skip
        rating = 1 if rng.random() < 0.12 else rng.choice((2, 3, 3, 4))
        log.append((card_id, deck_id, rating, ts(when), 5000, json.dumps(before), "{}", None))
    conn = sqlite3.connect(db_path)
    with conn:
        conn.executemany(
            f"INSERT INTO {CARD_STATE} (card_id, deck_id, state, step, stability, difficulty, "
            "due, last_review, reps, lapses, suspended, buried_until, content_hash, "
            f"introduced_at) VALUES ({','.join('?' * 14)})",
            states,
        )
        conn.executemany(
            f"INSERT INTO {REVIEW_LOG} (card_id, deck_id, rating, reviewed_at, duration_ms, "
            "state_before, state_after, content_hash) VALUES (?,?,?,?,?,?,?,?)",
            log,
        )
    conn.close()


def send_key(app: Any, char: str) -> float:
    """Deliver a key as the terminal driver does; the time it was sent."""
    from textual import events

    key = "space" if char == " " else char
    start = time.perf_counter()
    app._driver.send_message(events.Key(key, char))
    return start


async def typed_and_painted(app: Any, char: str, done: Callable[[], bool]) -> float:
    """Milliseconds from a key to the refresh after `done()` holds (the key was handled)."""
    start = send_key(app, char)
    while not done():
        await asyncio.sleep(0.0005)
    painted = asyncio.get_running_loop().create_future()
    app.screen.call_after_refresh(lambda: painted.set_result(time.perf_counter()))
    return (await painted - start) * 1000


async def measure_app(deck_dir: Path, runs: int) -> tuple[list[float], list[float], list[float]]:
    from drill.tui import app as app_module
    from drill.tui.screens import stats as stats_screen
    from drill.tui.screens.browser import BrowserScreen
    from drill.tui.screens.home import HomeScreen

    painted: list[float] = []

    original = stats_screen.open_stats_screen

    def open_with_hook(app: object) -> None:
        original(app, on_painted=lambda _s: painted.append(time.perf_counter()))

    stats_screen.open_stats_screen = open_with_hook  # the home screen imports it at the key
    options = app_module.AppOptions(deck_dirs=[deck_dir], include_bundled=False, headless=True)
    app = app_module.DrillApp(options)
    stats_ms, key_ms, refilter_ms = [], [], []
    async with app.run_test(size=(120, 40)) as pilot:
        assert await app.wait_services() is not None
        await pilot.pause()
        for _ in range(runs):
            painted.clear()
            start = send_key(app, "S")
            while not painted:
                await asyncio.sleep(0.001)
            stats_ms.append((painted[0] - start) * 1000)
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, HomeScreen)
        await pilot.press("B")
        while not (isinstance(app.screen, BrowserScreen) and app.screen.rows):
            await asyncio.sleep(0.01)
        screen = app.screen
        refiltered: list[float] = []
        refilter = screen.refilter

        def counted_refilter(force: bool = False) -> None:
            refilter(force)
            refiltered.append(time.perf_counter())

        screen.refilter = counted_refilter  # type: ignore[method-assign]
        for query in ("tag:fsdp level:hard gradient", "is:due deck:bench-3", "accum world"):
            for char in query:
                refiltered.clear()
                key_ms.append(await typed_and_painted(app, char, lambda: bool(refiltered)))
                await pilot.pause()
            start = time.perf_counter()
            screen.refilter(force=True)
            refilter_ms.append((time.perf_counter() - start) * 1000)
            for _ in query:
                await pilot.press("backspace")
    return stats_ms, key_ms, refilter_ms


async def measure_bare_keys() -> list[float]:
    """The same keystrokes into a bare Textual app (an Input above an empty DataTable and a
    Footer): what a keypress costs here before drill does anything."""
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable, Footer, Input

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield Input()
            yield DataTable()
            yield Footer()

    app = Bare()
    times: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        box = app.query_one(Input)
        for char in "tag:fsdp level:hard gradient":
            before = box.value
            times.append(await typed_and_painted(app, char, lambda b=before: box.value != b))
            await pilot.pause()
    return times


# size -> (cards, decks, reviews, stats target ms); the browser keystroke target is 50 ms
SIZES = {"default": (5000, 10, 100_000, 300.0), "large": (50_000, 10, 1_000_000, 500.0)}
KEY_TARGET_MS = 50.0


def beside(value: float, target: float) -> str:
    return f"(target {target:g} ms: {'met' if value <= target else 'NOT met'})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="default")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    n_cards, n_decks, n_reviews, stats_target = SIZES[args.size]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["DRILL_HOME"] = str(root / "home")
        os.environ.pop("DRILL_DECKS", None)
        cards = write_decks(root / "decks", n_cards, n_decks)
        from drill.paths import database_path
        from drill.review.stats import CardInfo, compute_stats

        fill_database(database_path(), cards, n_reviews)
        infos = [CardInfo(c, d, ()) for c, d in cards]
        compute_ms = []
        for _ in range(args.runs):
            start = time.perf_counter()
            compute_stats(database_path(), infos, datetime.now(UTC))
            compute_ms.append((time.perf_counter() - start) * 1000)
        stats_ms, key_ms, refilter_ms = asyncio.run(measure_app(root / "decks", args.runs))
        bare_ms = asyncio.run(measure_bare_keys())
    start = time.perf_counter()
    sum(range(10**7))
    loop_ms = (time.perf_counter() - start) * 1000
    print(f"{n_cards:,} cards, {n_reviews:,} reviews; machine load: sum(range(1e7)) took"
          f" {loop_ms:.0f} ms, load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"compute_stats() alone:               median {statistics.median(compute_ms):7.1f} ms")
    print(
        f"S -> stats painted, first (cold):    {stats_ms[0]:7.1f} ms "
        + beside(stats_ms[0], stats_target)
    )
    warm, key = statistics.median(stats_ms[1:]), statistics.median(key_ms)
    print(
        f"S -> stats painted:                  median {warm:7.1f} ms {beside(warm, stats_target)}"
        f"  (max {max(stats_ms[1:]):.1f}; log summed incrementally after the first)"
    )
    print(f"browser keystroke -> redrawn:        median {key:7.1f} ms {beside(key, KEY_TARGET_MS)}"
          f"  (p90 {sorted(key_ms)[int(len(key_ms) * 0.9)]:.1f})")  # fmt: skip
    print(f"browser search + table fill alone:   median {statistics.median(refilter_ms):7.1f} ms")
    print(
        f"bare Textual Input keystroke:        median {statistics.median(bare_ms):7.1f} ms"
        f"  (ratio browser/bare {statistics.median(key_ms) / statistics.median(bare_ms):.2f})"
    )


if __name__ == "__main__":
    main()
