"""Files user code can plant where drill or trainer_lab reads one back (issue 32, item 6): a
FIFO, a symlink to /dev/zero or to a FIFO, a directory, a huge sparse file. `plant(path, kind)`
puts one in place of whatever is at path (as graded code would, from inside its run folder).

Tests that read a planted file run the reader in a subprocess with `run_bounded`, so a reader
that blocks (the regression) fails the test instead of hanging the suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HOSTILE_KINDS = ("fifo", "link-to-dev-zero", "link-to-fifo", "directory", "sparse-huge")
SPARSE_BYTES = 64 * 1024**3  # 64 GiB of nothing: a read of the whole file would never end
BOUND_S = 60.0  # a guard against a hang, not a timing assertion: a prompt read takes < 1 s


def plant(path: Path, kind: str) -> None:
    """Replace path with a hostile `kind` (one of HOSTILE_KINDS)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link-to-dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "link-to-fifo":
        target = path.with_name(f".{path.name}.fifo-target")
        os.mkfifo(target)
        path.symlink_to(target.name)
    elif kind == "directory":
        path.mkdir()
    elif kind == "sparse-huge":
        with path.open("wb") as f:
            f.truncate(SPARSE_BYTES)
    else:
        raise ValueError(f"unknown kind {kind!r}")


def run_bounded(
    args: list[str], *, env: dict[str, str] | None = None, stdin: int | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command (from the repository root) that must end on its own; a hang fails the
    test with the command's name (the child is killed)."""
    try:
        return subprocess.run(
            args,
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL if stdin is None else stdin,
            capture_output=True,
            text=True,
            timeout=BOUND_S,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"blocked: {' '.join(args)} did not end in {BOUND_S:.0f} s") from None


def python_module(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]
