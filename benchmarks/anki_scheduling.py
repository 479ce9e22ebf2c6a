"""drill's review scheduling against independent references (a script, not a test).

Simulates a learner over DAYS days (Europe/Berlin, across the March DST change): each day the
learner opens drill once at a random hour, reviews what is due and repeats learning steps. For
every review of a card in the Review state it compares the Hard, Good and Easy intervals drill
previews with fsrs-rs' unfuzzed intervals for the same memory state and learner days elapsed,
and counts
  - intervals outside Anki's fuzz range (rslib/src/scheduler/states/fuzz.rs; the bounds
    function is checked against Anki's own test table in tests/drill/review/test_fuzz.py),
  - Hard >= Good or Good >= Easy after fuzz,
  - memory states off fsrs-rs' by more than 0.02 %;
and, for contrast, the same counts for the `fsrs` package's own fuzz over the same reviews
(what drill used before: round() instead of floor, no ordering).

    python benchmarks/anki_scheduling.py [--days 120] [--cards 60] [--seeds 5]
"""

from __future__ import annotations

import argparse
import random
import sys
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fsrs import Rating
from fsrs.scheduler import DEFAULT_PARAMETERS, Scheduler
from fsrs_rs_python import FSRS, MemoryState

from drill.review.fuzz import fuzz_bounds
from drill.review.scheduler import make_scheduler, next_state, preview_intervals, to_fsrs
from drill.settings import Settings

BERLIN = ZoneInfo("Europe/Berlin")
SETTINGS = Settings()
NAMES = {2: "hard", 3: "good", 4: "easy"}


def learner_day(moment: datetime) -> date:
    return (moment.astimezone(BERLIN) - timedelta(hours=4)).date()


def run(days: int, cards: int, seed: int, counts: dict[str, int]) -> None:
    rng = random.Random(seed)
    drill = make_scheduler(SETTINGS)
    package = Scheduler(enable_fuzzing=True)  # the fsrs package's own fuzz
    reference = FSRS(list(DEFAULT_PARAMETERS))
    states: dict[str, dict] = {}  # type: ignore[type-arg]
    for offset in range(days):
        hour = rng.choice([0, 2, 7, 9, 12, 18, 21, 23])
        day = date(2026, 2, 15) + timedelta(days=offset + (1 if hour < 4 else 0))
        now = datetime.combine(day, time(hour, rng.randrange(60)), BERLIN).astimezone(UTC)
        new = [f"c{i}" for i in range(cards) if f"c{i}" not in states][:5]
        due = [c for c, s in states.items() if s["due"] < now + timedelta(hours=20)]
        due = [c for c in due if s_due(states[c], now)]
        pending = [(now, c) for c in due + new]
        while pending:
            pending.sort()
            at, card_id = pending.pop(0)
            at = max(at, now)
            before = states.get(card_id)
            rating = rng.choices([1, 2, 3, 4], weights=[15, 15, 60, 10])[0]
            if before is not None and before["state"] == 2:
                compare(before, card_id, at, drill, package, reference, counts)
            after = next_state(drill, before, rating, at, SETTINGS, card_id=card_id, tz=BERLIN)
            counts["reviews"] += 1
            states[card_id] = after
            now = at + timedelta(seconds=20)
            if after["state"] != 2 and after["due"] - now < timedelta(hours=2):
                pending.append((after["due"], card_id))


def s_due(state: dict, now: datetime) -> bool:  # type: ignore[type-arg]
    if state["state"] == 2:
        return learner_day(state["due"]) <= learner_day(now)
    return bool(state["due"] <= now)


def compare(before, card_id, now, drill, package, reference, counts) -> None:  # type: ignore[no-untyped-def]
    elapsed = (learner_day(now) - learner_day(before["last_review"])).days
    ref = reference.next_states(
        MemoryState(before["stability"], before["difficulty"]), 0.9, elapsed
    )
    preview = preview_intervals(drill, before, now, SETTINGS, card_id=card_id, tz=BERLIN)
    counts["passing"] += 1
    floor = 1
    got = {}
    for rating in (2, 3, 4):
        days = preview[rating].days
        lower, upper = fuzz_bounds(getattr(ref, NAMES[rating]).interval, floor, 36500)
        counts["drill_outside"] += not lower <= days <= upper
        got[rating] = days
        floor = days + 1
        after = next_state(drill, before, rating, now, SETTINGS, card_id=card_id, tz=BERLIN)
        memory = getattr(ref, NAMES[rating]).memory
        counts["memory_off"] += abs(after["stability"] / memory.stability - 1) > 2e-4
    counts["drill_unordered"] += not got[2] < got[3] < got[4]
    card = to_fsrs(before, now, 4, BERLIN)  # the same learner-day elapsed time
    theirs = {r: package.review_card(card, Rating(r), now)[0].due - now for r in (2, 3, 4)}
    floor = 1
    for rating in (2, 3, 4):
        days = round(theirs[rating] / timedelta(days=1))
        lower, upper = fuzz_bounds(getattr(ref, NAMES[rating]).interval, 1, 36500)
        counts["package_outside"] += not lower <= days <= upper
    counts["package_unordered"] += not theirs[2] < theirs[3] < theirs[4]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=120)
    parser.add_argument("--cards", type=int, default=60)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    keys = ("reviews", "passing", "drill_outside", "drill_unordered", "memory_off",
            "package_outside", "package_unordered")  # fmt: skip
    counts = dict.fromkeys(keys, 0)
    for seed in range(args.seeds):
        run(args.days, args.cards, seed, counts)
    print(f"{args.seeds} simulated learners x {args.days} days x {args.cards} cards (Berlin)")
    print(
        f"  reviews {counts['reviews']}, review-card previews (Hard/Good/Easy) {counts['passing']}"
    )
    print(f"  drill:        outside Anki's fuzz range {counts['drill_outside']} of "
          f"{3 * counts['passing']}, Hard<Good<Easy broken {counts['drill_unordered']}, "
          f"memory state off fsrs-rs {counts['memory_off']}")  # fmt: skip
    outside, unordered = counts["package_outside"], counts["package_unordered"]
    print(f"  fsrs package: outside Anki's fuzz range {outside} of "
          f"{3 * counts['passing']}, Hard<Good<Easy broken {unordered}")  # fmt: skip


if __name__ == "__main__":
    main()
