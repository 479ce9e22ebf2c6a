"""The app's $EDITOR (exercise and coding round screens, ctrl+e) gets the same command line as
the card browser (drill.editor_command): an absolute path after `--`; a setting shlex cannot
split starts no editor and raises nothing (issue 32, item 1)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from drill.tui.editor import edit_externally
from tests.support.editors import HOSTILE_NAMES, fake_editor

APP: Any = SimpleNamespace(suspend=contextlib.nullcontext)  # what edit_externally uses of the app


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_ctrl_e_passes_the_file_as_one_absolute_path_after_the_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    (tmp_path / name).write_text("x = 1\n")
    log = tmp_path / "argv.jsonl"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VISUAL", str(fake_editor(tmp_path / "bin", "vim", log)))
    assert edit_externally(APP, Path(name)) is None
    assert json.loads(log.read_text()) == ["--", str(tmp_path / name)]


def test_an_editor_setting_that_cannot_be_split_is_a_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VISUAL", "vim 'unclosed")
    notice = edit_externally(APP, tmp_path / "f.py")
    assert notice is not None and notice.startswith("could not start the editor")
