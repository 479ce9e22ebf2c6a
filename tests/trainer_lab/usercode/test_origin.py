"""A checkpoint file written in the background belongs to the optimizer step that began its
save: threads and pool tasks carry the step count of the code that started them (origin.py,
in-process); under the harness, an asynchronous write is recorded with its origin, and a file
torch.distributed.checkpoint opened is marked as DCP's, one the script named like it is not
(real processes: the bootstrap imports torch)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from trainer_lab.usercode import origin
from trainer_lab.usercode.evidence import save_events
from trainer_lab.usercode.harness import ScriptLaunch, run_script


@pytest.fixture
def steps() -> Iterator[list[int]]:
    count = [0]
    undo = origin.install(lambda: count[0])
    yield count
    undo()


def test_a_thread_and_a_pool_task_keep_the_step_they_were_started_at(steps: list[int]) -> None:
    seen: dict[str, int] = {}
    go = threading.Event()

    def later(name: str) -> None:
        go.wait(10)
        seen[name] = origin.origin(steps[0])

    steps[0] = 4
    thread = threading.Thread(target=later, args=("thread",))
    thread.start()
    with ThreadPoolExecutor(max_workers=1) as pool:
        task = pool.submit(later, "task")
        called = []
        task.add_done_callback(lambda _: called.append(origin.origin(steps[0])))
        steps[0] = 5  # the next step runs while they write
        go.set()
        task.result()
        thread.join(10)
        # a task submitted later to the same worker thread has its own start
        assert pool.submit(lambda: origin.origin(steps[0])).result() == 5
    assert seen == {"thread": 4, "task": 4}
    assert called == [4]  # the done-callback runs in the task's thread, after it
    assert origin.origin(steps[0]) == 5  # the main thread: the step count now


def test_installing_twice_keeps_the_first(steps: list[int]) -> None:
    undo = origin.install(lambda: 99)
    undo()  # a no-op: the fixture's install stays
    steps[0] = 3
    with ThreadPoolExecutor(max_workers=1) as pool:
        assert pool.submit(lambda: origin.origin(0)).result() == 3


SCRIPT = """\
import os
from concurrent.futures import ThreadPoolExecutor
import torch
import torch.distributed.checkpoint as dcp

ckpt = os.environ["DRILL_CKPT_DIR"]
p = torch.nn.Parameter(torch.zeros(4))
opt = torch.optim.SGD([p], lr=0.1)

def step():
    p.grad = torch.ones(4)
    opt.step()

def write(name):
    with open(os.path.join(ckpt, name), "wb") as f:
        f.write(b"x" * 100)

step()
pool = ThreadPoolExecutor(max_workers=1)
started = pool.submit(lambda: None)
started.result()
go = __import__("threading").Event()
task = pool.submit(lambda: (go.wait(10), write("async.bin")))
step()  # the write lands after step 2, begun after step 1
go.set()
task.result()
dcp.save({"p": p.detach().clone()}, checkpoint_id=os.path.join(ckpt, "d"))
torch.save({"p": p.detach()}, os.path.join(ckpt, "__0_0.distcp"))
"""


@pytest.mark.lab
def test_an_asynchronous_write_keeps_its_origin_and_dcps_files_are_marked(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = workspace / "train.py"
    script.write_text(SCRIPT)
    launch = ScriptLaunch("t", script, (), 0, tmp_path / "run", tmp_path / "ckpt", 60.0)
    result = run_script(launch)
    assert result.status == "ok", result.summary()
    writes = {e["path"]: e for e in save_events(result.observe_dir, [0]) if e["event"] == "write"}
    assert (writes["async.bin"]["pstep"], writes["async.bin"]["origin"]) == (2, 1)
    assert not writes["async.bin"].get("dcp")
    assert writes["d/__0_0.distcp"].get("dcp") is True, writes
    assert writes["d/.metadata.tmp"].get("dcp") is True, writes
    assert writes["d/__0_0.distcp"]["origin"] == 2
    assert not writes["__0_0.distcp"].get("dcp"), writes  # the script's torch.save
