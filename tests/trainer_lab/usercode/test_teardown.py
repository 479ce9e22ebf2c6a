"""The teardown guard: a rank stuck after destroy_process_group (gloo's destructor deadlock,
stood in for here by a sleep) is ended and read as the runtime's shutdown race, under both
launchers; a script that never destroys its group, or returns, is untouched (real W=2 runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.usercode import protocol
from trainer_lab.usercode.evidence import read_jsonl
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun, run_script
from trainer_lab.usercode.protocol import TEARDOWN_S
from trainer_lab.usercode.stall import STALL_S

pytestmark = pytest.mark.lab

STUCK_AFTER_DESTROY = """
import time
import torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
dist.barrier()
dist.destroy_process_group()
if rank == 1:
    time.sleep(600)  # as the group's destructor deadlocked
"""
STUCK_BEFORE_DESTROY = """
import time
import torch.distributed as dist
dist.init_process_group("gloo")
if dist.get_rank() == 1:
    time.sleep(600)
dist.destroy_process_group()
"""


# A correct script whose DataLoader (two workers that take 9 s each to leave, as spawned ones
# can on a loaded machine) is freed when main() returns, after destroy_process_group: torch
# joins each worker for 5 s, then terminates it. Ten seconds with no record, all of it the
# script's own exit work: more than the stall watch's 8 s and the teardown guard's 5 s.
SLOW_LOADER_EXIT = """
import multiprocessing.util, time
import torch
import torch.distributed as dist

def slow_exit(worker_id):
    multiprocessing.util.Finalize(None, time.sleep, args=(9.0,), exitpriority=10)

def main():
    dist.init_process_group("gloo")
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(
        torch.ones(8, 2), batch_size=2, num_workers=2, worker_init_fn=slow_exit,
        multiprocessing_context="fork", persistent_workers=True,
    )
    for x in loader:
        opt.zero_grad()
        model(x).sum().backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
    dist.destroy_process_group()

if __name__ == "__main__":
    main()
"""


def run(
    tmp_path: Path, source: str, launcher: str, timeout_s: float = 40.0, watch: bool = False
) -> ScriptRun:
    workspace = tmp_path / launcher
    workspace.mkdir()
    script = workspace / "train.py"
    script.write_text(source)
    launch = ScriptLaunch(
        "t", script, (), 2, workspace / "run", workspace / "ckpt", timeout_s,
        launcher=launcher, watch_progress=watch,  # type: ignore[arg-type]
    )  # fmt: skip
    return run_script(launch)


def test_loader_workers_slow_to_leave_after_the_group_is_gone_are_neither_hang_nor_race(tmp_path):
    result = run(tmp_path, SLOW_LOADER_EXIT, "warm", timeout_s=60, watch=True)
    assert result.status == "ok", result.summary()
    assert result.stall is None
    # each rank lived through its workers' stop (a guard that fired meanwhile would have ended
    # it before "stopped"; gloo's own shutdown race, after it, is still a note), and the
    # workers did take their time: longer than both limits
    for rank in (0, 1):
        events = read_jsonl(result.observe_dir / protocol.workers_file(rank))
        assert [e["event"] for e in events] == ["start", "ready", "stop", "stopped"]
        assert events[3]["time"] - events[2]["time"] > STALL_S > TEARDOWN_S


@pytest.mark.parametrize("launcher", ["warm", "torchrun"])
def test_a_rank_stuck_after_destroying_its_group_is_a_note_not_a_failure(tmp_path, launcher):
    result = run(tmp_path, STUCK_AFTER_DESTROY, launcher)
    assert result.status == "ok", result.summary()
    assert result.duration_s < 30
    [note] = result.notes
    assert "rank 1 stuck 5 s in gloo's teardown after destroy_process_group" in note
    assert "not counted against it" in note


def test_a_rank_stuck_before_destroying_its_group_is_still_a_hang(tmp_path):
    result = run(tmp_path, STUCK_BEFORE_DESTROY, "warm", timeout_s=12)
    assert result.status == "timeout", result.summary()
    assert result.notes == []
