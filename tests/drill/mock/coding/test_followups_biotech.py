"""The biotech data-pipeline prompt on the drill side: its follow-up table covers every check of
its grader, links bundled cards (the biotech deck's among them), asks with the grading's evidence
only, and its time table grades each phase once before the pushback grades them all."""

from __future__ import annotations

import string

import yaml

from decks import bundled_deck_paths
from drill.mock.coding.catalogue import round_prompt


def _bundled() -> dict[str, set[str]]:
    """Card id -> its tags, over the bundled decks."""
    found: dict[str, set[str]] = {}
    for path in bundled_deck_paths():
        for card in yaml.safe_load(path.read_text())["cards"]:
            found[card["id"]] = set(card.get("tags") or [])
    return found


def test_the_biotech_prompts_follow_ups_cover_its_checks_and_link_bundled_cards():
    entry = round_prompt("biotech")
    cards = _bundled()
    table = entry.followups
    assert set(table.failed) == {n for names in entry.check_names.values() for n in names}
    assert set(table.what_if) == set(table.what_if_order) <= set(entry.phases)
    for phase, t in table.what_if.items():
        assert t.check in entry.check_names[phase] and t.lead, t.id
        assert not t.text.startswith("Your"), t.id  # the claim is in the lead
    linked = set()
    for t in (*table.failed.values(), *table.what_if.values()):
        fields = {f for _, f, _, _ in string.Formatter().parse(t.text) if f}
        assert fields <= {"evidence"}, t.id
        assert 3 <= len(t.rubric) <= 4 and set(t.cards) <= set(cards), t.id
        linked.update(t.cards)
    assert {"bio-data-leakage", "bio-variable-length-collation"} <= linked
    # every topic is a tag some bundled card carries (the suggestion reads readiness by tag)
    assert set(entry.topics) <= set().union(*cards.values())


def test_the_biotech_rounds_time_table_grades_every_phase():
    entry = round_prompt("biotech")
    assert entry.minutes == sum(p.minutes for p in entry.round_phases) == 45
    assert entry.all_grader_phases == entry.phases == ("masks", "split", "epoch")
    graded_alone = [p.grades for p in entry.round_phases[:-1] if p.grades]
    assert graded_alone == [("masks",), ("split",), ("epoch",)]
    assert set(entry.talk_phases) == {p.id for p in entry.round_phases}
    assert "biotech" in entry.topics and entry.run_args.startswith("--steps ")
    assert "PAD_ID" in entry.contract and "ProteinSet" in entry.starter()
