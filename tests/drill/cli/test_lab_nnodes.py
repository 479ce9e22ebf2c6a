"""`drill lab run LAB --nnodes N`: a cluster lab runs on its emulated nodes; a node count the
lab does not run on, or more than this machine emulates, is refused in one line (exit 2)."""

from __future__ import annotations

import argparse

import pytest

from drill.cli import lab as lab_cli
from trainer_lab.catalogue import get_lab
from trainer_lab.cluster.nodes import check_nnodes, lab_nodes


def _cli(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="drill")
    lab_cli.register(parser.add_subparsers())
    return parser.parse_args(list(argv))


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["lab", "run", "node-loss", "--nnodes", "5"], "emulates 1 to 4 nodes"),
        (["lab", "run", "node-loss", "--nnodes", "0"], "emulates 1 to 4 nodes"),
        (
            ["lab", "run", "ddp-baseline", "--nnodes", "2"],
            "node-loss, partition, per-node-state, rdzv-host-loss, restart-accounting",
        ),
        (["lab", "run", "partition", "--nnodes", "1"], "runs on 2 node(s), not 1"),
    ],
)
def test_a_node_count_the_lab_does_not_run_on_is_refused_in_one_line(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _cli(*argv)
    assert args.func(args) == 2
    err = capsys.readouterr().err
    assert fragment in err
    assert len(err.strip().splitlines()) == 1


def test_the_cluster_labs_run_on_two_nodes_and_the_others_on_one() -> None:
    cluster_labs = (
        "node-loss",
        "rdzv-host-loss",
        "partition",
        "per-node-state",
        "restart-accounting",
        "slow-link",
    )
    for name in cluster_labs:
        assert lab_nodes(get_lab(name)) == 2
        assert check_nnodes(get_lab(name), 2) == 2
    assert check_nnodes(get_lab("ddp-baseline"), 1) == 1
