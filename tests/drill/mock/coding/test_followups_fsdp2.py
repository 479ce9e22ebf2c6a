"""The FSDP2-first prompt on the drill side: its follow-up table covers every check of its
grader, links bundled cards, asks with the grading's evidence only (a what-if's claim of success
is its lead, said only when the phase held), and its time table grades each phase once before
the pushback grades them all."""

from __future__ import annotations

import string

import yaml

from decks import bundled_deck_paths
from drill.mock.coding.catalogue import round_prompt


def test_the_fsdp2_prompts_follow_ups_cover_its_checks_and_link_bundled_cards():
    entry = round_prompt("fsdp2")
    cards = set()
    for path in bundled_deck_paths():
        cards.update(card["id"] for card in yaml.safe_load(path.read_text())["cards"])
    table = entry.followups
    assert set(table.failed) == {n for names in entry.check_names.values() for n in names}
    assert set(table.what_if) == set(table.what_if_order) <= set(entry.phases)
    for phase, t in table.what_if.items():
        assert t.check in entry.check_names[phase] and t.lead, t.id
        assert not t.text.startswith("Your"), t.id  # the claim is in the lead
    for t in (*table.failed.values(), *table.what_if.values()):
        fields = {f for _, f, _, _ in string.Formatter().parse(t.text) if f}
        assert fields <= {"evidence"}, t.id
        assert 3 <= len(t.rubric) <= 4 and set(t.cards) <= cards, t.id


def test_the_fsdp2_rounds_time_table_grades_every_phase():
    entry = round_prompt("fsdp2")
    assert entry.minutes == sum(p.minutes for p in entry.round_phases) == 45
    assert entry.all_grader_phases == entry.phases == ("sharded", "dcp", "reshard")
    graded_alone = [p.grades for p in entry.round_phases[:-1] if p.grades]
    assert graded_alone == [("sharded",), ("dcp",), ("reshard",)]
    assert set(entry.talk_phases) == {p.id for p in entry.round_phases}
    assert "fsdp2" in entry.topics and entry.run_args.startswith("--steps ")
    assert "fully_shard" in entry.contract and "GLOBAL_BATCH" in entry.starter()
