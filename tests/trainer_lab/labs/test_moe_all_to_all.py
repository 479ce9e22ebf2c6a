"""moe-all-to-all: expert parallelism by all-to-all equals one process running every expert,
moves only the routed rows, counts its drops, and keeps expert gradients unreduced."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab

ROW = 8 * 8  # one token row: DIM float64 values


@pytest.mark.parametrize(("world_size", "top_k"), [(2, 1), (3, 1), (2, 2)])
def test_all_to_all_layer_matches_one_process(tmp_path: Path, world_size: int, top_k: int) -> None:
    tokens, per_rank = 32, 2
    params = {"tokens_per_rank": tokens, "experts_per_rank": per_rank, "top_k": top_k}
    result = run_lab("moe-all-to-all", params, world_size, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    experts, assignments = per_rank * world_size, world_size * tokens * top_k
    assert obs["experts"] == experts and obs["assignments"] == assignments
    assert obs["output"]["max_abs_diff"] <= 1e-12
    assert obs["all_gather_design"]["max_abs_diff"] <= 1e-12
    grads = obs["grads"]
    assert max(grads["input_max_abs_diff"], grads["expert_max_abs_diff"]) <= 1e-12
    assert grads["router_summed_max_abs_diff"] <= 1e-12
    assert grads["router_local_max_abs_diff"] > 0.1  # one rank's tokens are not the batch

    # dispatch + combine forward, both again in backward; one exchange of per-expert counts
    coll = obs["collectives"]
    assert (
        coll["forward"]
        == coll["backward"]
        == {
            "all_to_all": 2,
            "all_gather": 0,
            "reduce_scatter": 0,
        }
    )
    assert coll["count_exchanges"] == 1
    assert coll["count_bytes"] == world_size * (world_size - 1) * per_rank * 8

    tok, load = obs["tokens"], obs["load"]
    assert tok["dropped"] == tok["dropped_reference"] > 0  # the hot expert overflows
    assert tok["processed"] + tok["dropped"] == assignments
    assert sum(load["routed"]) == assignments and sum(load["processed"]) == tok["processed"]
    assert max(load["processed"]) <= world_size * obs["capacity"]
    assert load["routed"][0] == max(load["routed"]) and load["imbalance"] > 1.2
    assert sum(load["rank_rows"]) == tok["processed"]

    dispatch, combine = obs["dispatch"], obs["combine"]
    assert dispatch["received_bytes"] == dispatch["expected_received_bytes"]
    assert combine["sent_bytes"] == dispatch["received_bytes"]
    assert combine["received_bytes"] == dispatch["sent_bytes"]
    assert dispatch["messages"] == [world_size - 1] * world_size  # every rank to every rank
    assert dispatch["mean_message_bytes"] == round(
        sum(dispatch["sent_bytes"]) / sum(dispatch["messages"]), 1
    )
    remote_rows = sum(dispatch["received_bytes"]) // ROW
    assert remote_rows + sum(dispatch["self_rows"]) == tok["processed"]
    moved = obs["bytes"]
    assert moved["layer_forward"] == moved["layer_backward"] == 2 * remote_rows * ROW
    # gathering every token: each rank receives the other ranks' tokens, and sends as many back
    assert moved["all_gather_design_forward"] == 2 * world_size * (world_size - 1) * tokens * ROW
    if top_k < world_size:  # about W / k times the bytes (more when tokens are dropped)
        assert moved["all_gather_over_layer"] >= world_size / top_k


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("wrong_order", {"output_matches_reference", "gradients_match_reference"}),
        ("no_gate", {"output_matches_reference", "gradients_match_reference"}),
        ("uncounted_drops", {"drops_counted"}),
        ("all_gather", {"dispatch_moves_only_routed_tokens"}),
        ("reduce_expert_grads", {"gradients_match_reference"}),
    ],
)
def test_each_sabotage_fails_its_check(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("moe-all-to-all", {"sabotage": sabotage}, 2, tmp_path, timeout_s=120)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing
    if sabotage == "all_gather":
        obs = result["observations"]
        assert obs["bytes"]["all_gather_over_layer"] == 1.0
        assert obs["collectives"]["forward"]["all_to_all"] == 0


def test_route_gives_first_choices_the_slots_before_second_choices() -> None:
    import torch

    from trainer_lab.labs.moe_all_to_all.worker import route

    # 4 tokens, 3 experts; every token ranks expert 0 first, expert 1 second
    x, router = torch.zeros(4, 2, dtype=torch.float64), torch.zeros(2, 3, dtype=torch.float64)
    bias = torch.tensor([2.0, 1.0, 0.0], dtype=torch.float64)
    gate, idx, keep = route(x, router, bias, k=2, capacity=3)
    assert idx.tolist() == [[0, 1]] * 4
    # expert 0: tokens 0-2 fit, token 3 is dropped; expert 1: second choices, tokens 0-2
    assert keep.tolist() == [[True, True], [True, True], [True, True], [False, False]]
    assert torch.allclose(gate[0], torch.softmax(bias, 0)[:2])


def test_run_experts_sends_each_row_through_its_own_expert() -> None:
    import torch

    from trainer_lab.labs.moe_all_to_all.worker import expert, run_experts

    gen = torch.Generator().manual_seed(0)
    w1, w2 = torch.randn(2, 3, 5, generator=gen), torch.randn(2, 5, 3, generator=gen)
    rows, which = torch.randn(6, 3, generator=gen), torch.tensor([1, 0, 1, 1, 0, 0])
    out = run_experts(rows, which, w1, w2)
    for i, j in enumerate(which.tolist()):
        assert torch.allclose(out[i], expert(rows[i : i + 1], w1[j], w2[j])[0])


def test_remote_bytes_leave_out_the_rank_itself() -> None:
    from trainer_lab.labs.moe_all_to_all.drive import imbalance, remote

    record = {"sent": [3, 5, 2], "received": [1, 1, 4], "row_bytes": 64}
    assert remote(record, 1, "sent") == (3 + 2) * 64
    assert remote(record, 1, "received") == (1 + 4) * 64
    assert imbalance([30, 18, 11, 5]) == 1.875 and imbalance([4, 4]) == 1.0
