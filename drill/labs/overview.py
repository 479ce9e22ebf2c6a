"""The labs list without a screen: every lab in the catalogue with its group, the cards linked
to it, its last result and summary, and the past runs of one lab.

Reads of the run log go through drill.guarded_db: a database that cannot be read gives a
notice and no runs, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from drill import guarded_db
from drill.guarded_db import Done

if TYPE_CHECKING:
    from drill.database import Database
    from drill.decks.loader import DeckSet
    from drill.labs.runs import LabRuns, RunRecord


@dataclass(frozen=True)
class LabRow:
    name: str
    group: str
    cards: int  # cards linked to the lab
    last: str  # the newest finished run, one line, or "never run"
    summary: str  # in full (a few sentences): the screen shows it under the table
    runnable: bool = True  # False: only listed for its past runs (not a catalogue lab)


# Runs recorded in the run log by something other than a catalogue lab.
OTHER_LABS = {"mock-coding": "coding-round gradings (drill mock grade / ctrl+r)"}


def linked_cards_by_lab(decks: DeckSet | None) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for loaded in decks.decks if decks is not None else []:
        for card in loaded.deck.cards:
            if card.lab is not None:
                found.setdefault(card.lab.run, []).append(card.id)
    return found


class LabsOverview:
    """The catalogue joined with the decks and the run log (either may come later)."""

    def __init__(self, decks: DeckSet | None = None, db: Database | None = None) -> None:
        self.decks: DeckSet | None = None
        self.db: Database | None = None
        self._lab_runs: LabRuns | None = None
        self.attach(decks, db)

    def attach(self, decks: DeckSet | None, db: Database | None) -> str | None:
        """Use these decks and this database (the app loads them after the first paint);
        runs left `running` by a process that is gone are closed. Returns a notice when the
        database cannot be read."""
        self.decks = decks if decks is not None else self.decks
        if db is None or self._lab_runs is not None:
            return None
        from drill.labs.runs import LabRuns

        self.db = db
        self._lab_runs = LabRuns(db)
        return guarded_db.write(self._lab_runs.close_interrupted).notice

    def rows(self) -> Done[list[LabRow]]:
        from trainer_lab.catalogue import CATALOGUE

        linked = linked_cards_by_lab(self.decks)
        lab_runs = self._lab_runs
        last = guarded_db.read(lab_runs.last_by_lab) if lab_runs is not None else Done({})
        found = last.value or {}
        rows = []
        for name, spec in CATALOGUE.items():
            record = found.get(name)
            summary = spec.summary
            rows.append(
                LabRow(
                    name,
                    spec.group,
                    len(linked.get(name, [])),
                    record.short() if record is not None else "never run",
                    summary,
                )
            )
        for name in sorted(set(found) - set(CATALOGUE)):  # e.g. mock-coding: gradings of train.py
            summary = OTHER_LABS.get(name, "not in the lab catalogue")
            rows.append(LabRow(name, "mock", 0, found[name].short(), summary, runnable=False))
        return Done(rows, last.notice)

    def runs(self, lab: str, limit: int = 30) -> Done[list[RunRecord]]:
        """The lab's past runs, newest first."""
        lab_runs = self._lab_runs
        if lab_runs is None:
            return Done([])
        found = guarded_db.read(lambda: lab_runs.runs(lab=lab, limit=limit))
        return Done(found.value or [], found.notice)
