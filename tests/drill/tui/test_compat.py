"""drill.tui.compat: an error escaping a handler ends the app without a traceback on the
terminal, keeps the error for the CLI's one-line message, and DRILL_DEBUG=1 brings Textual's
traceback back (which shows that the hiding is ours, not an accident of headless runs)."""

from __future__ import annotations

import pytest

from drill.tui.compat import QuietCrashes


class Broken(QuietCrashes[None]):
    def on_mount(self) -> None:
        raise RuntimeError("boom in a handler")


def run_broken(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str], debug: bool):
    if debug:
        monkeypatch.setenv("DRILL_DEBUG", "1")
    else:
        monkeypatch.delenv("DRILL_DEBUG", raising=False)
    app = Broken()
    app.run(headless=True)
    captured = capfd.readouterr()
    return app, captured.out + captured.err


def test_a_crash_is_kept_and_no_traceback_is_printed(monkeypatch, capfd) -> None:
    app, printed = run_broken(monkeypatch, capfd, debug=False)
    assert isinstance(app.crash, RuntimeError) and str(app.crash) == "boom in a handler"
    assert app.return_code == 1
    assert "Traceback" not in printed and "boom in a handler" not in printed


def test_drill_debug_keeps_textuals_traceback(monkeypatch, capfd) -> None:
    app, printed = run_broken(monkeypatch, capfd, debug=True)
    assert isinstance(app.crash, RuntimeError)
    assert "Traceback" in printed and "boom in a handler" in printed
