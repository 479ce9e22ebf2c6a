"""The preemption prompt on the drill side: its follow-up table covers every check of its
grader, links bundled cards, asks with the grading's evidence only, and its time table grades
each phase once before the pushback grades them all."""

from __future__ import annotations

import string

import yaml

from decks import bundled_deck_paths
from drill.mock.coding.catalogue import round_prompt


def test_the_preemption_prompts_follow_ups_cover_its_checks_and_link_bundled_cards():
    entry = round_prompt("preemption")
    cards = set()
    for path in bundled_deck_paths():
        cards.update(card["id"] for card in yaml.safe_load(path.read_text())["cards"])
    table = entry.followups
    assert set(table.failed) == {n for names in entry.check_names.values() for n in names}
    assert set(table.what_if) == set(table.what_if_order) <= set(entry.phases)
    for phase, t in table.what_if.items():
        assert t.check in entry.check_names[phase]
    for t in (*table.failed.values(), *table.what_if.values()):
        fields = {f for _, f, _, _ in string.Formatter().parse(t.text) if f}
        assert fields <= {"evidence"}, t.id
        assert 3 <= len(t.rubric) <= 4 and set(t.cards) <= cards, t.id
    said = table.failed["stop.stop_together"].text.format(evidence="steps 6 and 7")
    assert '"steps 6 and 7"' in said


def test_the_preemption_rounds_time_table_grades_every_phase():
    entry = round_prompt("preemption")
    assert entry.minutes == sum(p.minutes for p in entry.round_phases) == 45
    assert entry.all_grader_phases == entry.phases == ("stop", "requeue", "again")
    graded_alone = [p.grades for p in entry.round_phases[:-1] if p.grades]
    assert graded_alone == [("stop",), ("requeue",), ("again",)]
    assert set(entry.talk_phases) == {p.id for p in entry.round_phases}
    assert "preemption" in entry.topics and entry.run_args.startswith("--steps ")
    assert "SIGTERM" in entry.contract and "SIGTERM" in entry.starter()
