"""A round being played: the clock, the typed answers, autosave, and grading at the end.

The TUI screen is a thin view over MockRun: it forwards key presses and text changes, calls tick()
a few times a second and autosave() every few seconds; MockRun also autosaves on every phase
change, pause and finish, so an interrupted round loses at most the last few seconds of typing.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from drill.mock.checklist import CardOutcome, RateCard
from drill.mock.clock import ClockState, Event, PhaseAdvanced, RoundClock, RoundFinished, Status
from drill.mock.coverage import BulletCoverage, cover
from drill.mock.errors import MockError
from drill.mock.models import RoundDef
from drill.mock.report import RoundReport, round_title
from drill.mock.rubric_bands import GradedPrompt, PhaseInfo, build_report
from drill.mock.selection import CardEntry, plan_round
from drill.mock.store import DONE, GRADING, RUNNING, GradeRow, MockStore, SavedPrompt, SavedRound

AUTOSAVE_EVERY_S = 3.0


def scaled_budgets(definition: RoundDef, minutes: float | None = None) -> list[float]:
    """Phase budgets in seconds; `minutes` scales every phase so the round lasts that long."""
    scale = 1.0 if minutes is None else minutes / definition.total_minutes
    return [phase.minutes * 60.0 * scale for phase in definition.phases]


class MockRun:
    def __init__(
        self, store: MockStore, saved: SavedRound, now: Callable[[], float] = time.monotonic
    ) -> None:
        self.store = store
        self.round_id = saved.id
        self.saved = saved
        self.definition = saved.definition
        self.clock = RoundClock(
            saved.budgets_s,
            auto_advance=saved.definition.auto_advance,
            now=now,
            state=saved.clock_state,
        )
        self.answers: dict[int, str] = {p.id: p.answer for p in saved.prompts}
        self._dirty: set[int] = set()
        if saved.status != RUNNING and self.clock.status is not Status.FINISHED:
            self.clock.finish(saved.clock_state.finish_reason or "ended")

    # --- creating / resuming -------------------------------------------------------------------
    @classmethod
    def start_new(
        cls,
        store: MockStore,
        definition: RoundDef,
        cards: list[CardEntry],
        *,
        mastery: dict[str, float] | None = None,
        minutes: float | None = None,
        rng: random.Random | None = None,
        now: Callable[[], float] = time.monotonic,
    ) -> MockRun:
        if minutes is not None and minutes <= 0:
            raise MockError("--minutes must be a positive number")
        budgets = scaled_budgets(definition, minutes)
        planned = plan_round(
            definition, cards, mastery, store.previous_cards(definition.round), rng
        )
        state = ClockState(used_s=[0.0] * len(budgets))
        round_id = store.create_round(definition, budgets, planned, state)
        return cls(store, store.load(round_id), now)

    @classmethod
    def resume(
        cls, store: MockStore, round_id: int, now: Callable[[], float] = time.monotonic
    ) -> MockRun:
        saved = store.load(round_id)
        if saved.status == DONE:
            raise MockError(
                f"mock round {round_id} is finished; see `drill mock report {round_id}`"
            )
        return cls(store, saved, now)

    # --- reading -------------------------------------------------------------------------------
    @property
    def prompts(self) -> list[SavedPrompt]:
        return self.saved.prompts

    def phase_prompts(self, phase_index: int | None = None) -> list[SavedPrompt]:
        index = self.clock.phase if phase_index is None else phase_index
        return [p for p in self.prompts if p.phase_index == index]

    @property
    def finished(self) -> bool:
        return self.clock.status is Status.FINISHED

    @property
    def dirty(self) -> bool:
        return bool(self._dirty)

    # --- typing and saving ---------------------------------------------------------------------
    def set_answer(self, prompt_id: int, text: str) -> None:
        if prompt_id not in self.answers:
            raise MockError(f"prompt {prompt_id} is not part of round {self.round_id}")
        if self.answers[prompt_id] != text:
            self.answers[prompt_id] = text
            self._dirty.add(prompt_id)

    def autosave(self) -> bool:
        """Write changed answers and the clock state; True when something was written."""
        self.clock.tick()
        changed = {pid: self.answers[pid] for pid in sorted(self._dirty)}
        status = GRADING if self.finished else RUNNING
        self.store.autosave(self.round_id, changed, self.clock.state, status)
        self._dirty -= set(changed)
        return bool(changed)

    # --- driving the clock ---------------------------------------------------------------------
    def _after(self, events: list[Event]) -> list[Event]:
        if any(isinstance(e, PhaseAdvanced | RoundFinished) for e in events):
            self.autosave()
        return events

    def start(self) -> list[Event]:
        return self._after(self.clock.start())

    def tick(self) -> list[Event]:
        return self._after(self.clock.tick())

    def advance(self) -> list[Event]:
        return self._after(self.clock.advance())

    def toggle_pause(self) -> list[Event]:
        events = self.clock.toggle_pause()
        self.autosave()
        return events

    def finish(self) -> list[Event]:
        return self._after(self.clock.finish())

    # --- grading -------------------------------------------------------------------------------
    def coverage(self) -> dict[int, list[BulletCoverage]]:
        return {p.id: cover(self.answers[p.id], p.rubric) for p in self.prompts}

    def grade(self, checked: dict[int, list[bool]], rate: RateCard | None = None) -> RoundReport:
        """Build and store the report from the confirmed checklist; feed weak cards to review."""
        if not self.finished:
            raise MockError("the round is still running; finish it before grading")
        self.autosave()
        auto = self.coverage()
        graded = []
        rows = []
        for p in self.prompts:
            marks = list(checked.get(p.id, [c.covered for c in auto[p.id]]))
            if len(marks) != len(p.rubric):
                raise MockError(f"prompt {p.id}: {len(marks)} marks for {len(p.rubric)} bullets")
            statuses = [str(c.status) for c in auto[p.id]]
            graded.append(
                GradedPrompt(
                    phase_index=p.phase_index,
                    key=p.key,
                    text=p.text,
                    answer=self.answers[p.id],
                    rubric=p.rubric,
                    auto=statuses,
                    checked=marks,
                    card_id=p.card_id,
                    deck_id=p.deck_id,
                )
            )
            rows.append(GradeRow(p.id, p.rubric, statuses, marks))
        phases = [
            PhaseInfo(phase.id, phase.title, budget, used)
            for phase, budget, used in zip(
                self.definition.phases,
                self.clock.budgets_s,
                self.clock.state.used_s,
                strict=True,
            )
        ]
        report = build_report(
            round_id=self.round_id,
            round_key=self.definition.round,
            title=round_title(self.definition.title, self.clock.total_budget_s),
            started_at=self.saved.started_at,
            finished_at=self.store.wall(),
            finish_reason=self.clock.state.finish_reason,
            phases=phases,
            prompts=graded,
        )
        if rate is not None:  # rated first, so the report says what each rating did
            for phase in report.phases:
                for prompt in phase.prompts:
                    if prompt.card_id is not None and prompt.feedback_rating is not None:
                        rating = prompt.feedback_rating
                        change = rate(prompt.card_id, prompt.deck_id or "", rating)
                        prompt.feedback = CardOutcome(prompt.card_id, rating, "", change).line()
        self.store.save_report(self.round_id, rows, report)
        return report
