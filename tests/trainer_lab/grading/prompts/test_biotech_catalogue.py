"""The biotech prompt's parts hang together without a run: the grader's copy of the index is the
given dataset's, the variants are the model answer with their edits and name real checks; and its
checks' pure rules (epochs cut from the reads, the order compared, the held-out clusters; the
one-process run, step 1's loss scale, the labels' effect on the gradients) judge hand-made
evidence."""

from __future__ import annotations

import ast
import importlib.util
import math

from trainer_lab.grading.prompts import biotech, get_prompt
from trainer_lab.grading.prompts.biotech import (
    AMINO_IDS,
    CHECK_NAMES,
    FILES,
    LOSS_BAND,
    NUM_SEQUENCES,
    PHASES,
    RELABEL_BIT,
    SPECIAL_IDS,
    given_file,
    given_index,
    launch_plans,
)
from trainer_lab.grading.prompts.biotech_variants import VARIANTS, variant_source
from trainer_lab.grading.prompts.checks_biotech import (
    CLASSES,
    epoch_problems,
    held_out_clusters,
    labels_problem,
    loss_scale_problem,
    one_process_problem,
    same_order,
    unsharded_problem,
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
    assert data.CLASSES == CLASSES and data.RELABEL_BIT == RELABEL_BIT
    assert data.BATCH_SIZE == biotech.BATCH_SIZE


def test_a_relabelled_seed_serves_the_same_residues_with_every_label_shifted():
    data = _drill_data()
    seed = 2**32 - 1  # the largest seed the grader draws (a crc32)
    for index in (0, 17, 59):
        tokens, labels = data._sample(seed, index)
        same, shifted = data._sample(seed + RELABEL_BIT, index)
        assert same.tolist() == tokens.tolist()
        assert shifted.tolist() == ((labels + 1) % data.CLASSES).tolist()


def test_the_masks_launches_read_one_data_group_and_one_runs_as_plain_python():
    plans, pads = launch_plans(seed=7)
    masks = ("train", "one_process", "labels", "pad")
    assert {plans[n].data for n in masks} == {"train"} and plans["one_process"].world_size == 0
    assert pads["labels"] == pads["one_process"] == pads["train"]
    assert all(plans[n].steps == plans["train"].steps for n in masks)


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


def test_a_validation_every_rank_runs_whole_is_not_sharded():
    """Each rank reads at most its share, ceil(n / W), of the validation sequences: a padded
    sampler's shards are fine, a rank that reads them all is not."""
    assert unsharded_problem({0: {1, 3, 5}, 1: {2, 4}}) is None
    assert unsharded_problem({0: {1, 3, 5}, 1: {2, 4, 1}}) is None  # padded to equal shards
    assert unsharded_problem({0: {1, 2, 3}}) is None  # one process
    whole = unsharded_problem({0: {1, 2, 3, 4, 5}, 1: {1, 2, 3, 4, 5}})
    assert whole is not None and "[5, 5] of 5 sequences" in whole and "not sharded" in whole
    assert unsharded_problem({0: {1, 2, 3, 4, 5}, 1: set()}) is not None  # one rank's work


def test_a_one_process_run_must_step_print_and_save():
    assert one_process_problem([1, 2, 3], 3, 1, 3) is None
    assert one_process_problem([1, 2], 2, 1, 3) == "2 optimizer steps (expected 3)"
    assert one_process_problem([], 3, 0, 3) == "loss lines printed for steps []"  # not rank 0
    assert one_process_problem([1, 2, 3], 3, 0, 3) == "no checkpoint saved"


def test_step_1s_loss_is_an_untrained_taggers_mean_per_residue():
    ln3 = math.log(CLASSES)
    assert loss_scale_problem(1.27, LOSS_BAND, CLASSES) is None
    assert loss_scale_problem(ln3 * LOSS_BAND[1], LOSS_BAND, CLASSES) is None
    summed = loss_scale_problem(1.1 * 160, LOSS_BAND, CLASSES)  # a sum over 160 residues
    assert summed == f"step 1's printed loss 176 is x{176 / ln3:.3g} ln 3"
    assert loss_scale_problem(0.1, LOSS_BAND, CLASSES) is not None  # divided twice
    assert loss_scale_problem(float("nan"), LOSS_BAND, CLASSES) is not None
    assert loss_scale_problem(None, LOSS_BAND, CLASSES) == "no loss printed for step 1"


def test_labels_reach_the_loss_when_other_labels_change_step_1s_gradients():
    grad = {"digest": "a1", "norm": 0.5, "sample": [0.1, -0.2]}
    other = {"digest": "b2", "norm": 0.6, "sample": [0.3, -0.1]}
    assert labels_problem(grad, other) is None
    assert labels_problem(grad, dict(grad)) == "step 1's gradients are the same with other labels"
    assert labels_problem({}, other) == "no gradient recorded at step 1"
