"""Dropout off in the launches a grading compares with a run that cannot draw the same masks (the
W=3 run and its one-process reference), under the real harness: nn.Dropout, F.dropout (however
imported) and torch.dropout act as the identity there, and only there."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.grading.contract import LAUNCHES, W2_REFERENCE, W3_REFERENCE
from trainer_lab.grading.grader import plan_env
from trainer_lab.usercode import protocol
from trainer_lab.usercode.harness import ScriptLaunch, run_script

pytestmark = pytest.mark.lab

SCRIPT = """\
import torch
from torch.nn.functional import dropout

x = torch.ones(1000)
kept = [
    bool(torch.equal(torch.nn.Dropout(0.5).train()(x), x)),
    bool(torch.equal(dropout(x, 0.5, True), x)),
    bool(torch.equal(torch.dropout(x, 0.5, True), x)),
]
print("kept", kept)
"""


def run(tmp_path: Path, env: tuple[tuple[str, str], ...]) -> str:
    workspace = tmp_path / "ws"
    workspace.mkdir(parents=True)
    script = workspace / "train.py"
    script.write_text(SCRIPT)
    launch = ScriptLaunch(
        "t", script, (), 0, tmp_path / "run", tmp_path / "ckpt", 60.0, extra_env=env
    )
    result = run_script(launch)
    assert result.status == "ok", result.summary()
    return (tmp_path / "run" / "stdout.log").read_text()


def test_dropout_is_the_identity_only_where_the_launch_asks(tmp_path: Path) -> None:
    assert "kept [True, True, True]" in run(tmp_path / "off", ((protocol.NO_DROPOUT_ENV, "1"),))
    assert "kept [False, False, False]" in run(tmp_path / "on", ())


def test_the_w3_run_and_its_reference_have_dropout_off_and_no_other_launch() -> None:
    off = {name for name, plan in LAUNCHES.items() if plan_env(plan)}
    assert off == {"w3", W3_REFERENCE, W2_REFERENCE}
    assert (protocol.NO_DROPOUT_ENV, "1") in plan_env(LAUNCHES["w3"])
