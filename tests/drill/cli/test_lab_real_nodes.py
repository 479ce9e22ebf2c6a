"""`drill lab run LAB --nnodes N --print-commands` prints each real machine's torchrun command;
`--node-rank R --rdzv-endpoint HOST:PORT` runs one node; bad input is one line, exit 2."""

from __future__ import annotations

import argparse

import pytest

from drill.cli import lab as lab_cli


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="drill")
    lab_cli.register(parser.add_subparsers())
    args = parser.parse_args(["lab", "run", *argv])
    code: int = args.func(args)
    return code


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["node-loss", "--print-commands"], "need --nnodes"),
        (["node-loss", "--nnodes", "2", "--node-rank", "0"], "go together"),
        (["node-loss", "--nnodes", "2", "--rdzv-endpoint", "h:1"], "go together"),
        (["node-loss", "--nnodes", "2", "--node-rank", "2", "--rdzv-endpoint", "h:1"], "0 to 1"),
        (["node-loss", "--nnodes", "2", "--node-rank", "-1", "--rdzv-endpoint", "h:1"], "0 to 1"),
        (["node-loss", "--nnodes", "2", "--node-rank", "0", "--rdzv-endpoint", "h"], "HOST:PORT"),
        (["partition", "--nnodes", "2", "--print-commands", "--rdzv-endpoint", "h:0"], "HOST:PORT"),
        (["per-node-state", "--nnodes", "2", "--print-commands"], "no real-cluster form"),
        (["ddp-baseline", "--nnodes", "1", "--print-commands"], "runs on one node"),
        (["node-loss", "--nnodes", "3", "--print-commands"], "runs on 2 node(s), not 3"),
    ],
)
def test_bad_real_node_input_is_one_line_and_exit_2(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(*argv) == 2
    captured = capsys.readouterr()
    assert fragment in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    assert captured.out == ""


def test_print_commands_shows_one_torchrun_command_per_node(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["node-loss", "--nnodes", "2", "--print-commands", "--rdzv-endpoint", "hosta:29400"]
    assert _run(*argv, "--param", "replacement=true") == 0
    out = capsys.readouterr().out
    commands = [line for line in out.splitlines() if "torch.distributed.run" in line]
    assert len(commands) == 2
    assert all("--rdzv-endpoint hosta:29400" in line for line in commands)
    assert "is_host=true" in commands[0] and "is_host=false" in commands[1]
    assert "start node 1's command on a fresh host" in out
