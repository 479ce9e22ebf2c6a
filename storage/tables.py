"""SQLModel tables of the core schema. They mirror storage/migrations.py (a test checks that the
migrated columns match these models); other modules' tables register on the same metadata."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from storage.schema_names import CARD_STATE, REVIEW_LOG


class CardState(SQLModel, table=True):
    __tablename__ = CARD_STATE

    card_id: str = Field(primary_key=True)
    deck_id: str
    state: int | None = None
    step: int | None = None
    stability: float | None = None
    difficulty: float | None = None
    due: datetime | None = Field(default=None, index=True)
    last_review: datetime | None = None
    reps: int = 0
    lapses: int = 0
    suspended: bool = False
    buried_until: datetime | None = None
    content_hash: str | None = None
    introduced_at: datetime | None = Field(default=None, index=True)
    leech: bool = False  # lapsed leech_threshold times (v4)


class ReviewLog(SQLModel, table=True):
    __tablename__ = REVIEW_LOG

    id: int | None = Field(default=None, primary_key=True)
    card_id: str = Field(index=True)
    deck_id: str
    rating: int
    reviewed_at: datetime
    duration_ms: int
    state_before: str | None = None
    state_after: str
    content_hash: str | None = None
