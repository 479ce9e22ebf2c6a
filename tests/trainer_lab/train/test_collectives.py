"""The labs' shared collectives, in a one-rank gloo group: the flattened average writes each
gradient back in place (divided by the world size given), parameters without one are left out;
a dict of numbers comes back as given (W=1) or unchanged without a group."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.distributed as dist

from trainer_lab.train.collectives import average_gradients, reduce_numbers


def test_average_and_reduce_in_a_one_rank_group(tmp_path: Path) -> None:
    assert reduce_numbers({"b": 2.0, "a": 1.0}, None, "cpu") == {"a": 1.0, "b": 2.0}
    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        a = torch.nn.Parameter(torch.zeros(2, 3))
        b = torch.nn.Parameter(torch.zeros(4))
        unused = torch.nn.Parameter(torch.zeros(1))
        a.grad, b.grad = torch.arange(6.0).view(2, 3), torch.full((4,), 8.0)
        average_gradients([a, unused, b], world=4)  # the sum over one rank, / 4
        assert torch.equal(a.grad, torch.arange(6.0).view(2, 3) / 4)
        assert torch.equal(b.grad, torch.full((4,), 2.0)) and unused.grad is None
        got = reduce_numbers({"x": 1.5, "y": -2.0}, dist.ReduceOp.MAX, "cpu")
        assert got == {"x": 1.5, "y": -2.0}
    finally:
        dist.destroy_process_group()
