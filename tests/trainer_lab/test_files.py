"""trainer_lab.files: the bounded, non-blocking reader of files user code could have planted
(issue 32, item 6). Each read of a hostile file runs in a subprocess (tests.support.
hostile_files.run_bounded), so a reader that blocks fails the test instead of hanging it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.hostile_files import HOSTILE_KINDS, plant, run_bounded
from trainer_lab.files import FileRefused, read_head, read_regular, read_tail, replace_file

_READ_ALL = """
import json, sys
from pathlib import Path
from trainer_lab.files import read_head, read_regular, read_tail
path, follow = Path(sys.argv[1]), sys.argv[2] == "follow"
out = {}
for name, call in (
    ("head", lambda: read_head(path, 1024, follow_symlinks=follow)),
    ("tail", lambda: read_tail(path, 1024, follow_symlinks=follow)),
    ("regular", lambda: read_regular(path, 1024, follow_symlinks=follow)),
):
    try:
        value = call()
        out[name] = ["read", len(value[0] if isinstance(value, tuple) else value)]
    except OSError as error:
        out[name] = [type(error).__name__, str(error)]
print(json.dumps(out))
"""


def read_all(path: Path, follow: bool = False) -> dict[str, list]:
    done = run_bounded([sys.executable, "-c", _READ_ALL, str(path), "follow" if follow else "no"])
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_regular_file_is_read_within_its_cap(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    assert read_head(path, 10) == (b"0123456789", False)
    assert read_head(path, 4) == (b"0123", True)
    assert read_head(path, 4, 8) == (b"89", False)
    assert read_tail(path, 4) == (b"6789", True)
    assert read_tail(path, 10) == (b"0123456789", False)
    assert read_regular(path, 10) == b"0123456789"
    with pytest.raises(FileRefused, match="larger than 9 bytes"):
        read_regular(path, 9)
    with pytest.raises(FileNotFoundError):
        read_head(tmp_path / "none", 4)


@pytest.mark.parametrize("kind", [k for k in HOSTILE_KINDS if k != "sparse-huge"])
def test_anything_but_a_regular_file_is_refused_promptly_with_its_kind(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "result.json"
    plant(path, kind)
    found = read_all(path, follow=True)
    what = {"fifo": "a FIFO", "link-to-dev-zero": "a device", "link-to-fifo": "a FIFO"}
    reason = f"{path} is {what.get(kind, 'a directory')}, not a regular file"
    assert found == {key: ["FileRefused", reason] for key in ("head", "tail", "regular")}


@pytest.mark.parametrize("kind", ["link-to-dev-zero", "link-to-fifo"])
def test_a_symlink_is_refused_unless_following_is_asked_for(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "events-rank0.jsonl"
    plant(path, kind)
    reason = f"{path} is a symbolic link, not a regular file"
    assert read_all(path) == {key: ["FileRefused", reason] for key in ("head", "tail", "regular")}


def test_a_symlink_to_a_file_outside_the_run_folder_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("key")
    path = tmp_path / "run" / "failures" / "rank0.json"
    path.parent.mkdir(parents=True)
    path.symlink_to(secret)
    with pytest.raises(FileRefused, match="symbolic link"):
        read_head(path, 100)
    assert read_head(path, 100, follow_symlinks=True) == (b"key", False)


def test_a_huge_sparse_file_costs_at_most_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "stdout.log"
    plant(path, "sparse-huge")
    found = read_all(path)
    assert found["head"] == ["read", 1024]
    assert found["tail"] == ["read", 1024]
    assert found["regular"] == ["FileRefused", f"{path} is larger than 1024 bytes"]


@pytest.mark.parametrize("kind", ["fifo", "link-to-fifo", "link-to-dev-zero", "directory"])
def test_replace_file_replaces_what_was_planted_without_opening_it(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "events-rank0.jsonl"
    plant(path, kind)
    if kind == "directory":
        with pytest.raises(IsADirectoryError):
            replace_file(path, b"x\n")  # a directory is not replaced by a file
        assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temp file left
        return
    code = (
        "import sys; from pathlib import Path; from trainer_lab.files import replace_file; "
        "replace_file(Path(sys.argv[1]), b'x\\n')"
    )
    done = run_bounded([sys.executable, "-c", code, str(path)])
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == b"x\n" and not path.is_symlink()
