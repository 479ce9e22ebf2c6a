"""The FSDP2-first prompt in the catalogue (no runs): its entry, its given files and the grader's
mirror of their numbers, and its wrong variants as edits of the model answer."""

from __future__ import annotations

import ast
import importlib.util
import re

from trainer_lab.grading.prompts import PROMPT_IDS, get_prompt
from trainer_lab.grading.prompts.checks_fsdp2_prompt import (
    BLOCK_PARAMS,
    BLOCKS,
    DATASET_SIZE,
    GLOBAL_BATCH,
    HIDDEN,
)
from trainer_lab.grading.prompts.fsdp2 import CHECK_NAMES, FILES, NEWEST_CKPT, PHASES, given_file
from trainer_lab.grading.prompts.fsdp2_variants import VARIANTS, variant_source


def test_the_fsdp2_entry_is_listed_with_its_round_and_contract():
    assert "fsdp2" in PROMPT_IDS
    entry = get_prompt("fsdp2")
    assert (entry.title, entry.minutes, entry.lab) == ("FSDP2 first", 45, "mock-coding-fsdp2")
    assert entry.phases == PHASES == ("sharded", "dcp", "reshard")
    assert set(entry.graded) == set(PHASES)
    for row in entry.graded.values():
        assert row in "\n".join(line.removeprefix("  ") for line in entry.contract.splitlines())
    assert "fully_shard" in entry.contract and "torch.distributed.checkpoint" in entry.contract
    assert "fully_shard(block" in entry.model_answer() and "Stateful" in entry.second_answer()
    assert "import torch.distributed" not in entry.starter()


def test_the_grader_mirrors_the_given_datasets_numbers():
    data = given_file("drill_data.py")

    def value(name: str) -> int:
        return int(re.search(rf"^{name} = (\d+)", data, re.M).group(1))

    assert (value("DATASET_SIZE"), value("GLOBAL_BATCH"), value("BLOCKS"), value("HIDDEN")) == (
        DATASET_SIZE,
        GLOBAL_BATCH,
        BLOCKS,
        HIDDEN,
    )
    assert GLOBAL_BATCH % 2 == 0 and GLOBAL_BATCH % 3 == 0
    # the resume point is inside an epoch: restarting the epoch would show
    assert NEWEST_CKPT % (DATASET_SIZE // GLOBAL_BATCH)


def test_a_blocks_gradient_size_is_the_given_blocks_parameter_count():
    """per_block knows a Block's FSDP2 unit by the size of the gradient it reduces."""
    spec = importlib.util.spec_from_file_location("fsdp2_drill_data", FILES / "drill_data.py")
    data = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(data)
    assert sum(p.numel() for p in data.Block().parameters()) == BLOCK_PARAMS
    # no padding at W=2 or 3: each parameter's first dimension divides by both
    assert all(p.shape[0] % 6 == 0 for p in data.Block().parameters())


def test_each_wrong_variant_is_the_model_answer_with_its_edits_and_names_real_checks():
    model = given_file("train.py")
    names = {n for phase in PHASES for n in CHECK_NAMES[phase]}
    sources = {name: variant_source(name) for name in VARIANTS}
    assert len(VARIANTS) >= 8
    for name, source in sources.items():
        assert source != model, name
        ast.parse(source)
        assert set(VARIANTS[name].fails) <= names, name
    assert len(set(sources.values())) == len(sources)
