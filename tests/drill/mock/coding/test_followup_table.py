"""The follow-up table (drill.mock.coding.followup_table): its cards exist, its templates
use known facts and short rubrics, and every fact is filled for every phase."""

from __future__ import annotations

import string

import pytest
import yaml

from decks import bundled_deck_paths
from drill.mock.coding.followup_table import (
    FACT_KEYS,
    FAILED,
    GATE_NO_OPTIMIZER_STEP,
    GATE_NOT_COMPILED,
    HANG,
    WHAT_IF,
    WHAT_IF_ORDER,
)
from drill.mock.coding.followups import inspect_source, iter_card_ids, read_checks, template_facts
from tests.support.followups import BROKEN, fixture
from trainer_lab.grading import CHECK_NAMES, PHASES, model_answer_source


def bundled_card_ids() -> set[str]:
    ids = set()
    for path in bundled_deck_paths():
        ids.update(card["id"] for card in yaml.safe_load(path.read_text())["cards"])
    return ids


def test_every_card_the_table_links_exists_in_the_bundled_decks():
    linked = list(iter_card_ids())
    assert len(linked) > 20
    assert sorted(set(linked) - bundled_card_ids()) == []


def all_templates():
    return [*FAILED.values(), GATE_NOT_COMPILED, GATE_NO_OPTIMIZER_STEP, HANG, *WHAT_IF.values()]


def test_each_template_uses_known_facts_and_has_a_3_to_5_item_rubric():
    for t in all_templates():
        for text in (t.text, t.lead, *t.rubric):
            fields = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
            assert fields <= FACT_KEYS, (t.id, fields - FACT_KEYS)
        assert 3 <= len(t.rubric) <= 5, t.id
        assert len(t.cards) == len(set(t.cards)) >= 2, t.id
    # a failed check's rubric leaves room for the grader's likely cause in front
    assert all(len(t.rubric) <= 4 for t in (*FAILED.values(), HANG))
    assert set(FAILED) == {n for names in CHECK_NAMES.values() for n in names}
    assert set(WHAT_IF) == set(WHAT_IF_ORDER) == set(PHASES)
    assert all(t.check in CHECK_NAMES[phase] for phase, t in WHAT_IF.items())


@pytest.mark.parametrize(
    "source", [model_answer_source(), "", "def broken(:\n"], ids=["model", "empty", "syntax"]
)
def test_every_fact_is_filled_for_every_phase(source):
    for result in (fixture("model-answer"), fixture(BROKEN), {}):
        facts = template_facts(read_checks(result), inspect_source(source))
        for family in PHASES:
            assert FACT_KEYS - {"evidence"} <= set(facts[family]), family
            assert all(isinstance(v, str) and v for v in facts[family].values())
