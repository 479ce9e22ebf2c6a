"""`drill optimize`: too few reviews (exit 1), the before/after log loss, adopting with --yes or
an answer at a terminal, never adopting silently from a pipe, bad settings (exit 2), --help."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from drill.cli import optimize
from drill.paths import database_path, settings_path
from drill.settings import load_settings
from tests.support.subcommand import drill_main
from tests.support.synthetic_reviews import synthetic_reviews, write_review_log

Main = Callable[[Sequence[str]], int]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def main(monkeypatch: pytest.MonkeyPatch) -> Main:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # a pipe, not a terminal
    return drill_main(monkeypatch, optimize)


@pytest.fixture
def enough(drill_home: Path) -> Path:
    return write_review_log(database_path(), synthetic_reviews(1200))


def test_too_few_reviews_exit_1_with_the_numbers(
    main: Main, capsys: pytest.CaptureFixture[str]
) -> None:
    write_review_log(database_path(), synthetic_reviews(50))
    assert main(["optimize", "--yes"]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("drill: not enough reviews") and "need 400" in err
    assert not settings_path().exists()


def test_an_empty_log_is_too_few_reviews(main: Main, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimize"]) == 1
    assert "0 usable of 0 logged" in capsys.readouterr().err


def test_yes_adopts_and_shows_the_log_loss_before_and_after(
    main: Main, enough: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["optimize", "--yes"]) == 0
    out = capsys.readouterr()
    assert "log loss with the default parameters: 0." in out.out
    assert "log loss with the fitted parameters: 0." in out.out
    assert "adopted: fsrs_parameters written to" in out.out
    assert "fitting" in out.err  # progress from the subprocess
    fitted = load_settings().fsrs_parameters
    assert fitted is not None and len(fitted) == 21
    assert main(["optimize", "--yes"]) == 0  # a second run compares with the adopted ones
    assert "log loss with your current parameters" in capsys.readouterr().out


def test_a_pipe_without_yes_does_not_adopt_and_says_how(
    main: Main, enough: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["optimize"]) == 0
    out = capsys.readouterr().out
    assert "not adopted: stdin is not a terminal (run `drill optimize --yes` to adopt)" in out
    assert not settings_path().exists()


@pytest.mark.parametrize(("answer", "adopted"), [("y\n", True), ("n\n", False), ("", False)])
def test_at_a_terminal_it_asks(
    main: Main,
    enough: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    answer: str,
    adopted: bool,
) -> None:
    monkeypatch.setattr("sys.stdin", _Terminal(answer))
    assert main(["optimize"]) == 0
    assert "adopt the fitted parameters? [y/N]" in capsys.readouterr().out
    assert (load_settings().fsrs_parameters is not None) is adopted


def test_a_bad_settings_file_is_exit_2_in_one_line(
    main: Main, enough: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings_path().write_text("fsrs_parameters = [1.0, 2.0]\n", encoding="utf-8")
    assert main(["optimize", "--yes"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fsrs_parameters must have 21 numbers" in err


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_a_bad_timeout_is_a_usage_error(
    main: Main, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    assert main(["optimize", "--timeout", value]) == 2
    assert "--timeout must be a positive number" in capsys.readouterr().err


def test_help_explains_threshold_loss_and_exit_codes(
    main: Main, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["optimize", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    for needle in (
        "at least 400 usable reviews",
        "log loss",
        "--yes",
        "exit status",
        "settings.toml",
    ):
        assert needle in text
