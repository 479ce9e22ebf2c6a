"""doc-packing: a document mask and reset positions give every packed document its logits and
loss alone; a plain causal mask leaks across documents; the loss counts in-document targets."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab

SMALL = {"docs_per_rank": 12, "seq_len": 48, "max_len": 48}


@pytest.mark.parametrize("world_size", [2, 3])
def test_packed_documents_match_each_document_alone(tmp_path: Path, world_size: int) -> None:
    result = run_lab("doc-packing", SMALL, world_size, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    assert obs["docs"] == 12 * world_size
    assert (
        sum(obs["per_rank"]["rows"]) == obs["rows"] and len(obs["per_rank"]["rows"]) == world_size
    )
    assert sum(obs["per_rank"]["real_tokens"]) == obs["real_tokens"]
    assert obs["slots"] == obs["rows"] * 48
    assert obs["efficiency"]["packed"] == round(obs["real_tokens"] / obs["slots"], 4)
    assert obs["efficiency"]["packed"] > obs["efficiency"]["padded"]
    # the math is exact: a masked-out key gets probability 0, so changing it changes nothing
    assert obs["pipeline"]["cross_doc_influence"] == 0
    assert obs["pipeline"]["max_abs_logit_diff"] <= 1e-5
    contrast = obs["contrast"]
    assert contrast["causal_mask"]["cross_doc_influence"] > 0.01
    assert contrast["causal_mask"]["max_abs_logit_diff"] > 0.01
    assert contrast["no_position_reset"]["max_abs_logit_diff"] > 0.01
    assert contrast["no_position_reset"]["cross_doc_influence"] == 0  # the mask still holds
    # rotary positions depend on offsets only: with a document mask a running position cancels
    assert contrast["rope_no_position_reset"]["max_abs_logit_diff"] <= 1e-5
    loss = obs["loss"]
    # every document's targets, each once: tokens minus one per document
    assert loss["counted_targets"] == loss["real_targets"] == obs["real_tokens"] - obs["docs"]
    assert loss["boundary_targets_counted"] == loss["padding_targets_counted"] == 0
    assert loss["abs_diff"] <= 1e-5


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("plain_causal", {"packed_matches_alone", "no_cross_document_influence"}),
        ("no_position_reset", {"packed_matches_alone"}),
        ("boundary_targets", {"no_target_crosses_boundary", "loss_counts_only_real_tokens"}),
        ("pad_in_loss", {"loss_counts_only_real_tokens"}),
    ],
)
def test_each_sabotage_fails_its_checks(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("doc-packing", {**SMALL, "sabotage": sabotage}, 2, tmp_path, timeout_s=120)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing
    loss = result["observations"]["loss"]
    if sabotage == "boundary_targets":  # one extra target per pair of neighbouring documents
        rows, docs = result["observations"]["rows"], result["observations"]["docs"]
        assert loss["boundary_targets_counted"] == docs - rows
        assert loss["counted_targets"] == loss["real_targets"] + docs - rows
    if sabotage == "pad_in_loss":
        obs = result["observations"]
        assert loss["padding_targets_counted"] == obs["slots"] - obs["real_tokens"]


def test_first_fit_places_each_document_once_in_order() -> None:
    from trainer_lab.labs.doc_packing.worker import first_fit

    rows = first_fit([30, 20, 40, 10, 14, 64], 64)
    assert rows == [[0, 1, 3], [2, 4], [5]]
    with pytest.raises(ValueError, match="more than a row"):
        first_fit([65], 64)


def test_masks_keep_attention_and_targets_inside_documents() -> None:
    import torch

    from trainer_lab.labs.doc_packing.worker import PAD_DOC, attention_mask, target_mask

    doc_ids = torch.tensor([[0, 0, 1, 1, 1, PAD_DOC]])
    mask = attention_mask(doc_ids, per_document=True)[0]
    assert mask.tolist() == [
        [True, False, False, False, False, False],
        [True, True, False, False, False, False],
        [False, False, True, False, False, False],
        [False, False, True, True, False, False],
        [False, False, True, True, True, False],
        [False, False, False, False, False, True],
    ]
    assert attention_mask(doc_ids, per_document=False)[0].equal(torch.ones(6, 6).tril().bool())
    assert target_mask(doc_ids, "none")[0].tolist() == [True, False, True, True, False]
    assert target_mask(doc_ids, "boundary_targets")[0].tolist() == [True, True, True, True, False]
    assert target_mask(doc_ids, "pad_in_loss")[0].tolist() == [True, False, True, True, True]
