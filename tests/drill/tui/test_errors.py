"""Errors reach the user as one line from the CLI, never as a Textual traceback."""

from __future__ import annotations

import pytest

from drill.cli.main import main
from drill.errors import SettingsError
from drill.tui.app import AppOptions, run_app
from drill.tui.screens.home import HomeScreen


def test_bad_settings_fail_before_the_app_starts(home, capsys) -> None:
    home.mkdir(parents=True)
    (home / "settings.toml").write_text("desired_retention = 5\n")
    with pytest.raises(SettingsError, match="desired_retention must be between"):
        run_app(AppOptions(include_bundled=False, headless=True))
    assert main(["--decks", str(home)]) == 2  # the CLI prints it as one line
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "desired_retention" in err


def test_missing_deck_dir_is_one_line(home, capsys) -> None:
    assert main(["--decks", str(home / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err == f"drill: error: deck directory not found: {home / 'nowhere'}\n"


def test_unexpected_error_in_a_handler_is_raised_without_traceback(
    home, deck_dir, monkeypatch, capfd
) -> None:
    def broken(self, data) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(HomeScreen, "show", broken)
    monkeypatch.delenv("DRILL_DEBUG", raising=False)
    with pytest.raises(RuntimeError, match="boom"):
        run_app(AppOptions(deck_dirs=[deck_dir], include_bundled=False, headless=True))
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err + captured.out
