from __future__ import annotations

from pathlib import Path

import pytest

from trainer_lab.cluster.agents import AgentGroup, AgentSpec, run_agents
from trainer_lab.cluster.network import emulated_cluster, wait_until
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


_WAITS = (
    "import os, pathlib, time\n"
    "out = pathlib.Path(os.environ['CLUSTER_OUT_DIR'])\n"
    "(out / f\"node{os.environ['DRILL_NODE']}-rank{os.environ['RANK']}\").write_text('')\n"
    "while not (out / 'stop').exists():\n"
    "    time.sleep(0.05)\n"
)


@pytest.mark.lab
def test_a_node_started_late_joins_and_a_running_node_is_not_started_twice(
    tmp_path: Path,
) -> None:
    script = tmp_path / "waits.py"
    script.write_text(_WAITS)
    env = {"CLUSTER_OUT_DIR": str(tmp_path)}
    with (
        emulated_cluster(2) as cluster,
        AgentGroup(cluster, AgentSpec(script), tmp_path, env, start_nodes={0}) as agents,
    ):
        assert set(agents.procs) == {0}  # node 0 waits in the rendezvous for node 1
        agents.start_node(1)
        with pytest.raises(RuntimeError, match="still runs"):
            agents.start_node(1)
        assert wait_until(lambda: len(list(tmp_path.glob("node*-rank*"))) == 2, 60)
        (tmp_path / "stop").touch()
        assert agents.wait(60)
    # each worker knows its emulated node (DRILL_NODE); the late node took the other rank
    names = sorted(path.name for path in tmp_path.glob("node*-rank*"))
    assert len(names) == 2 and names[0].startswith("node0-") and names[1].startswith("node1-")
    assert {name.rsplit("rank", 1)[1] for name in names} == {"0", "1"}
    assert agents.poll() == {0: 0, 1: 0}
