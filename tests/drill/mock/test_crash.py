"""Crash test: a round's process is SIGKILLed after an autosave; the answer is in the database and
the round resumes (answers, phase and time used), first in the domain, then in the TUI."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys

from drill.mock.clock import Status
from drill.mock.round import MockRun
from drill.tui.screens.mock_round import AnswerArea, MockApp, MockRoundScreen
from tests.support.mock_crash_child import ANSWER
from tests.support.mock_rounds import open_store
from tests.support.paths import REPO


def test_sigkill_mid_round_keeps_autosaved_answers_and_the_round_resumes(drill_home):
    env = {**os.environ, "DRILL_HOME": str(drill_home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.mock_crash_child"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, "the child never reported an autosave"
        line = proc.stdout.readline().strip()
        assert line.startswith("AUTOSAVED "), (line, proc.stderr.read() if proc.poll() else "")
        round_id = int(line.split()[1])
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()

    store = open_store(drill_home / "drill.sqlite3")
    try:
        saved = store.load(round_id)
        assert saved.status == "running"
        assert saved.prompts[0].answer == ANSWER
        assert saved.prompts[0].answer_saved_at is not None
        assert saved.clock_state.used_s[0] > 0
        assert store.latest_unfinished() == round_id

        run = MockRun.resume(store, round_id)
        assert run.clock.status is Status.PAUSED
        assert run.clock.phase == 0
        asyncio.run(_resume_in_the_tui(run))
    finally:
        store.db.close()


async def _resume_in_the_tui(run: MockRun) -> None:
    app = MockApp(run, tick_s=3600, autosave_s=3600)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, MockRoundScreen)
        (area,) = app.screen.query(AnswerArea)
        assert area.text == ANSWER
        assert area.read_only  # resumed paused: F2 continues
        await pilot.press("f2")
        assert run.clock.status is Status.RUNNING
        assert not area.read_only
