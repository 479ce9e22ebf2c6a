"""Child process of test_crash.py: plays a round in the real (headless) app, types an answer, waits
for the timed autosave to land, says so on stdout, then blocks until it is SIGKILLed."""

from __future__ import annotations

import asyncio
import random
import sys

from drill.mock.round import MockRun
from drill.mock.store import MockStore
from drill.paths import database_path
from drill.tui.screens.mock_round import MockApp
from storage.db import open_database
from tests.support.mock_rounds import CARDS, tiny_round

ANSWER = "optimizer state and the sampler position"


async def main() -> None:
    store = MockStore(open_database(database_path()))
    run = MockRun.start_new(store, tiny_round(), CARDS, rng=random.Random(0))
    typing_done = False
    saved = asyncio.Event()

    def on_autosave(_wrote: bool) -> None:
        # The first timed autosave after the typing finished has written all of it.
        if typing_done and not run.dirty:
            saved.set()

    app = MockApp(run, autosave_s=0.2, on_autosave=on_autosave)
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press(*["space" if ch == " " else ch for ch in ANSWER])
        typing_done = True
        await saved.wait()
        print(f"AUTOSAVED {run.round_id}", flush=True)
        await asyncio.Event().wait()  # until SIGKILL


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(1)  # never reached: the parent kills us
