"""Catalogue metadata is torch-free; the CLI rejects bad input with one line and exit 2."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from drill import lab_cli
from trainer_lab.catalogue import CATALOGUE, UnknownLabError, get_lab
from trainer_lab.catalogue_types import ParamError

REPO = Path(__file__).resolve().parents[2]


def _cli(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="drill")
    lab_cli.register(parser.add_subparsers())
    return parser.parse_args(list(argv))


def test_catalogue_imports_without_torch() -> None:
    code = (
        "import sys, trainer_lab.catalogue, trainer_lab.runner, drill.lab_cli; "
        "print(sorted(trainer_lab.catalogue.CATALOGUE)); "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.splitlines()
    assert "ddp-baseline" in out[0]
    assert out[1] == "False"


def test_every_lab_declares_params_observations_checks_and_a_driver() -> None:
    for spec in CATALOGUE.values():
        assert spec.observations and spec.checks, spec.name
        module, _, func = spec.driver.partition(":")
        assert func == "drive" and module.startswith("trainer_lab.labs."), spec.driver


def test_unknown_lab_lists_valid_names() -> None:
    with pytest.raises(UnknownLabError, match="ddp-baseline"):
        get_lab("no-such-lab")


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["lab", "run", "no-such-lab"], "unknown lab 'no-such-lab' (valid: "),
        (["lab", "run", "ddp-baseline", "--param", "steps=many"], "not a valid int"),
        (["lab", "run", "ddp-baseline", "--param", "bogus=1"], "has no param 'bogus'"),
        (["lab", "run", "ddp-baseline", "--param", "grad_sync=ring"], "one of ddp, explicit"),
        (["lab", "run", "ddp-baseline", "--param", "steps"], "expects K=V"),
        (["lab", "run", "ddp-baseline", "--world-size", "1"], "out of range"),
        (["lab", "show", "nope"], "unknown lab 'nope'"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _cli(*argv)
    assert args.func(args) == 2
    err = capsys.readouterr().err
    assert fragment in err
    assert len(err.strip().splitlines()) == 1


def test_list_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    args = _cli("lab", "list", "--json")
    assert args.func(args) == 0
    names = [row["name"] for row in json.loads(capsys.readouterr().out)]
    assert names == list(CATALOGUE)
    args = _cli("lab", "show", "ddp-baseline")
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "params:" in out and "tolerance=" in out and "checks:" in out


def test_param_parsing_is_typed() -> None:
    spec = get_lab("ddp-baseline")
    assert lab_cli.parse_params(spec, ["steps=3", "tolerance=1e-3"]) == {
        "steps": 3,
        "tolerance": 1e-3,
    }
    with pytest.raises(ParamError):
        lab_cli.parse_params(spec, ["steps=0"])


def test_every_lab_module_loads() -> None:
    from trainer_lab.catalogue import CATALOGUE_ERRORS

    assert CATALOGUE_ERRORS == {}


def test_a_cancelled_run_summary_names_the_lab(capsys: pytest.CaptureFixture[str]) -> None:
    from drill.lab_cli import print_summary

    print_summary(
        {"lab": "resume", "world_size": 2, "status": "cancelled", "duration_s": 3.2, "out_dir": "d"}
    )
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "resume: cancelled in 3.2 s (world size 2, backend -)"
