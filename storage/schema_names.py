"""Table and column names, defined once. Imported by the SQLModel tables, the migrations and the
stdlib-sqlite3 snapshot reader (which must stay light: no sqlmodel at first paint)."""

from typing import Any

StateDict = dict[str, Any]  # a card_state row as the scheduler sees it (datetimes aware UTC)

CARD_STATE = "card_state"
REVIEW_LOG = "review_log"
MOCK_ROUND = "mock_round"  # storage.mock_tables; schema v3
MOCK_PROMPT = "mock_prompt"
MOCK_GRADE = "mock_grade"
MOCK_REPORT = "mock_report"
LAB_RUN = "lab_run"  # schema v3..v5; its rows moved into run_log in v6
EXERCISE_PROGRESS = "exercise_progress"  # storage.exercise_tables; schema v5
EXERCISE_ATTEMPT = "exercise_attempt"  # schema v5; its rows moved into run_log in v6
RUN_LOG = "run_log"  # storage.run_tables; schema v6: every graded run, one row each
INTERVIEW_PLAN = "interview_plan"  # storage.plan_tables; schema v7: the plan history (drill plan)

# run_log.kind: what ran. run_log.status: running, then ok | failed | error | timeout | cancelled
RUN_KINDS = ("lab", "exercise", "coding", "verify")
RUNNING = "running"

# card_state columns (one row per card that was ever reviewed, buried or suspended)
CARD_STATE_COLUMNS = (
    "card_id",  # stable card id from the deck (primary key): history survives text edits
    "deck_id",
    "state",  # fsrs.State value (1 learning, 2 review, 3 relearning); NULL = still new
    "step",
    "stability",
    "difficulty",
    "due",  # UTC, 'YYYY-MM-DD HH:MM:SS.ffffff'
    "last_review",
    "reps",
    "lapses",
    "suspended",
    "buried_until",
    "content_hash",  # Card.content_hash() when last reviewed: a different hash = edited since
    "introduced_at",  # first review (counts against the daily new-card limit); schema v2
    "leech",  # lapsed leech_threshold times (the browser's is:leech); schema v4
)

# review_log columns (append-only, except that undo deletes the row it undoes)
REVIEW_LOG_COLUMNS = (
    "id",
    "card_id",
    "deck_id",
    "rating",  # 1 Again, 2 Hard, 3 Good, 4 Easy
    "reviewed_at",
    "duration_ms",
    "state_before",  # JSON of the card_state row before the review (NULL: card was new)
    "state_after",  # JSON of the card_state row after the review
    "content_hash",  # schema v2
)

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f"  # what SQLAlchemy's SQLite DateTime stores
