"""The biotech prompt's parts hang together without a run: the grader's copy of the index is the
given dataset's, the variants are the model answer with their edits and name real checks; and its
checks' pure rules (epochs cut from the reads, the order compared, the held-out clusters) judge
hand-made read streams."""

from __future__ import annotations

import ast
import importlib.util

from trainer_lab.grading.prompts import get_prompt
from trainer_lab.grading.prompts.biotech import (
    AMINO_IDS,
    CHECK_NAMES,
    FILES,
    NUM_SEQUENCES,
    PHASES,
    SPECIAL_IDS,
    given_file,
    given_index,
    launch_plans,
)
from trainer_lab.grading.prompts.biotech_variants import VARIANTS, variant_source
from trainer_lab.grading.prompts.checks_biotech import (
    epoch_problems,
    held_out_clusters,
    same_order,
)


def _drill_data():
    spec = importlib.util.spec_from_file_location("biotech_drill_data", FILES / "drill_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_graders_index_is_the_given_datasets():
    data = _drill_data()
    assert given_index("CLUSTERS") == data.CLUSTERS and given_index("LENGTHS") == data.LENGTHS
    assert len(data.CLUSTERS) == data.NUM_SEQUENCES == NUM_SEQUENCES
    low, high = AMINO_IDS
    assert high - low == data.AMINO_ACIDS and data.PAD_ID in SPECIAL_IDS
    assert set(SPECIAL_IDS) == set(range(data.VOCAB)) - set(range(low, high))
    item = data.ProteinSet()[5]
    assert item[0] == 5 and len(item[1]) == len(item[2]) == data.LENGTHS[5]
    assert item[3] == data.CLUSTERS[5] and low <= int(item[1].min()) <= int(item[1].max()) < high


def test_two_launches_pad_with_two_ids_that_are_not_amino_acids():
    plans, pads = launch_plans(seed=7)
    assert pads["train"] != pads["pad"] and {pads["train"], pads["pad"]} <= set(SPECIAL_IDS)
    assert pads["kill"] == pads["resume"] == pads["train"]
    assert plans["resume"].continues == "kill" and plans["pad"].data == plans["train"].data


def test_the_entry_and_each_variant_hang_together():
    entry = get_prompt("biotech")
    assert entry.phases == PHASES and entry.check_names == CHECK_NAMES
    assert "PAD_ID" in entry.contract and "cluster" in entry.contract
    model = given_file("train.py")
    names = {n for phase in PHASES for n in CHECK_NAMES[phase]}
    sources = {name: variant_source(name) for name in VARIANTS}
    assert len(VARIANTS) >= 8
    for name, source in sources.items():
        assert source != model, name
        ast.parse(source)
        assert set(VARIANTS[name].fails) <= names, name
    assert len(set(sources.values())) == len(sources)


def test_epochs_are_cut_where_the_training_set_is_complete():
    expected = {0, 1, 2, 3}
    exact = [(1, [0, 1]), (2, [2, 3]), (3, [3, 0]), (4, [1])]
    assert epoch_problems(exact, expected) == []
    dropped = [(1, [0, 1]), (2, [2]), (3, [0, 1])]  # 3 never read: epoch 1 never ends
    assert epoch_problems(dropped, expected) == [
        "step 3: sequence 0 read again in epoch 1 while 1 of its sequences were not yet read",
        "step 3: sequence 1 read again in epoch 1 while 1 of its sequences were not yet read",
    ]
    shared = [(1, [0, 0]), (2, [1, 1])]  # both ranks read the same sequence
    assert len(epoch_problems(shared, expected)) == 2
    assert epoch_problems([(1, [7])], expected) == [
        "step 1: sequence 7 (not a training sequence) read"
    ]


def test_an_order_repeated_in_the_next_epoch_is_seen():
    again = [(1, [0, 1]), (2, [2, 3]), (3, [1, 0]), (4, [2, 3])]
    assert same_order(again, 4)  # the same batches in the same order (within a step: any)
    assert not same_order([(1, [0, 1]), (2, [2, 3]), (3, [2, 3]), (4, [0, 1])], 4)
    assert not same_order(again[:3], 4)  # one epoch and a half: nothing to compare


def test_held_out_clusters_are_validated_and_never_trained():
    clusters = [0, 0, 1, 1, 2]
    assert held_out_clusters(clusters, {0, 1, 2}, {3, 4}) == {2}
    assert held_out_clusters(clusters, {0, 2}, {1, 3, 4}) == {2}
