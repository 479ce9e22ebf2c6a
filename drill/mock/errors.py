"""The one error type of the mock package: a message for one line on stderr."""

from __future__ import annotations

from drill.errors import DrillError


class MockError(DrillError):
    """A user-facing problem with a mock round (bad round file, unknown id, nothing to resume)."""
