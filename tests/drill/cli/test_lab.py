"""Catalogue metadata is torch-free; the CLI rejects bad input with one line and exit 2."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from drill.cli import lab as lab_cli
from tests.support.paths import REPO
from trainer_lab.catalogue import CATALOGUE, UnknownLabError, get_lab
from trainer_lab.catalogue_types import ParamError


def _cli(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="drill")
    lab_cli.register(parser.add_subparsers())
    return parser.parse_args(list(argv))


def test_catalogue_imports_without_torch() -> None:
    code = (
        "import sys, trainer_lab.catalogue, trainer_lab.api, drill.cli.lab; "
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


def test_list_prints_a_heading_per_group(capsys: pytest.CaptureFixture[str]) -> None:
    args = _cli("lab", "list")
    assert args.func(args) == 0
    listed: dict[str, list[str]] = {}
    group = ""
    for line in capsys.readouterr().out.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            group = line[:-1]
            listed[group] = []
        elif line.strip():
            listed[group].append(line.split()[0])
    expected: dict[str, list[str]] = {}
    for spec in CATALOGUE.values():
        expected.setdefault(spec.group, []).append(spec.name)
    assert listed == expected
    assert set(listed) == {"correctness", "failures", "performance"}


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
    from drill.cli.lab import print_summary
    from trainer_lab.result import ended_result

    print_summary(ended_result("resume", {}, 2, Path("d"), "cancelled", "lab cancelled", 3.2))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "resume: cancelled in 3.2 s (world size 2, backend -)"
    assert lines[1:] == ["  error: lab cancelled", "  run dir: d"]


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--timeout", "nan"], "--timeout must be a finite number of seconds above 0, got nan"),
        (["--timeout", "inf"], "--timeout must be a finite number of seconds above 0, got inf"),
        (["--timeout", "-1"], "--timeout must be a finite number of seconds above 0, got -1.0"),
        (["--timeout", "0"], "--timeout must be a finite number of seconds above 0, got 0.0"),
        (["--world-size", "0"], "world size 0 is out of range [2, "),
        (["--param", "tolerance=nan"], "param tolerance: nan is not a finite number"),
        (["--param", "tolerance=inf"], "param tolerance: inf is not a finite number"),
        (["--out", "/proc/drill-run"], "run directory /proc/drill-run cannot be used"),
        (["--out", "/dev/null"], "run directory /dev/null cannot be used"),
    ],
)
def test_bad_numbers_and_run_dirs_are_usage_errors(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from drill.cli.main import main

    assert main(["lab", "run", "ddp-baseline", *argv]) == 2
    captured = capsys.readouterr()
    assert fragment in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    assert captured.out == ""  # nothing started: not even the header line


@pytest.mark.parametrize("value", ["nan", "inf", "1e3", "2.5"])
def test_a_world_size_that_is_not_a_whole_number_is_a_usage_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from drill.cli.main import main

    with pytest.raises(SystemExit) as stopped:  # argparse's own usage error
        main(["lab", "run", "ddp-baseline", "--world-size", value])
    assert stopped.value.code == 2
    captured = capsys.readouterr()
    assert f"argument --world-size: invalid int value: '{value}'" in captured.err
    assert len(captured.err.strip().splitlines()) == 1 and captured.out == ""


def test_an_unusable_drill_home_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from drill.cli.main import main

    monkeypatch.setenv("DRILL_HOME", "/proc/drill-home")
    assert main(["lab", "run", "ddp-baseline"]) == 2
    err = capsys.readouterr().err
    assert "cannot be used" in err and len(err.strip().splitlines()) == 1


def _fake_run_lab(monkeypatch: pytest.MonkeyPatch, status: str, seen: list[str]) -> None:
    """run_lab replaced by one that sees the history row `running`, then ends with `status`."""
    import trainer_lab.api
    from drill.database import open_app_database
    from drill.labs.runs import LabRuns
    from trainer_lab.result import ended_result

    def run_lab(name: str, params: Any, world_size: Any, out_dir: Path, *_a: Any, **_k: Any):
        db = open_app_database()
        seen.extend(r.status for r in LabRuns(db).runs(lab=name))
        db.close()
        if status == "interrupt":
            raise KeyboardInterrupt
        return ended_result(name, params, world_size, out_dir, status, status, 2.5)  # type: ignore[arg-type]

    monkeypatch.setattr(trainer_lab.api, "run_lab", run_lab)


def _history_runs() -> list[Any]:
    from drill.database import open_app_database
    from drill.labs.runs import LabRuns

    db = open_app_database()
    try:
        return LabRuns(db).runs()
    finally:
        db.close()


@pytest.mark.parametrize(("status", "code"), [("ok", 0), ("cancelled", 3), ("timeout", 3)])
def test_cli_runs_are_recorded_in_the_lab_history(
    status: str, code: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from drill.cli.main import main

    seen: list[str] = []
    _fake_run_lab(monkeypatch, status, seen)
    out = tmp_path / "run"
    assert main(["lab", "run", "ddp-baseline", "--param", "steps=3", "--out", str(out)]) == code
    assert seen == ["running"]  # the row exists while the lab runs
    [record] = _history_runs()
    assert (record.lab, record.status, record.run_dir) == ("ddp-baseline", status, out)
    assert record.params["steps"] == 3 and record.duration_s == 2.5 and record.card_id is None


def test_an_interrupted_cli_run_is_closed_as_cancelled(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from drill.cli.main import main

    _fake_run_lab(monkeypatch, "interrupt", [])
    assert main(["lab", "run", "ddp-baseline", "--out", str(tmp_path / "run")]) != 0
    assert [r.status for r in _history_runs()] == ["cancelled"]


def test_an_unusable_database_does_not_fail_the_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from drill.cli.main import main
    from drill.paths import database_path

    seen: list[str] = []
    database_path().parent.mkdir(parents=True, exist_ok=True)
    database_path().write_bytes(b"this is not a database" * 100)
    import trainer_lab.api
    from trainer_lab.result import ended_result

    monkeypatch.setattr(
        trainer_lab.api,
        "run_lab",
        lambda name, params, ws, out, *a, **k: (
            seen.append(name) or ended_result(name, params, ws, out, "ok", "", 1.0)
        ),
    )
    assert main(["lab", "run", "ddp-baseline", "--out", str(tmp_path / "run")]) == 0
    assert seen == ["ddp-baseline"]
    err = capsys.readouterr().err
    notices = [line for line in err.splitlines() if "lab history" in line]
    assert len(notices) == 1 and notices[0].startswith(
        "drill lab: notice: this run is not recorded"
    )
    assert "Traceback" not in err
