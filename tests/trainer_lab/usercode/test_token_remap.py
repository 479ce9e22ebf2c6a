"""The biotech round's padding remap: the token embedding (an nn.Embedding of the vocabulary's
size) reads every id outside the amino acids' range as the launch's decoy (never its PAD_ID),
real ids unchanged; a position embedding, other modules and float inputs untouched."""

from __future__ import annotations

import torch

from trainer_lab.usercode.token_remap import remap_padding


def test_an_embedding_reads_every_id_outside_the_range_as_the_value():
    torch.manual_seed(0)
    embed = torch.nn.Embedding(24, 4)
    ids = torch.tensor([[3, 20, 0], [1, 22, 23]])
    before = embed(ids)
    positions = torch.nn.Embedding(40, 4)  # learned positions 0..39: not the token embedding
    where = torch.arange(3).unsqueeze(0)
    at_positions = positions(where)
    handle = remap_padding(1, 21, 22, 23, 24)
    try:
        after = embed(ids)
        assert torch.equal(positions(where), at_positions)  # ids 0 and 21+ read as written
        linear = torch.nn.Linear(3, 1)
        x = torch.tensor([[0.0, 30.0, -1.0]])
        assert torch.equal(linear(x), x @ linear.weight.T + linear.bias)  # floats untouched
    finally:
        handle.remove()
    real = ids.ge(1) & ids.lt(21)
    assert torch.equal(after[real], before[real])
    assert torch.equal(after[~real], embed.weight[23].expand(int((~real).sum()), 4))  # the decoy
    assert torch.equal(embed(ids), before)  # removed: read as written again


def test_a_padding_idx_row_of_zeros_cannot_hide_the_padding():
    """padding_idx=PAD_ID keeps that row at zero; the padding is read as the decoy's row."""
    embed = torch.nn.Embedding(24, 4, padding_idx=22)
    handle = remap_padding(1, 21, 22, 0, 24)
    try:
        padded = embed(torch.tensor([5, 22]))
    finally:
        handle.remove()
    assert torch.equal(padded[1], embed.weight[0]) and bool(padded[1].abs().sum() > 0)


def test_each_read_reports_real_other_slots_rows_and_gradients():
    embed = torch.nn.Embedding(24, 4)
    seen: list[tuple[int, int, int, int, bool]] = []
    handle = remap_padding(1, 21, 22, 23, 24, on_tokens=lambda *counts: seen.append(counts))
    try:
        embed(torch.tensor([[3, 20, 22, 22], [1, 0, 22, 23]]))  # 3 real, 0 and 23 literal ids
        embed(torch.tensor([5, 6, 22]))  # one packed row as a 1-D tensor
        with torch.no_grad():
            embed(torch.tensor([[1, 2]]))  # evaluation: reported with gradients off
        torch.nn.Embedding(40, 4)(torch.tensor([0, 1, 30]))  # positions: not reported
    finally:
        handle.remove()
    assert seen == [(3, 2, 8, 2, True), (2, 0, 3, 1, True), (2, 0, 2, 1, False)]


def test_every_backward_from_a_scalar_reports_its_value_once():
    from trainer_lab.usercode import token_remap

    original = torch.autograd.backward
    seen: list[float] = []
    try:
        token_remap.record_backward_losses(seen.append)
        w = torch.ones(3, requires_grad=True)
        (w * 2).sum().backward()  # Tensor.backward goes through torch.autograd.backward
        torch.autograd.backward(w.square().sum() / 4)
        (w * 3).backward(torch.ones(3))  # not from a scalar: not a loss
    finally:
        torch.autograd.backward = original
    assert seen == [6.0, 0.75]
    assert torch.equal(w.grad, torch.full((3,), 2.0 + 0.5 + 3.0))
