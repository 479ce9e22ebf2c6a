"""context-parallel: ring attention with an online softmax equals full causal attention, never
lets a later key in, and the zigzag layout gives every rank the same causal work."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lab_checks import checks, undeclared
from trainer_lab.api import run_lab

pytestmark = pytest.mark.lab


def causal_pairs(chunks: list[int], n: int) -> int:
    """Chunk c sees c whole earlier chunks and the lower triangle of its own."""
    return sum(c * n * n + n * (n + 1) // 2 for c in chunks)


@pytest.mark.parametrize("world_size", [2, 3])
def test_ring_attention_matches_full_attention(tmp_path: Path, world_size: int) -> None:
    n, heads, dim = 8, 2, 8
    params = {"chunk": n, "heads": heads, "head_dim": dim}
    result = run_lab("context-parallel", params, world_size, tmp_path, timeout_s=120)
    assert result["status"] == "ok", result
    assert undeclared(result) == []
    obs = result["observations"]
    length = 2 * world_size * n
    assert obs["seq_len"] == length
    for method in ("zigzag", "contiguous", "all_gather"):
        assert obs[method]["max_abs_diff"] <= 1e-12, method
    assert obs["zigzag"]["future_leak"] == 0.0  # skipped, not merely down-weighted

    zig, cont = obs["zigzag"], obs["contiguous"]
    assert zig["chunks"] == [[r, 2 * world_size - 1 - r] for r in range(world_size)]
    assert zig["pairs_per_rank"] == [causal_pairs(c, n) for c in zig["chunks"]]
    assert cont["pairs_per_rank"] == [causal_pairs(c, n) for c in cont["chunks"]]
    assert zig["work_imbalance"] == 1.0
    first, last = causal_pairs([0, 1], n), causal_pairs([2 * world_size - 2, 2 * world_size - 1], n)
    assert cont["work_imbalance"] == round(last / first, 4)  # 2.88 at W=2, 4.76 at W=3
    assert obs["causal_fraction"] == round((length + 1) / (2 * length), 4)

    # every rank receives every other rank's K/V block once, ring or all-gather
    block = 2 * heads * (length // world_size) * dim * 8
    for method in ("zigzag", "contiguous", "all_gather"):
        assert obs[method]["kv_bytes_received"] == [(world_size - 1) * block] * world_size
    assert obs["kv_fraction_received"] == round((world_size - 1) / world_size, 4)
    assert zig["kv_peak_bytes"] == 2 * block  # the block in hand and the one arriving
    assert obs["all_gather"]["kv_peak_bytes"] == world_size * block

    scaling = obs["scaling"]
    assert scaling["seq_lens"] == [length, 2 * length, 4 * length]
    assert scaling["pairs_per_token"] == [(s + 1) / 2 for s in scaling["seq_lens"]]
    assert scaling["kv_bytes_per_rank"] == [(world_size - 1) * block * f for f in (1, 2, 4)]
    assert scaling["per_token_growth_4x"] == round((4 * length + 1) / (length + 1), 4)


@pytest.mark.parametrize(
    ("sabotage", "failing"),
    [
        ("no_cross_block_mask", {"matches_full_attention", "no_future_leak"}),
        ("no_rescale", {"matches_full_attention"}),
        ("contiguous", {"zigzag_balances_causal_work"}),
    ],
)
def test_each_sabotage_fails_its_check(tmp_path: Path, sabotage: str, failing: set[str]) -> None:
    result = run_lab("context-parallel", {"sabotage": sabotage}, 2, tmp_path, timeout_s=120)
    assert result["status"] == "failed", result
    assert {name for name, passed in checks(result).items() if not passed} == failing


def test_online_softmax_over_blocks_in_any_order_is_one_softmax() -> None:
    import torch

    from trainer_lab.labs.context_parallel.worker import (
        BlockAttention,
        full_attention,
        positions,
        sequence,
        zigzag_chunks,
    )

    n, world = 4, 3
    q, k, v = sequence(2, 2 * world * n, 8, seed=0, device=torch.device("cpu"))
    reference = full_attention(q, k, v)
    layout = zigzag_chunks(world)
    for rank in range(world):
        mine = positions(layout[rank], n)
        outputs = {}
        for sabotage in ("none", "no_rescale"):
            attention = BlockAttention(q[:, mine], layout[rank], n, sabotage)
            for source in (2, 0, 1):  # the order blocks arrive in does not matter
                theirs = positions(layout[source], n)
                attention.add(k[:, theirs], v[:, theirs], layout[source])
            outputs[sabotage] = attention.result()
        assert torch.allclose(outputs["none"], reference[:, mine], atol=1e-12, rtol=0)
        assert not torch.allclose(outputs["no_rescale"], reference[:, mine], atol=1e-3)


def test_layouts_and_imbalance() -> None:
    from trainer_lab.labs.context_parallel.drive import work_imbalance
    from trainer_lab.labs.context_parallel.worker import contiguous_chunks, positions

    assert contiguous_chunks(2) == [[0, 1], [2, 3]]
    assert positions([0, 3], 2) == [0, 1, 6, 7]
    assert work_imbalance([136, 392]) == 2.8824 and work_imbalance([5, 5]) == 1.0
