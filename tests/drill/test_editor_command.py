"""The editor's command line (issue 32, item 1): a file name from disk is data. A deck named
`+!touch X.yaml` under `--decks .` reached vim as `vim +4 '+!touch X.yaml'`, and vim ran it.
Fake editors record the argv they get; vim itself, when installed, shows nothing runs."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from drill.editor_command import editor_command
from tests.support.editors import HOSTILE_NAMES, fake_editor


@pytest.mark.parametrize(
    ("editor", "expected"),
    [
        ("vim", ["vim", "+12", "--", "/d/x.yaml"]),
        ("nano", ["nano", "+12", "/d/x.yaml"]),  # nano: no `--` (getopt differs); the / holds
        ("emacsclient -t", ["emacsclient", "-t", "+12", "--", "/d/x.yaml"]),
        ("/usr/bin/nvim", ["/usr/bin/nvim", "+12", "--", "/d/x.yaml"]),
        ("code --wait", ["code", "--wait", "/d/x.yaml"]),  # no +LINE for unknown editors
        ("ed 'unclosed", ["ed 'unclosed", "/d/x.yaml"]),  # shlex cannot split it: one name
    ],
)
def test_editor_command(editor: str, expected: list[str]) -> None:
    assert editor_command(Path("/d/x.yaml"), 12, editor) == expected


def test_the_editor_comes_from_the_environment_and_the_path_is_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "nano")
    assert editor_command(Path("f.yaml"), 3) == ["nano", "+3", str(tmp_path / "f.yaml")]
    monkeypatch.delenv("EDITOR")
    assert editor_command(Path("f.yaml")) == ["vi", "--", str(tmp_path / "f.yaml")]


@pytest.mark.parametrize("editor_name", ["vim", "nano", "my-editor"])
@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_name_reaches_the_editor_as_one_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, editor_name: str, name: str
) -> None:
    decks = tmp_path / "decks"
    decks.mkdir()
    (decks / name).write_text("deck: x\n")
    log = tmp_path / "argv.jsonl"
    monkeypatch.chdir(decks)
    monkeypatch.setenv("VISUAL", str(fake_editor(tmp_path / "bin", editor_name, log)))
    subprocess.run(editor_command(Path(".") / name, 4), check=True, timeout=60)
    (argv,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert argv[-1] == str(decks / name) and argv[-1].startswith("/")
    assert Path(argv[-1]).read_text() == "deck: x\n"  # the file itself, whole
    if editor_name == "vim":
        assert argv == ["+4", "--", str(decks / name)]  # +LINE before the end of options
    assert not (decks / "X").exists() and not (decks / "X.yaml").exists()


@pytest.mark.skipif(shutil.which("vim") is None, reason="vim is not installed")
@pytest.mark.parametrize("name", ["+!touch X.yaml", "-c!touch X.yaml"])
def test_vim_runs_no_command_from_a_file_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    (tmp_path / name).write_text("deck: x\n")
    monkeypatch.chdir(tmp_path)
    # vim in silent ex mode: it reads its commands from stdin (empty) and quits
    command = editor_command(Path(".") / name, 1, "vim -u NONE -i NONE -N -es")
    subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert not (tmp_path / "X.yaml").exists()
