"""Where the repository and the test support files are."""

from pathlib import Path

SUPPORT = Path(__file__).resolve().parent
REPO = SUPPORT.parents[1]
