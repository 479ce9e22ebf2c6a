"""Hand-built review histories for the stats and browser tests: rows go straight into a database
made by the app's own open_database(), so each test knows exactly which numbers to expect."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from storage.db import open_database
from storage.schema_names import (
    CARD_STATE,
    MOCK_REPORT,
    MOCK_ROUND,
    REVIEW_LOG,
    RUN_LOG,
)

FORMAT = "%Y-%m-%d %H:%M:%S.%f"  # how SQLAlchemy stores datetimes on SQLite (UTC, no offset)


def ts(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(FORMAT)


def state_json(interval_days: float | None, at: datetime) -> str | None:
    """A state_before whose scheduled interval is `interval_days` (None: a new card)."""
    if interval_days is None:
        return None
    last = at - timedelta(days=interval_days)
    return json.dumps(
        {"state": 2, "due": at.isoformat(), "last_review": last.isoformat(), "lapses": 0}
    )


class LogBuilder:
    """Collects card states, review-log rows, lab runs and mock reports; write() stores them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        open_database(path).close()
        self.states: list[tuple] = []  # type: ignore[type-arg]
        self.logs: list[tuple] = []  # type: ignore[type-arg]
        self.labs: list[tuple] = []  # type: ignore[type-arg]
        self.mocks: list[tuple[datetime, str, float, str]] = []
        self.checks: list[tuple] = []  # type: ignore[type-arg]

    def card(
        self,
        card_id: str,
        deck_id: str,
        *,
        state: int | None = 2,
        due: datetime | None = None,
        interval_days: float = 1.0,
        lapses: int = 0,
        suspended: bool = False,
        buried_until: datetime | None = None,
        leech: bool = False,
    ) -> None:
        last = due - timedelta(days=interval_days) if due is not None else None
        self.states.append(
            (card_id, deck_id, state, None, 5.0 if state else None, 5.0 if state else None,
             ts(due) if due else None, ts(last) if last else None, 3, lapses, suspended,
             ts(buried_until) if buried_until else None, None, ts(last) if last else None, leech)
        )  # fmt: skip

    def review(
        self, card_id: str, deck_id: str, at: datetime, rating: int, interval: float | None
    ) -> None:
        self.logs.append(
            (card_id, deck_id, rating, ts(at), 4000, state_json(interval, at), "{}", None)
        )

    def lab(self, certainty: str, right: bool, at: datetime) -> None:
        self.labs.append(("lab", "resume", "{}", 2, ts(at), "ok", "{}", "/tmp/x", certainty, right))

    def mock(self, at: datetime, round_key: str, score: float, band: str) -> None:
        self.mocks.append((at, round_key, score, band))

    def exercise(self, at: datetime, name: str, status: str, passed: int, total: int) -> None:
        self.checks.append(("exercise", name, "{}", 0, ts(at), ts(at), status, passed, total,
                            1.5, "{}", "/tmp/x"))  # fmt: skip

    def write(self) -> Path:
        conn = sqlite3.connect(self.path)
        with conn:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({CARD_STATE})")]
            names = (
                "card_id, deck_id, state, step, stability, difficulty, due, last_review, "
                "reps, lapses, suspended, buried_until, content_hash, introduced_at"
            )
            width = 14
            if "leech" in cols:
                names += ", leech"
                width = 15
            conn.executemany(
                f"INSERT INTO {CARD_STATE} ({names}) VALUES ({','.join('?' * width)})",
                [s[:width] for s in self.states],
            )
            conn.executemany(
                f"INSERT INTO {REVIEW_LOG} (card_id, deck_id, rating, reviewed_at, duration_ms, "
                "state_before, state_after, content_hash) VALUES (?,?,?,?,?,?,?,?)",
                self.logs,
            )
            conn.executemany(
                f"INSERT INTO {RUN_LOG} (kind, name, params_json, world_size, started_at, "
                "status, summary_json, run_dir, certainty, prediction_right) "
                "VALUES (?,?,?,?,?,?,?,?,?,?)",
                self.labs,
            )
            conn.executemany(
                f"INSERT INTO {RUN_LOG} (kind, name, params_json, world_size, started_at, "
                "finished_at, status, checks_passed, checks_total, duration_s, summary_json, "
                "run_dir) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                self.checks,
            )
            for i, (at, key, score, band) in enumerate(self.mocks, start=1):
                conn.execute(
                    f"INSERT INTO {MOCK_ROUND} (id, round_key, title, status, definition_json, "
                    "budgets_json, clock_json, started_at, updated_at) "
                    "VALUES (?,?,?,?,?,?,?,?,?)",
                    (i, key, key, "done", "{}", "{}", "{}", ts(at), ts(at)),
                )
                conn.execute(
                    f"INSERT INTO {MOCK_REPORT} (round_id, created_at, overall_band, "
                    "overall_score, report_json) VALUES (?,?,?,?,?)",
                    (i, ts(at), band, score, "{}"),
                )
        conn.close()
        return self.path


BROWSE_DECKS = {
    "infra.yaml": """\
deck: infra
title: Training infra
cards:
  - id: fsdp-shard
    level: hard
    tags: [fsdp, memory]
    front: What does FSDP shard?
    back: Parameters, gradients and optimizer state.
  - id: ddp-bucket
    level: medium
    tags: [ddp]
    front: Why does DDP bucket gradients?
    back: To overlap the all-reduce with the backward pass.
  - id: resume-state
    level: hard
    tags: [checkpoint, fsdp]
    front: What state must survive a restart?
    back: Model and optimizer state, sampler position and RNG state.
    lab:
      run: resume
""",
    "bio.yaml": """\
deck: biotech
title: Biotech ML
cards:
  - id: msa-depth
    level: easy
    tags: [protein]
    front: Why does MSA depth matter?
    back: Deeper alignments carry more co-evolution signal.
  - id: assay-noise
    level: medium
    tags: [data, protein]
    front: How do you handle assay noise?
    back: Model replicate variance; do not trust single measurements.
""",
}


def write_browse_decks(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, body in BROWSE_DECKS.items():
        (directory / name).write_text(body)
    return directory
