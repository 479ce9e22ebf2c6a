"""The driver refuses a deadline or world size that would silently change the run (exit 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--timeout", "nan"], "timeout must be a finite number of seconds above 0, got nan"),
        (["--timeout", "inf"], "timeout must be a finite number of seconds above 0, got inf"),
        (["--timeout", "0"], "got 0.0"),
        (["--world-size", "0"], "world size 0 is out of range"),
        (["--params", '{"tolerance": NaN}'], "param tolerance: nan is not a finite number"),
    ],
)
def test_bad_numbers_are_usage_errors(argv: list[str], fragment: str, tmp_path: Path) -> None:
    out = str(tmp_path / "r")
    done = subprocess.run(
        [sys.executable, "-m", "trainer_lab.driver", "ddp-baseline", "--out", out, *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert done.returncode == 2, done
    assert fragment in done.stderr
    assert not (tmp_path / "r").exists()
