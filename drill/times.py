"""The one wall clock of the app: aware UTC now (what the database stores and compares)."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC)
