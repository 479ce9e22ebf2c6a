"""The user's file in the exercise and coding round screens, when it is not a text file (issue
32, items 6 and 7): a FIFO froze the exercise screen (the app had to be killed), a link to
/dev/zero or a huge file would be read without end. Each kind now opens the screen with the
editor read-only and a notice naming the cause; saving, checking and leaving neither block nor
replace what is there. Run in a child (tests.support.user_file_child), bounded in time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.hostile_files import HOSTILE_KINDS, python_module, run_bounded


@pytest.mark.parametrize("kind", HOSTILE_KINDS)
@pytest.mark.parametrize("screen", ["exercise", "coding"])
def test_a_file_that_is_not_text_is_refused_with_a_notice(
    tmp_path: Path, screen: str, kind: str
) -> None:
    done = run_bounded(python_module("tests.support.user_file_child", screen, kind, str(tmp_path)))
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["read_only"] and seen["text"] == ""
    said = [text for text, _severity in seen["notices"]]
    cause = "larger than" if kind == "sparse-huge" else "is not a regular file"
    assert any(cause in text for text in said), said
    assert not any("Traceback" in text or "Error" in text for text in said), said
    assert seen["still_planted"]  # nothing was written in its place
