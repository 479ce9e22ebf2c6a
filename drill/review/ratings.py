"""The four review ratings and their names: the one mapping every screen, report and service uses.

Plain data, no imports: safe on the first-paint path and in the mock reports.
"""

from __future__ import annotations

RATING_NAMES: dict[int, str] = {1: "Again", 2: "Hard", 3: "Good", 4: "Easy"}
