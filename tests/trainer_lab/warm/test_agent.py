"""The warm agent ends a launch as torchrun does: the same verdict and root cause for a rank that
leaves with os._exit, raises, or is killed by a signal (real W=2 runs, both launchers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun, run_script

pytestmark = pytest.mark.lab

PRELUDE = (
    "import os, signal, sys\nimport torch.distributed as dist\ndist.init_process_group('gloo')\n"
)
ENDINGS = {
    "os_exit": "dist.barrier()\nsys.stdout.flush()\nos._exit(0)\n",
    "exit_code": "if dist.get_rank() == 1:\n    sys.exit(3)\ndist.barrier()\n",
    "raises": "if dist.get_rank() == 1:\n    raise ValueError('bad')\ndist.barrier()\n",
    "killed": "if dist.get_rank() == 1:\n    os.kill(os.getpid(), 9)\ndist.barrier()\n",
}


def run(tmp_path: Path, launcher: str, ending: str) -> ScriptRun:
    workspace = tmp_path / launcher
    workspace.mkdir()
    script = workspace / "train.py"
    script.write_text(PRELUDE + ENDINGS[ending])
    launch = ScriptLaunch(
        ending,
        script,
        (),
        2,
        workspace / "run",
        workspace / "ckpt",
        60.0,
        launcher=launcher,  # type: ignore[arg-type]
    )
    return run_script(launch)


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_a_rank_ends_the_launch_the_same_way_under_both_launchers(tmp_path, ending):
    cold = run(tmp_path, "torchrun", ending)
    warm = run(tmp_path, "warm", ending)
    assert warm.status == cold.status, (warm.summary(), cold.summary())
    assert (warm.status == "ok") == (ending == "os_exit")
    if cold.root_cause is not None:
        assert warm.root_cause is not None
        assert (warm.root_cause.rank, warm.root_cause.kind) == (
            cold.root_cause.rank,
            cold.root_cause.kind,
        )
        # the same finding; a peer's gloo error after it varies from run to run ("closed", "reset")
        assert warm.root_cause.message.split(":")[0] == cold.root_cause.message.split(":")[0]
