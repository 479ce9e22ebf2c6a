"""The biotech round's padding remap: an nn.Embedding reads every id outside the amino acids'
range as the launch's value, real ids unchanged; other modules and float inputs untouched."""

from __future__ import annotations

import torch

from trainer_lab.usercode.token_remap import remap_padding


def test_an_embedding_reads_every_id_outside_the_range_as_the_value():
    torch.manual_seed(0)
    embed = torch.nn.Embedding(24, 4)
    ids = torch.tensor([[3, 20, 0], [1, 22, 23]])
    before = embed(ids)
    handle = remap_padding(1, 21, 22)
    try:
        after = embed(ids)
        linear = torch.nn.Linear(3, 1)
        x = torch.tensor([[0.0, 30.0, -1.0]])
        assert torch.equal(linear(x), x @ linear.weight.T + linear.bias)  # floats untouched
    finally:
        handle.remove()
    real = ids.ge(1) & ids.lt(21)
    assert torch.equal(after[real], before[real])
    assert torch.equal(after[~real], embed.weight[22].expand(int((~real).sum()), 4))
    assert torch.equal(embed(ids), before)  # removed: read as written again


def test_each_read_with_gradients_reports_real_other_slots_and_rows():
    embed = torch.nn.Embedding(24, 4)
    seen: list[tuple[int, int, int, int]] = []
    handle = remap_padding(1, 21, 22, on_tokens=lambda *counts: seen.append(counts))
    try:
        embed(torch.tensor([[3, 20, 22, 22], [1, 0, 22, 23]]))  # 3 real, 0 and 23 literal ids
        embed(torch.tensor([5, 6, 22]))  # one packed row as a 1-D tensor
        with torch.no_grad():
            embed(torch.tensor([[1, 2]]))  # evaluation: not reported
    finally:
        handle.remove()
    assert seen == [(3, 2, 8, 2), (2, 0, 3, 1)]


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
