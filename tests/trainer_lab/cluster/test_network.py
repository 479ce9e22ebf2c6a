from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

import pytest

from trainer_lab.cluster.network import (
    MAX_NODES,
    ClusterError,
    bring_up,
    emulated_cluster,
    existing_names,
    owner_of,
    wait_until,
)
from trainer_lab.cluster.probe import Listener, connects


def _dead_pid() -> int:
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


def test_names_carry_the_owner_pid() -> None:
    assert owner_of("drl4242n0") == 4242
    assert owner_of("drl4242h3") == 4242
    assert owner_of("drl4242br") == 4242
    assert owner_of("drl4242x") is None
    assert owner_of("eth0") is None


def test_more_nodes_than_allowed_is_refused_in_one_line() -> None:
    with pytest.raises(ClusterError) as caught:
        bring_up(MAX_NODES + 1)
    assert "\n" not in str(caught.value)
    assert str(MAX_NODES) in str(caught.value)


def test_loopback_mode_gives_loopback_addresses_and_says_so() -> None:
    with emulated_cluster(3, force_loopback=True) as cluster:
        assert cluster.mode == "loopback"
        assert [node.ip for node in cluster.nodes] == ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
        assert cluster.note
        assert all(node.exec_prefix() == [] for node in cluster.nodes)
        with pytest.raises(ClusterError, match="loopback"):
            cluster.partition(1)
        with pytest.raises(ClusterError, match="loopback"):
            cluster.shape(1, 10)


def _owned_now() -> list[str]:
    return [name for name in existing_names() if owner_of(name) == os.getpid()]


@pytest.mark.lab
def test_namespaces_exist_during_and_are_gone_after() -> None:
    with emulated_cluster(2) as cluster:
        assert cluster.mode == "netns", cluster.note
        made = cluster.names()
        assert set(made) <= set(existing_names())
        assert {f"drl{os.getpid()}n0", f"drl{os.getpid()}n1"} <= set(made)
    assert _owned_now() == []


@pytest.mark.lab
def test_teardown_also_after_an_exception_inside() -> None:
    with pytest.raises(RuntimeError, match="inside"), emulated_cluster(2) as cluster:
        assert cluster.mode == "netns", cluster.note
        assert _owned_now()
        raise RuntimeError("inside")
    assert _owned_now() == []


@pytest.mark.lab
def test_leftovers_of_a_dead_owner_are_cleaned_and_a_live_owners_kept() -> None:
    dead = _dead_pid()
    live = subprocess.Popen(["sleep", "60"])
    mine = [f"drl{dead}n0", f"drl{dead}br", f"drl{live.pid}n0"]
    try:
        subprocess.run(["ip", "netns", "add", mine[0]], check=True)
        subprocess.run(["ip", "link", "add", mine[1], "type", "bridge"], check=True)
        subprocess.run(["ip", "netns", "add", mine[2]], check=True)
        with emulated_cluster(2) as cluster:
            assert set(cluster.cleaned) == {mine[0], mine[1]}
            present = set(existing_names())
            assert mine[0] not in present and mine[1] not in present
            assert mine[2] in present
    finally:
        live.kill()
        live.wait()
        for name in mine:
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)
            subprocess.run(["ip", "link", "delete", name], capture_output=True)


@pytest.mark.lab
def test_a_partition_stops_connections_and_healing_restores_them() -> None:
    with emulated_cluster(2) as cluster, Listener(cluster, 1) as listener:
        assert connects(cluster, 0, listener)
        cluster.partition(1)
        assert not connects(cluster, 0, listener, timeout_s=0.5)
        cluster.heal(1)
        assert wait_until(lambda: connects(cluster, 0, listener, timeout_s=0.5), timeout_s=10)


@pytest.mark.lab
def test_bandwidth_shaping_is_applied_on_both_ends_of_the_link() -> None:
    with emulated_cluster(2) as cluster:
        applied = cluster.shape(1, 10, delay_ms=5)
        node = cluster.nodes[1]
        host_side = subprocess.run(
            ["tc", "qdisc", "show", "dev", node.host_ifname or ""],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        node_side = subprocess.run(
            [*node.exec_prefix(), "tc", "qdisc", "show", "dev", node.ifname],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        kind = "netem" if cluster.netem else "tbf"
        assert applied.mode == kind
        for shown in (host_side, node_side):
            assert f"qdisc {kind}" in shown and "10Mbit" in shown
        if not cluster.netem:
            assert applied.delay_ms is None
            assert any("netem" in why for why in applied.skipped)
        cluster.unshape(1)
        after = subprocess.run(
            ["tc", "qdisc", "show", "dev", node.host_ifname or ""],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert f"qdisc {kind}" not in after


_KILLED_OWNER = (
    "import os, signal\n"
    "from trainer_lab.cluster.network import bring_up\n"
    "cluster = bring_up(2)\n"
    "print(' '.join(cluster.names()), flush=True)\n"
    "os.kill(os.getpid(), signal.SIGKILL)\n"
)


@pytest.mark.lab
def test_a_run_killed_with_sigkill_is_cleaned_by_the_next_start() -> None:
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_OWNER], capture_output=True, text=True, timeout=60
    )
    assert killed.returncode == -signal.SIGKILL
    left = killed.stdout.split()
    assert left and set(left) <= set(existing_names())
    try:
        with emulated_cluster(2) as cluster:
            assert set(left) <= set(cluster.cleaned)
            assert not set(left) & set(existing_names())
    finally:
        for name in left:
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)
            subprocess.run(["ip", "link", "delete", name], capture_output=True)


_REPORT_MODE = (
    "from trainer_lab.cluster.network import bring_up\n"
    "cluster = bring_up(2)\n"
    "print(cluster.mode, ' '.join(node.ip for node in cluster.nodes), '|', cluster.note)\n"
    "cluster.teardown()\n"
)


def _mode_under(wrapper: list[str]) -> str:
    """The cluster's mode in a child run under `wrapper` (unshare, setpriv: util-linux, present
    here and in CI). Only a user who is not root skips; as root a missing tool or a wrapper
    that cannot run fails, like the containment tests."""
    if os.geteuid() != 0:
        pytest.skip("needs root (the wrappers drop root's privileges)")
    assert shutil.which(wrapper[0]), f"{wrapper[0]} is not installed"
    done = subprocess.run(
        [*wrapper, sys.executable, "-c", _REPORT_MODE], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_not_root_runs_on_loopback_and_says_why() -> None:
    shown = _mode_under(["unshare", "--user"])
    assert shown.startswith("loopback 127.0.0.2 127.0.0.3 |")
    assert "not root" in shown


def test_root_without_net_admin_runs_on_loopback_and_says_why() -> None:
    shown = _mode_under(["setpriv", "--inh-caps=-net_admin", "--bounding-set=-net_admin"])
    assert shown.startswith("loopback 127.0.0.2 127.0.0.3 |")
    assert "Operation not permitted" in shown
