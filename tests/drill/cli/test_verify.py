"""`drill verify` on the command line: which cards it checks (--card, repeatable) and its
progress display. Lab results come from the run log's cache, so no lab runs here."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from drill.cli.main import main
from drill.cli.verify import _Display, _make_progress
from drill.database import open_app_database
from drill.labs.verify import LabJob, ResultCache, code_version
from trainer_lab.result import new_result

CARD = "  - id: {id}\n    level: easy\n    front: q\n    back: a\n    lab: {lab}\n"
DDP = "{run: ddp-baseline, expect: ['max_loss_diff <= 1e-5']}"


@pytest.fixture
def decks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Three cards on one (cached) lab run, and a card without a lab."""
    folder = tmp_path / "decks"
    folder.mkdir()
    cards = "".join(CARD.format(id=card_id, lab=DDP) for card_id in ("c1", "c2", "c3"))
    cards += "  - id: plain\n    level: easy\n    front: q\n    back: a\n"
    (folder / "d.yaml").write_text(f"deck: d\ntitle: D\ncards:\n{cards}")
    result = new_result("ddp-baseline", {}, 2, tmp_path)
    result["status"], result["observations"] = "ok", {"max_loss_diff": 0.0}
    ResultCache(open_app_database(), code_version()).put(
        LabJob("ddp-baseline", (), None), result, tmp_path
    )
    monkeypatch.setenv("COLUMNS", "300")
    return folder


def test_every_card_named_with_repeated_card_is_checked(decks: Path, capsys: Any) -> None:
    code = main(["--decks", str(decks), "verify", "--card", "c1", "--card", "c3"])
    out = capsys.readouterr().out
    assert code == 0
    rows = [line for line in out.splitlines() if "max_loss_diff" in line]
    assert [row.split()[1] for row in rows] == ["c1", "c3"]
    assert "2 claim(s) on 2 card(s)" in out


def test_unknown_card_ids_are_a_usage_error_naming_each(decks: Path, capsys: Any) -> None:
    code = main(["--decks", str(decks), "verify", "--card", "c1", "--card", "nope", "--card", "zz"])
    captured = capsys.readouterr()
    assert code == 2
    assert "unknown card(s): 'nope', 'zz'" in captured.err
    assert "max_loss_diff" not in captured.out  # nothing was verified


def test_a_named_card_without_a_lab_is_said_not_verified(decks: Path, capsys: Any) -> None:
    code = main(["--decks", str(decks), "verify", "--card", "plain", "--card", "c2"])
    out = capsys.readouterr().out
    assert code == 0
    assert "not verified (no lab block): plain" in out
    assert "1 claim(s) on 1 card(s)" in out


def _rendered(progress: Any) -> str:
    sink = io.StringIO()
    Console(file=sink, width=120, color_system=None).print(progress.get_renderable())
    return sink.getvalue()


def test_progress_shows_done_of_total_never_none() -> None:
    progress = _make_progress(Console(file=io.StringIO()))
    display = _Display(progress, total=2)
    job = LabJob("ddp-baseline", (), None)
    display.start(job, 5.0)
    before = _rendered(progress)
    assert "None" not in before
    assert "0/2" in before  # the overall count; the lab's own line has no total yet

    display.event(job, {"done": 3, "total": 10, "message": "step 3"})
    after = _rendered(progress)
    assert "3/10" in after
    assert "None" not in after
