"""Child process for tests/drill/tui/screens/test_user_file_kinds.py: opens the exercise screen
or the coding round screen on a user file planted as a hostile kind (tests.support.
hostile_files), presses the keys that save, check and leave, and prints what happened as JSON.

A child, because the regression blocks (a FIFO read) or reads without end (/dev/zero): the
parent bounds it in time, and its address space is capped here so a runaway read fails fast.

    python -m tests.support.user_file_child exercise|coding KIND HOME
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys
from pathlib import Path

ADDRESS_SPACE_BYTES = 4 * 1024**3


async def run(screen_kind: str, kind: str, home: Path) -> dict:
    from tests.support.hostile_files import plant
    from tests.support.pilot import HostApp, Notices, until

    notices = Notices()
    if screen_kind == "exercise":
        from drill.exercises.service import ExerciseService
        from drill.tui.screens.exercise import ExerciseScreen
        from storage.db import open_database

        service = ExerciseService(open_database(home / "db.sqlite3"), home / "exercises")
        path = service.user_file("first-nan")
        plant(path, kind)
        app = HostApp(ExerciseScreen(service, "first-nan"))
        keys, selector = ("ctrl+s", "ctrl+r", "ctrl+e", "f4", "escape"), "#ex-editor"
    else:
        from drill.mock.coding.session import CodingSession
        from drill.tui.screens.coding_round import CodingApp
        from tests.support.services import app_slot

        session = CodingSession.create(home / "rounds")
        path = session.script
        plant(path, kind)
        app = CodingApp(session, app_slot())  # type: ignore[assignment]
        keys, selector = ("ctrl+s", "ctrl+l", "escape"), "#editor"
    async with app.run_test(size=(120, 40), message_hook=notices) as pilot:
        await until(pilot, lambda: bool(app.screen.query(selector)))
        editor = app.screen.query_one(selector)
        read_only, text = editor.read_only, editor.text  # type: ignore[attr-defined]
        await pilot.press(*keys)
        await pilot.pause()
    return {
        "read_only": read_only,
        "text": text,
        "notices": notices.shown,
        "still_planted": not path.is_file() or path.stat().st_size > 4 * 1024**2,
    }


def main() -> None:
    os.environ.setdefault("VISUAL", "true")
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))
    screen_kind, kind, home = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    print(json.dumps(asyncio.run(run(screen_kind, kind, home))))


if __name__ == "__main__":
    main()
