"""The contract's files and plan, the variants' patches, and grading code that does not compile
(all without running anything)."""

from __future__ import annotations

import re

import pytest

from tests.support.coding import failed, grade_source
from trainer_lab.grading import CHECK_NAMES, contract
from trainer_lab.grading.grader import launches_for, syntax_error
from trainer_lab.grading.variants import load_variants


def test_grader_constants_match_the_given_dataset_module():
    source = contract.dataset_source()
    assert re.search(rf"^DATASET_SIZE = {contract.DATASET_SIZE}$", source, re.M)
    assert re.search(rf"^BATCH_SIZE = {contract.BATCH_SIZE}$", source, re.M)
    # epochs split evenly over every world size the grader uses
    assert all(contract.DATASET_SIZE % w == 0 for w in (1, 2, 3))


def test_contract_names_the_command_lines_and_the_step_line():
    text = contract.CONTRACT
    assert "python train.py --steps N --ckpt-dir DIR --ckpt-every C" in text
    assert "torchrun --nproc-per-node W" in text
    assert '"phases"' in text and '"step_time"' in text


def test_every_variant_patch_applies_exactly_once_and_changes_the_answer():
    variants = load_variants()
    assert len(variants) >= 9
    answer = contract.model_answer_source()
    known = {name for names in CHECK_NAMES.values() for name in names}
    for variant in variants:
        source = variant.source()
        assert source != answer, variant.id
        compile(source, "train.py", "exec")
        assert set(variant.expect) <= known, variant.id
        phases_of = {name.split(".")[0] for name in variant.expect}
        assert phases_of <= set(variant.phases), variant.id


def test_a_patch_that_no_longer_matches_is_an_error():
    variant = load_variants()[0]
    with pytest.raises(ValueError, match="matches 0 times"):
        variant.source(base="print('hello')\n")


def test_relaunches_come_after_the_run_they_continue_and_shared_runs_run_once():
    plans = launches_for(["restart", "torn", "monitoring", "distributed"])
    names = [p.name for p in plans]
    assert sorted(names) == sorted(set(names))
    assert names.count("w2") == 1
    for plan in plans:
        if plan.continues:
            assert names.index(plan.continues) < names.index(plan.name)
    # the one-process run first: when it does not finish nothing else is run
    assert launches_for(list(CHECK_NAMES))[0].name == "single"
    assert [p.name for p in launches_for(["skeleton"])] == ["single", "single-other-data"]


def test_syntax_error_names_file_and_line():
    assert syntax_error("x = 1\ndef f(:\n") == "train.py:2: SyntaxError: invalid syntax"
    assert syntax_error("x = 1\n") is None


def test_a_script_that_does_not_compile_fails_every_check_without_a_run(tmp_path):
    result = grade_source("import torch\nfor x in:\n", tmp_path, ("skeleton", "restart"))
    assert result["status"] == "failed"
    assert failed(result) == sorted(CHECK_NAMES["skeleton"] + CHECK_NAMES["restart"])
    assert all("train.py:2: SyntaxError" in c["detail"] for c in result["checks"])
    assert result["launches"] == []
    assert not (tmp_path / "out" / "workspace").exists()
    assert (tmp_path / "out" / "result.json").exists()
