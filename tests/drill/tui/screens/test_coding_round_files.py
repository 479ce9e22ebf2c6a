"""The coding round's train.py through drill.watched_file, the exercise screen's mechanism
(issue 32, items 2 and 7): a train.py that is not UTF-8 opens decoded with a notice (it read as
empty before), keeps its bytes through autosaves until edited, and is then written as UTF-8."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import TextArea

from drill.mock.coding.session import CodingSession
from drill.tui.screens.coding_round import CodingApp
from tests.support.pilot import Notices, run_async, until
from tests.support.services import app_slot

LATIN_1 = "# café\nprint('naïve')\n".encode("latin-1")


@run_async
async def test_a_latin_1_train_py_opens_with_a_notice_and_keeps_its_bytes_until_edited(
    tmp_path: Path,
) -> None:
    session = CodingSession.create(tmp_path / "rounds")
    session.script.write_bytes(LATIN_1)
    notices = Notices()
    app = CodingApp(session, app_slot())
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        editor = app.screen.query_one("#editor", TextArea)
        assert editor.text == "# café\nprint('naïve')\n"
        await until(pilot, lambda: any("not UTF-8" in m for m in notices.messages("warning")))
        app.screen.autosave()  # type: ignore[attr-defined]
        assert session.script.read_bytes() == LATIN_1
        editor.insert("# edited\n")
        app.screen.autosave()  # type: ignore[attr-defined]
    assert session.script.read_text(encoding="utf-8") == "# edited\n# café\nprint('naïve')\n"
