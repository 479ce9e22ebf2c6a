"""The preemption fault (usercode/sigterm.py) in a real process (lab): SIGTERM right after the
first rank's optimizer step N, recorded before it is sent; a Python handler runs before the step
returns, no handler means the process dies of it; the second SIGTERM comes with half the save's
bytes on disk: a handler that stays lets the save complete, a one-shot handler leaves half a
file."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from trainer_lab.usercode.evidence import term_records
from trainer_lab.usercode.harness import Faults, ScriptLaunch, ScriptRun, run_script

pytestmark = pytest.mark.lab

SCRIPT = """\
import os, signal, sys
import torch
got = []
def on_term(signum, frame):
    got.append(signum)
    if ONE_SHOT:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
if HANDLER:
    signal.signal(signal.SIGTERM, on_term)
p = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([p], lr=0.1)
for step in range(1, 5):
    p.grad = torch.ones(1)
    opt.step()
    print(step, len(got), flush=True)
    if got:
        torch.save({"w": torch.arange(50_000)}, os.path.join(sys.argv[1], "stop.pt"))
        break
"""


def launched(tmp_path: Path, handler: bool, one_shot: bool = False, again: bool = False):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = workspace / "train.py"
    script.write_text(f"HANDLER = {handler}\nONE_SHOT = {one_shot}\n" + SCRIPT)
    ckpt = tmp_path / "ckpt"
    faults = Faults(term_after_step=2, term_first=0, term_again_during_save=again)
    launch = ScriptLaunch("t", script, (str(ckpt),), 0, tmp_path / "run", ckpt, 60.0, faults)
    return run_script(launch), ckpt / "stop.pt"


def whys(run: ScriptRun) -> list[str]:
    return [r["why"] for r in term_records(run.observe_dir, 0)]


def test_a_handler_runs_right_after_step_n_and_the_run_goes_on(tmp_path):
    run, saved = launched(tmp_path, handler=True)
    assert run.status == "ok", run.summary()
    assert (run.run_dir / "stdout.log").read_text().splitlines() == ["1 0", "2 1"]
    assert whys(run) == ["after step 2"]
    assert saved.stat().st_size > 100_000  # whole: no second SIGTERM asked for


def test_without_a_handler_the_process_dies_of_it_and_the_record_stays(tmp_path):
    run, _ = launched(tmp_path, handler=False)
    assert run.status == "error" and run.returncode == -15
    assert whys(run) == ["after step 2"]


def test_a_second_sigterm_mid_save_is_survived_by_a_handler_that_stays(tmp_path):
    run, saved = launched(tmp_path, handler=True, again=True)
    assert run.status == "ok", run.summary()
    assert whys(run) == ["after step 2", "during the save of stop.pt"]
    assert torch.load(saved)["w"].numel() == 50_000


def test_a_second_sigterm_mid_save_kills_a_one_shot_handler_leaving_half_a_file(tmp_path):
    run, saved = launched(tmp_path, handler=True, one_shot=True, again=True)
    assert run.status == "error" and run.returncode == -15
    assert whys(run) == ["after step 2", "during the save of stop.pt"]
    with pytest.raises(Exception):  # noqa: B017 - torch's error for a truncated archive
        torch.load(saved)
