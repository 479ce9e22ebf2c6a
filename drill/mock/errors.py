"""The one error type of the mock package: a message for one line on stderr."""

from __future__ import annotations

try:  # helper A's drill/errors.py; the CLI turns a DrillError into one line and exit code 2
    from drill.errors import DrillError as _Base
except ImportError:  # pragma: no cover - only before drill/errors.py exists
    _Base = Exception  # type: ignore[misc,assignment]


class MockError(_Base):  # type: ignore[misc,valid-type]
    """A user-facing problem with a mock round (bad round file, unknown id, nothing to resume)."""
