"""The catalogue of round prompts (trainer_lab.grading.prompts): today's DDP round is its first
entry, unchanged; the evaluation prompt's files and variants hang together (no runs here)."""

from __future__ import annotations

import ast
import re

import pytest

from trainer_lab.grading import contract
from trainer_lab.grading.prompts import PROMPT_IDS, get_prompt
from trainer_lab.grading.prompts.checks_eval import EVAL_SIZE
from trainer_lab.grading.prompts.eval_variants import VARIANTS, variant_source
from trainer_lab.grading.prompts.evaluation import CHECK_NAMES, PHASES, given_file


def test_the_ddp_round_is_the_first_entry_with_todays_contract_and_files():
    assert PROMPT_IDS[0] == "ddp"
    ddp = get_prompt("ddp")
    assert ddp.contract == contract.CONTRACT
    assert ddp.phases == contract.PHASES
    assert ddp.check_names == contract.CHECK_NAMES
    assert ddp.starter() == contract.starter_source()
    assert ddp.model_answer() == contract.model_answer_source()
    assert ddp.dataset() == contract.dataset_source()
    assert ddp.lab == contract.LAB
    # the second answer is graded for real by test_grading (it passes every check)
    assert "ReduceOp.AVG" in ddp.second_answer() and "def main" in ddp.second_answer()


def test_every_entry_has_its_parts_and_an_unknown_name_says_which_exist():
    for name in PROMPT_IDS:
        entry = get_prompt(name)
        assert entry.id == name and entry.title and entry.minutes > 0 and entry.prompt
        assert set(entry.check_names) == set(entry.phases)
        for source in (entry.starter(), entry.model_answer(), entry.second_answer()):
            ast.parse(source)
        assert entry.model_answer() != entry.second_answer()
    with pytest.raises(KeyError, match="prompts: ddp, eval"):
        get_prompt("fsdp9")


def test_the_eval_set_size_divides_by_neither_2_nor_3_and_the_grader_knows_it():
    data = given_file("drill_data.py")
    size = int(re.search(r"^EVAL_SIZE = (\d+)$", data, re.M).group(1))
    assert size == EVAL_SIZE and size % 2 and size % 3
    assert f"count {EVAL_SIZE}" in get_prompt("eval").contract
    assert PHASES == ("exact", "during", "best")
    assert all(name.startswith(f"{phase}.") for phase in PHASES for name in CHECK_NAMES[phase])


def test_each_wrong_variant_is_the_model_answer_with_its_edits_and_names_real_checks():
    model = given_file("train.py")
    names = {n for phase in PHASES for n in CHECK_NAMES[phase]}
    sources = {name: variant_source(name) for name in VARIANTS}
    assert len(VARIANTS) >= 4
    for name, source in sources.items():
        assert source != model, name
        ast.parse(source)
        assert set(VARIANTS[name].fails) <= names, name
    assert len(set(sources.values())) == len(sources)
