"""Card browser, driven with Pilot: type a query, rows filter, act on a row, the DB changes."""

from __future__ import annotations

import contextlib
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from drill.decks.loader import load_decks
from drill.tui.screens.browser import BrowserScreen
from drill.tui.screens.browser_dialogs import ConfirmScreen, HistoryScreen
from storage.db import open_database
from tests.support.browser_host import NOW, host
from tests.support.pilot import HostApp, Notices, run_async, text_of, until
from tests.support.review_logs import LogBuilder, write_browse_decks


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    decks = load_decks([write_browse_decks(tmp_path / "decks")], include_bundled=False)
    log = LogBuilder(tmp_path / "db.sqlite3")
    log.card("fsdp-shard", "infra", due=NOW - timedelta(days=1), interval_days=30, lapses=9,
             leech=True)  # fmt: skip
    log.card("ddp-bucket", "infra", due=NOW + timedelta(days=2), interval_days=3)
    log.review("fsdp-shard", "infra", NOW - timedelta(days=31), 3, 10.0)
    log.review("fsdp-shard", "infra", NOW - timedelta(days=1), 1, 30.0)
    db = open_database(log.write())
    yield decks, db
    db.close()


def shown(app: HostApp) -> list[str]:
    return [row.card_id for row in app.screen.shown]  # type: ignore[attr-defined]


def table_keys(app: HostApp) -> list[str]:
    table = app.screen.query_one("#browse-table", DataTable)
    return [str(key.value) for key in table.rows]


@run_async
async def test_typing_filters_rows_and_bad_terms_hint(setup: Any) -> None:
    app = host(*setup)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: len(shown(app)) == 5)
        assert "5 of 5 cards" in text_of(pilot, "#browse-count")
        await pilot.press(*"tag:fsdp")
        await until(pilot, lambda: shown(app) == ["fsdp-shard", "resume-state"])
        assert table_keys(app) == ["fsdp-shard", "resume-state"]
        assert "2 of 5 cards" in text_of(pilot, "#browse-count")
        # typing letters that are bindings on the results goes into the search box
        await pilot.press("space", *"is:leech")
        await until(pilot, lambda: shown(app) == ["fsdp-shard"])
        await pilot.press("space", *"is:bogus")
        await until(pilot, lambda: "is:bogus?" in text_of(pilot, "#browse-hint"))
        assert shown(app) == ["fsdp-shard"]  # the rest of the query still applies


@run_async
async def test_suspend_bury_and_reset_from_a_row(setup: Any) -> None:
    decks, db = setup
    app = host(decks, db, query="fsdp-shard")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: shown(app) == ["fsdp-shard"])
        await pilot.press("enter")  # to the results
        await pilot.press("s")
        await until(
            pilot, lambda: (db.review.card_state("fsdp-shard") or {}).get("suspended") is True
        )
        await until(pilot, lambda: "suspended" in app.screen.current().flags(NOW))  # type: ignore[attr-defined]
        await pilot.press("s")
        await until(pilot, lambda: db.review.card_state("fsdp-shard")["suspended"] is False)  # type: ignore[index]
        await pilot.press("b")
        await until(pilot, lambda: db.review.card_state("fsdp-shard")["buried_until"] is not None)  # type: ignore[index]
        assert db.review.card_state("fsdp-shard")["buried_until"] > NOW  # type: ignore[index]
        await pilot.press("b")
        await until(pilot, lambda: db.review.card_state("fsdp-shard")["buried_until"] is None)  # type: ignore[index]
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")  # declined: nothing changes
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen))
        assert db.review.card_state("fsdp-shard")["state"] == 2  # type: ignore[index]
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: db.review.card_state("fsdp-shard")["state"] is None)  # type: ignore[index]
        await until(pilot, lambda: app.screen.current().state == "new")  # type: ignore[attr-defined]
        assert len(db.review.reviews("fsdp-shard")) == 2


@run_async
async def test_history_shows_the_review_log(setup: Any) -> None:
    app = host(*setup, query="fsdp-shard")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: shown(app) == ["fsdp-shard"])
        await pilot.press("down", "h")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        text = text_of(pilot, "#history-text")
        assert text.count("\n") == 1 and "Again" in text.splitlines()[0]
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen))


@run_async
async def test_edit_opens_the_editor_at_the_card_line(
    setup: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VISUAL", "vim")
    calls: list[list[str]] = []
    app = host(*setup, query="ddp-bucket", run_editor=calls.append)
    async with app.run_test(size=(120, 40)) as pilot:
        monkeypatch.setattr(app, "suspend", contextlib.nullcontext)  # headless cannot suspend
        await until(pilot, lambda: shown(app) == ["ddp-bucket"])
        await pilot.press("enter", "o")
        await until(pilot, lambda: bool(calls))
        editor, line, end, path = calls[0]
        assert editor == "vim" and path.endswith("infra.yaml") and Path(path).is_absolute()
        assert end == "--"  # after +LINE: vim reads nothing past it as an option
        assert Path(path).read_text().splitlines()[int(line[1:]) - 1].strip() == "- id: ddp-bucket"


@run_async
async def test_edit_without_suspend_support_says_where_the_card_is(setup: Any) -> None:
    notices = Notices()
    app = host(*setup, query="ddp-bucket", run_editor=lambda _cmd: 0)
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        await until(pilot, lambda: shown(app) == ["ddp-bucket"])
        await pilot.press("enter", "o")
        await until(pilot, lambda: any("infra.yaml:" in m for m in notices.messages()))


@run_async
async def test_lab_key_opens_the_lab_panel_or_says_there_is_none(setup: Any) -> None:
    from drill.tui.screens.lab_panel import LabPanelScreen

    notices = Notices()
    app = host(*setup, query="tag:fsdp")
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        await until(pilot, lambda: shown(app) == ["fsdp-shard", "resume-state"])
        await pilot.press("enter", "l")  # fsdp-shard: no lab
        await until(pilot, lambda: "This card has no lab." in notices.messages())
        await pilot.press("down", "l")
        await until(pilot, lambda: isinstance(app.screen, LabPanelScreen))
        assert app.screen.card.id == "resume-state"  # type: ignore[attr-defined]


@run_async
async def test_b_on_home_opens_the_browser_over_the_app_decks(make_app, query) -> None:  # type: ignore[no-untyped-def]
    from drill.tui.screens.home import HomeScreen

    app = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("B")
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen))
        await until(pilot, lambda: len(shown(app)) == 5)  # the conftest decks: a1-a3, b1-b2
        await pilot.press(*"level:easy")
        await until(pilot, lambda: shown(app) == ["a1", "b1", "b2"])
        await pilot.press("enter", "s")
        await until(pilot, lambda: "suspended" in app.screen.current().flags(NOW))  # type: ignore[attr-defined]
        assert query("SELECT card_id, suspended FROM card_state") == [("a1", 1)]
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))


# --- $EDITOR: "Edited" only when the file changed (issue 26) ----------------------------------
# Real editors, run as processes: one quits at once, one appends a comment to the file.
QUIT = "true"
APPEND = f"{shlex.quote(sys.executable)} -c \"import sys; open(sys.argv[-1], 'a').write('# x\\n')\""


async def edit_with(setup: Any, editor: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("VISUAL", editor)
    notices = Notices()
    app = host(*setup, query="ddp-bucket")
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        monkeypatch.setattr(app, "suspend", contextlib.nullcontext)  # headless cannot suspend
        await until(pilot, lambda: shown(app) == ["ddp-bucket"])
        await pilot.press("enter", "o")
        await until(pilot, lambda: any("infra.yaml" in m for m in notices.messages()))
        return notices.messages()


@run_async
async def test_quitting_the_editor_without_a_change_does_not_say_edited(
    setup: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    deck = next(r.path for r in setup[0].decks if r.path.name == "infra.yaml")
    before = Path(deck).read_bytes()
    messages = await edit_with(setup, QUIT, monkeypatch)
    assert Path(deck).read_bytes() == before
    assert any("infra.yaml unchanged" in m for m in messages), messages
    assert not any("Edited" in m for m in messages), messages


@run_async
async def test_a_changed_file_says_edited(setup: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    messages = await edit_with(setup, APPEND, monkeypatch)
    assert any(m.startswith("Edited infra.yaml") for m in messages), messages


# --- a deck's file name is data (issue 32, item 1) ---------------------------------------------
@pytest.mark.skipif(shutil.which("vim") is None, reason="vim is not installed")
@run_async
async def test_a_deck_named_like_a_vim_command_runs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_browse_decks(tmp_path / "decks")
    (folder / "infra.yaml").rename(folder / "+!touch X.yaml")
    monkeypatch.chdir(folder)
    decks = load_decks([Path(".")], include_bundled=False)  # drill --decks .
    monkeypatch.setenv("VISUAL", "vim -u NONE -i NONE -N -es")  # ex mode: reads stdin, quits
    opened: list[list[str]] = []

    def run_editor(command: list[str]) -> int:
        opened.append(command)
        return subprocess.call(command, stdin=subprocess.DEVNULL, timeout=60)

    db = open_database(tmp_path / "db.sqlite3")
    app = host(decks, db, query="ddp-bucket", run_editor=run_editor)
    async with app.run_test(size=(120, 40)) as pilot:
        monkeypatch.setattr(app, "suspend", contextlib.nullcontext)  # headless cannot suspend
        await until(pilot, lambda: shown(app) == ["ddp-bucket"])
        await pilot.press("enter", "o")
        await until(pilot, lambda: bool(opened))
    db.close()
    assert opened[0][-2:] == ["--", str(folder / "+!touch X.yaml")]
    assert not (folder / "X.yaml").exists()
