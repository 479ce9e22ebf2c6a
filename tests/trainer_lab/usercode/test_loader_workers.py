"""The DataLoader-worker side of the recorder (usercode/loader_workers.py) without a grading:
which sample ids a sampler's index holds, and the plan that rides in multiprocessing's
preparation data to a spawned process (the end-to-end runs are the biotech and preemption
red-team tests)."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import torch

from tests.support.paths import REPO
from trainer_lab.usercode.dataplan import DataPlan
from trainer_lab.usercode.loader_workers import _ChildPlan, _ids

GIVEN = """\
PAD_ID = 0
BATCH_SIZE = 4
def _sample(seed, index):
    return (seed, index)
def _read(index):
    return _sample(0, index)
_fetch = _read
"""

CHILD = """\
import pickle, sys
pickle.loads(open(sys.argv[1], "rb").read())
sys.path.insert(0, sys.argv[2])
import drill_data
print(drill_data.PAD_ID, drill_data.BATCH_SIZE, drill_data._fetch is drill_data._read,
      drill_data._read(5))
"""


def test_a_samplers_index_gives_its_ids_and_never_raises() -> None:
    assert _ids([3, 1, 2]) == [3, 1, 2]
    assert _ids((4,)) == [4]
    assert _ids(torch.tensor([5, 6])) == [5, 6]
    assert _ids(7) == [7] and _ids(torch.tensor(8)) == [8]
    assert _ids(["a", 2, True, None, 2.5]) == [2]  # what is not an id is left out
    assert _ids(None) == [] and _ids({"x": 1}) == []


def _child(tmp_path: Path, payload: object) -> str:
    (tmp_path / "given").mkdir()
    (tmp_path / "given" / "drill_data.py").write_text(GIVEN)
    (tmp_path / "plan.pkl").write_bytes(pickle.dumps(payload))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "plan.pkl"), str(tmp_path / "given")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_a_spawned_process_imports_the_dataset_with_the_launchs_constants_and_reader(
    tmp_path: Path,
) -> None:
    """Unpickling the plan (as multiprocessing's preparation data is, before the script is
    imported again) arms the import: drill_data then has the launch's PAD_ID and BATCH_SIZE and
    the grader's reader as both _fetch and _read (the launch's seed, not the module's)."""
    plan = DataPlan(seed=11, batch_size=6, pad_id=22)
    pad, batch, same, *read = _child(tmp_path, _ChildPlan(plan, rank=1, world=2))
    assert (pad, batch, same) == ("22", "6", "True")
    assert "".join(read) == "(11,5)"


def test_a_plan_that_cannot_be_read_leaves_the_spawned_process_alone(tmp_path: Path) -> None:
    """The plan's few lines never fail the child: any spawned process unpickles them."""
    broken = _ChildPlan(None, rank=0, world=1)
    broken.code = broken.code.replace("DataPlan.from_env(None)", "DataPlan.from_env(1 / 0)")
    pad, batch, same, *read = _child(tmp_path, broken)
    assert (pad, batch, same, "".join(read)) == ("0", "4", "True", "(0,5)")


SLOW_STOP = """
import json, multiprocessing.util, sys, time
from pathlib import Path
import torch
from trainer_lab.usercode import teardown
from trainer_lab.usercode.recorder import Recorder

def slow_exit(worker_id):  # each worker takes a while to leave, as a loaded machine's do
    multiprocessing.util.Finalize(None, time.sleep, args=(0.6,), exitpriority=10)

out = Path(sys.argv[1])
Recorder(out, 0, {}).install()
guard = teardown.TeardownGuard(out, 0, 1)
guard.install()
teardown.TEARDOWN_S = 0.4
loader = torch.utils.data.DataLoader(
    list(range(8)), batch_size=2, num_workers=2, worker_init_fn=slow_exit,
    multiprocessing_context="fork", persistent_workers=True,
)
assert [b.tolist() for b in loader][0] == [0, 1]
guard.arm()  # as after destroy_process_group: then main() returns and frees the loader
del loader
guard.disarm()
print(json.dumps([json.loads(line)["event"] for line in (out / "workers-rank0.jsonl").open()]))
"""


def test_stopping_loader_workers_is_told_and_holds_the_teardown_guard(tmp_path: Path) -> None:
    """A DataLoader stopping its workers after the group was destroyed is the script's bounded
    work: the workers' events are recorded (the stall watch reads them) and the teardown guard
    (here 0.4 s) does not end the rank while two workers take 0.6 s each to leave."""
    done = subprocess.run(
        [sys.executable, "-c", SLOW_STOP, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[-2] == '["start", "ready", "stop", "stopped"]'
    assert [p.read_text() for p in tmp_path.glob("teardown-rank0-*.txt")] == [""]
