from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.cluster.agents import AgentSpec, run_agents
from trainer_lab.cluster.network import emulated_cluster
from trainer_lab.procs import is_alive

_HANGS = (
    "import os, pathlib, time\n"
    "out = pathlib.Path(os.environ['CLUSTER_OUT_DIR'])\n"
    "(out / f\"pid{os.environ['RANK']}\").write_text(str(os.getpid()))\n"
    "time.sleep(600)\n"
)


@pytest.mark.lab
def test_agents_past_the_deadline_are_killed_with_their_workers(tmp_path: Path) -> None:
    script = tmp_path / "hangs.py"
    script.write_text(_HANGS)
    with emulated_cluster(2) as cluster:
        assert cluster.mode == "netns", cluster.note
        outcome = run_agents(
            cluster,
            AgentSpec(script),
            tmp_path,
            deadline_s=15,
            env={"CLUSTER_OUT_DIR": str(tmp_path)},
        )
    assert outcome.timed_out
    assert outcome.returncodes == {0: None, 1: None}
    workers = [int(path.read_text()) for path in tmp_path.glob("pid*")]
    assert len(workers) == 2  # both nodes' workers had started before the deadline
    assert not [pid for pid in workers if is_alive(pid)]
