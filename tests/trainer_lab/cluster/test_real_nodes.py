"""One node of a cluster lab on a real machine: the torchrun command each node runs (node 0 hosts
the store), the spec every node shares, and the refusals; then two such nodes on this machine's
loopback run the node-loss job to its end."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from trainer_lab.catalogue import get_lab
from trainer_lab.catalogue_types import LabSpec, ParamError
from trainer_lab.cluster.lab_run import read_events
from trainer_lab.cluster.real_nodes import (
    SPEC_NAME,
    check_node_rank,
    node_argv,
    parse_endpoint,
    print_plan_lines,
    real_labs,
    real_plan,
    run_node,
)


def _plan(lab: str = "node-loss", **params: object) -> tuple[LabSpec, dict[str, Any]]:
    spec = get_lab(lab)
    return spec, spec.resolve_params(dict(params))


def test_each_node_runs_the_labs_agent_and_only_node_zero_hosts_the_store() -> None:
    spec, params = _plan(min_nodes=1, max_restarts=1)
    plan = real_plan(spec, params)
    argv0 = node_argv(plan, "node-loss", 2, 0, "hosta:29400", python="python")
    argv1 = node_argv(plan, "node-loss", 2, 1, "hosta:29400", python="python")
    assert argv0[:3] == ["python", "-m", "torch.distributed.run"]
    for argv in (argv0, argv1):
        assert argv[argv.index("--nnodes") + 1] == "1:2"
        assert argv[argv.index("--max-restarts") + 1] == "1"
        assert argv[argv.index("--rdzv-endpoint") + 1] == "hosta:29400"
        assert argv[argv.index("--rdzv-id") + 1] == "drill-node-loss"  # the same on every node
        assert argv[-2:] == ["-m", "trainer_lab.cluster.train_worker"]
    assert "is_host=true" in argv0[argv0.index("--rdzv-conf") + 1]
    assert "is_host=false" in argv1[argv1.index("--rdzv-conf") + 1]


def test_the_printed_plan_holds_the_shared_spec_and_one_command_per_node(tmp_path: Path) -> None:
    spec, params = _plan("partition", monitored_barrier=False)
    lines = print_plan_lines(spec, params, 2, "10.0.0.1:29400", tmp_path)
    worker = json.loads(lines[lines.index(next(x for x in lines if x.startswith("mkdir"))) + 1])
    assert worker["out"] == str(tmp_path) and worker["monitored_barrier"] is False
    commands = [line for line in lines if "torch.distributed.run" in line]
    assert len(commands) == 2
    assert all(f"CLUSTER_SPEC={tmp_path / SPEC_NAME}" in line for line in commands)
    assert "DRILL_NODE=1" in commands[1]
    assert lines[-2].startswith("# then, by hand:")


@pytest.mark.parametrize(
    "endpoint", ["nohost", "host:", ":29400", "host:0", "host:70000", "a b:1", "host:12x"]
)
def test_a_bad_endpoint_is_refused(endpoint: str) -> None:
    with pytest.raises(ParamError, match="HOST:PORT"):
        parse_endpoint(endpoint)


def test_endpoints_by_name_address_and_bracketed_ipv6_are_taken() -> None:
    assert parse_endpoint("node0.example:29400") == ("node0.example", 29400)
    assert parse_endpoint("10.0.0.1:1") == ("10.0.0.1", 1)
    assert parse_endpoint("[fe80::1]:29400") == ("[fe80::1]", 29400)


def test_node_ranks_outside_the_cluster_and_labs_without_a_real_form_are_refused() -> None:
    assert check_node_rank(1, 2) == 1
    with pytest.raises(ParamError, match="must be 0 to 1"):
        check_node_rank(2, 2)
    with pytest.raises(ParamError, match="runs on one node"):
        real_plan(*_plan("ddp-baseline"))
    assert {"node-loss", "partition", "rdzv-host-loss"} <= set(real_labs())


@pytest.mark.lab
def test_two_nodes_started_apart_meet_at_the_endpoint_and_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "lo")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec, params = _plan(steps=6, min_nodes=2)  # neither node starts training alone
    codes: dict[int, int] = {}

    def node(rank: int) -> None:
        codes[rank] = run_node(
            spec, params, 2, rank, f"127.0.0.1:{port}", tmp_path, on_start=lambda _: None
        )

    threads = [threading.Thread(target=node, args=(rank,)) for rank in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert codes == {0: 0, 1: 0}
    events = read_events(tmp_path)
    starts = [e for e in events if e["event"] == "start"]
    assert sorted((e["node"], e["world_size"]) for e in starts) == [(0, 2), (1, 2)]
    assert {e["rank"] for e in starts} == {0, 1}
    assert sorted(e["step"] for e in events if e["event"] == "finished") == [6, 6]
