"""Child process for test_first_paint: run the real app headless straight into review and print,
when the first card is painted, which heavy modules were imported by then."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from drill.tui.app import AppOptions, DrillApp

HEAVY = ("torch", "sqlmodel", "sqlalchemy", "textual_plotext", "pydantic", "yaml", "fsrs",
         # what the services load after the paint (issue 40: keep it there)
         "numpy", "plotext", "storage.db", "storage.stats_queries", "drill.decks.loader",
         "drill.review.stats", "drill.review.session", "drill.review.scheduler",
         "drill.plan.simulate", "drill.plan.readiness", "drill.plan.learner")  # fmt: skip


def main() -> None:
    options = AppOptions(deck_dirs=[Path(sys.argv[1])], include_bundled=False, start_review="all")

    def painted(card_id: str) -> None:
        loaded = [name for name in HEAVY if name in sys.modules]
        print(json.dumps({"card": card_id, "loaded": loaded}), flush=True)
        app.exit()

    app = DrillApp(options, on_card_painted=painted)
    app.run(headless=True)


if __name__ == "__main__":
    main()
