"""The coding round's gradings as the screen shows them: the verdict text of a grading
(drill.mock.coding.conductor does the grading), its record in the run log, and the feedback to
review once the round is over. These run in the screen's grading worker."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.content import Content

from drill.mock.checklist import ChecklistOutcome, RatingChecklist
from drill.mock.coding.conductor import RoundGrading
from drill.mock.coding.session import CodingSession
from drill.tui.plain import joined, lines
from drill.tui.rated import announce_rated
from drill.tui.screens.coding_text import verdict_lines

if TYPE_CHECKING:
    from drill.services import ServicesSlot


def graded_text(graded: RoundGrading, feed_back: Callable[[], list[Content]] | None) -> Content:
    """A grading's verdicts, its notices, then (`feed_back`, when given) the feedback rows; a
    failed grading in one line."""
    rows: list = []
    if graded.notebook_problem:  # the last train.py read was graded
        rows.append(joined(("notebook not read:", "yellow"), f" {graded.notebook_problem}"))
    if graded.error is not None or graded.result is None:
        return joined(("grading failed:", "red"), f" {graded.error}")
    if graded.reused:
        rows.append(
            joined((f"train.py is unchanged since grading {graded.number}: its verdicts "
                    "stand (not run again).", "dim"))
        )  # fmt: skip
    rows += verdict_lines(dict(graded.result))
    rows += [joined((notice, "yellow")) for notice in graded.notices]
    if feed_back is not None:
        rows += feed_back()
    return lines(rows)


def record_in_run_log(slot: ServicesSlot, result: Mapping[str, Any], out_dir: Path) -> list[str]:
    """Record the grading in the run log; its notices (when that failed)."""
    services = slot.ready
    if services is None:
        return ["not recorded in the run log: the database did not load"]
    notices: list[str] = []
    services.record_grading(result, out_dir, notices.append)
    return notices


def feed_back_rows(slot: ServicesSlot, app: App[Any], session: CodingSession) -> list[Content]:
    """Once the round is over, open the checklist the person confirms before any card is rated
    (drill.tui.screens.rating_checklist); nothing is rated here. Runs in a worker: the screen
    is pushed through the app's thread, and what confirming did is told there."""
    from drill.mock.errors import MockError

    services = slot.ready
    not_fed = ("not fed back to review:", "yellow")
    if services is None:
        return [joined(not_fed, " the database did not load")]
    changed: list[str] = []
    try:
        checklist = services.coding_checklist(session, changed)
    except (MockError, OSError) as error:
        return [joined(not_fed, f" {error}")]
    keys = "F8: the report per phase; F4: your code beside the model answer."
    if checklist is None:
        return [joined(keys)]
    app.call_from_thread(_open_checklist, app, session, checklist, changed)
    asked = ("Review cards: confirm the checklist; nothing is rated before you do.", "bold")
    return [joined(asked), joined(keys)]


def _open_checklist(
    app: App[Any], session: CodingSession, checklist: RatingChecklist, changed: list[str]
) -> None:
    from drill.mock.coding.confirm import settle
    from drill.tui.screens.rating_checklist import RatingChecklistScreen

    def decided(outcome: ChecklistOutcome | None) -> None:
        if outcome is None:
            return
        try:
            said = settle(session, outcome)
        except OSError as error:
            app.notify(f"not kept in the round's report: {error}", severity="error")
            said = outcome.lines()
        announce_rated(app, changed)  # home and the browser read them again
        app.notify("\n".join(said), title="Fed back to review", timeout=12)

    title = f"Round {session.round_id}: review cards"
    app.push_screen(RatingChecklistScreen(checklist, title), decided)
