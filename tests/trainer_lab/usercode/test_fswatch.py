"""fswatch tears a checkpoint file however the script writes it: the file-level fault cuts the
first file written into the checkpoint dir after step 1 to half its bytes as it is closed, then
SIGKILLs the process (real processes: the bootstrap imports torch)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.usercode.evidence import save_events
from trainer_lab.usercode.harness import Faults, ScriptLaunch, ScriptRun, run_script

pytestmark = pytest.mark.lab

STEP = """\
import os, sys, tempfile
import torch

p = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([p], lr=0.1)
p.grad = torch.ones(1)
opt.step()
ckpt = os.environ["DRILL_CKPT_DIR"]
data = bytes(range(256)) * 64
"""

WRITERS = {
    "os.write": """\
fd = os.open(os.path.join(ckpt, "state.bin"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, data)
os.fsync(fd)
os.close(fd)
""",
    "os.fdopen": """\
fd = os.open(os.path.join(ckpt, "state.bin"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
with os.fdopen(fd, "wb") as f:
    f.write(data)
    f.flush()
    os.fsync(f.fileno())
""",
    "mkstemp": """\
fd, tmp = tempfile.mkstemp(dir=ckpt)
with os.fdopen(fd, "wb") as f:
    f.write(data)
os.replace(tmp, os.path.join(ckpt, "state.bin"))
""",
    "NamedTemporaryFile": """\
with tempfile.NamedTemporaryFile(dir=ckpt, delete=False) as f:
    f.write(data)
os.replace(f.name, os.path.join(ckpt, "state.bin"))
""",
}


def run(tmp_path: Path, writer: str, faults: Faults) -> ScriptRun:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = workspace / "train.py"
    script.write_text(STEP + WRITERS[writer] + "open('finished', 'w').close()\n")
    launch = ScriptLaunch(
        "t", script, (), 0, tmp_path / "run", tmp_path / "ckpt", 60.0, faults=faults
    )
    return run_script(launch)


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_low_level_write_is_observed_and_torn(tmp_path: Path, writer: str) -> None:
    result = run(tmp_path, writer, Faults(tear_write_after=1, tear_write=1))
    assert result.status == "error", result.summary()
    assert "SIGKILLed as planned while saving" in result.summary()
    events = save_events(result.observe_dir, [0])
    torn = [e for e in events if e["event"] == "torn"]
    assert len(torn) == 1 and torn[0]["pstep"] == 1
    assert (torn[0]["bytes"], torn[0]["of"]) == (8192, 16384)
    assert [e["path"] for e in events if e["event"] == "write"] == [torn[0]["path"]]
    written = [p for p in (tmp_path / "ckpt").iterdir() if p.is_file()]
    assert [p.stat().st_size for p in written] == [8192]  # half of it, under its first name
    assert not (tmp_path / "ws" / "finished").exists()


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_without_the_fault_each_file_is_one_write(tmp_path: Path, writer: str) -> None:
    """The grader tears each file a save writes: a file counted twice would be a tear planned
    for a write that never comes."""
    result = run(tmp_path, writer, Faults())
    assert result.status == "ok", result.summary()
    events = save_events(result.observe_dir, [0])
    assert len([e for e in events if e["event"] == "write"]) == 1, events
    assert (tmp_path / "ckpt" / "state.bin").stat().st_size == 16384


MARKERS_THEN_DATA = """\
from pathlib import Path
Path(ckpt, "a.done").touch()
open(os.path.join(ckpt, "b.done"), "a").close()
with open(os.path.join(ckpt, "state.bin"), "wb") as f:
    f.write(data)
"""


def test_an_empty_marker_is_a_create_never_torn_and_the_tear_hits_the_next_write(
    tmp_path: Path,
) -> None:
    """Creating an empty file (a commit marker: Path.touch, open(path, "a")) is atomic: it is
    not among the save's writes the tears may hit."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = workspace / "train.py"
    script.write_text(STEP + MARKERS_THEN_DATA + "open('finished', 'w').close()\n")
    launch = ScriptLaunch(
        "t",
        script,
        (),
        0,
        tmp_path / "run",
        tmp_path / "ckpt",
        60.0,
        faults=Faults(tear_write_after=1, tear_write=1),
    )
    result = run_script(launch)
    events = save_events(result.observe_dir, [0])
    assert [(e["event"], e["path"]) for e in events if e["event"] != "fsync"] == [
        ("create", "a.done"),
        ("create", "b.done"),
        ("write", "state.bin"),
        ("torn", "state.bin"),
    ]
    assert (tmp_path / "ckpt" / "state.bin").stat().st_size == 8192


APPEND = """\
with open(os.path.join(ckpt, "log.bin"), "wb") as f:
    f.write(data)
with open(os.path.join(ckpt, "log.bin"), "ab") as f:
    f.write(data)
"""


def test_an_append_is_torn_in_the_middle_of_the_bytes_it_adds(tmp_path: Path) -> None:
    """The second write appends 16384 bytes to a file of 16384: the tear keeps the first
    write whole and half of the appended bytes."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = workspace / "train.py"
    script.write_text(STEP + APPEND)
    launch = ScriptLaunch(
        "t",
        script,
        (),
        0,
        tmp_path / "run",
        tmp_path / "ckpt",
        60.0,
        faults=Faults(tear_write_after=1, tear_write=2),
    )
    result = run_script(launch)
    torn = [e for e in save_events(result.observe_dir, [0]) if e["event"] == "torn"]
    assert [(e["bytes"], e["of"]) for e in torn] == [(16384 + 8192, 32768)]
    assert (tmp_path / "ckpt" / "log.bin").stat().st_size == 16384 + 8192


LATE_WRITER = """\
import os, threading
import torch

p = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([p], lr=0.1)
ckpt = os.environ["DRILL_CKPT_DIR"]
data = bytes(range(256)) * 64
go = threading.Event()


def save(name):  # an asynchronous save: begun now, written later
    go.wait()
    with open(os.path.join(ckpt, name), "wb") as f:
        f.write(data)


old = threading.Thread(target=save, args=("begun-at-0.bin",))
old.start()
for _ in range(2):
    p.grad = torch.ones(1)
    opt.step()
go.set()
old.join()
save("begun-at-2.bin")
open("finished", "w").close()
"""


def test_a_save_begun_before_the_tear_step_is_not_torn_when_it_writes_late(
    tmp_path: Path,
) -> None:
    """The tear hits the first write of a save begun after the tear step (the step its writing
    work began at): an asynchronous save of an earlier step still writing then is not it
    (seen in the fsdp2 round: DCP's async save of step 8 torn after step 12 under load)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = workspace / "train.py"
    script.write_text(LATE_WRITER)
    faults = Faults(tear_write_after=1, tear_write=1)
    launch = ScriptLaunch(
        "t", script, (), 0, tmp_path / "run", tmp_path / "ckpt", 60.0, faults=faults
    )
    result = run_script(launch)
    torn = [e for e in save_events(result.observe_dir, [0]) if e["event"] == "torn"]
    assert [e["path"] for e in torn] == ["begun-at-2.bin"], torn
    assert (tmp_path / "ckpt" / "begun-at-0.bin").stat().st_size == 256 * 64
