"""equivariance worker (imports torch): the rotate-the-input test on an E(n)-equivariant GNN.

The model (Satorras et al. 2021, EGNN): messages from scalar features and squared distances
(invariant), coordinate updates along relative positions (equivariant). Heads: a scalar
(sum-pooled, must be invariant) and a vector per point (the coordinate displacement, must
rotate with the input), scaled by the RMS of the vector norms (norm-based normalisation).

The test: rotate (random proper rotation) and translate the input point clouds; compare the
scalar output with the original and the vector output with the original rotated. Layers that
break equivariance are run through the same test, to show it can fail: raw coordinates fed
into the scalar features, per-coordinate batch norm and per-vector LayerNorm over xyz.
All in float32 on CPU, so the errors do not depend on the machine's accelerator.
Rank 0 does the work; other ranks wait.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from trainer_lab.train.worker import WorkerContext

CLOUDS, POINTS, FEATURES, HIDDEN = 8, 16, 4, 32


class EGNNLayer(nn.Module):
    def __init__(self, features: int, raw_coords: bool) -> None:
        super().__init__()
        extra = 3 if raw_coords else 0
        self.raw_coords = raw_coords
        self.edge = nn.Sequential(nn.Linear(2 * (features + extra) + 1, HIDDEN), nn.SiLU())
        self.coord = nn.Linear(HIDDEN, 1)
        self.node = nn.Sequential(nn.Linear(features + HIDDEN, features), nn.SiLU())
        self.norm = nn.LayerNorm(features)  # LayerNorm on scalar channels only: invariant

    def forward(self, h: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # h [B, N, F], x [B, N, 3]
        n = h.shape[1]
        hin = torch.cat([h, x], -1) if self.raw_coords else h  # the bug: absolute positions
        diff = x[:, :, None, :] - x[:, None, :, :]  # [B, N, N, 3]
        dist2 = (diff**2).sum(-1, keepdim=True)
        pair = torch.cat(
            [hin[:, :, None].expand(-1, -1, n, -1), hin[:, None].expand(-1, n, -1, -1), dist2], -1
        )
        m = self.edge(pair)  # [B, N, N, H]
        x = x + (diff * self.coord(m)).mean(2)
        h = self.norm(h + self.node(torch.cat([h, m.sum(2)], -1)))
        return h, x


class EGNN(nn.Module):
    def __init__(self, raw_coords: bool = False, vector_norm: str = "rms") -> None:
        super().__init__()
        self.layers = nn.ModuleList([EGNNLayer(FEATURES, raw_coords) for _ in range(2)])
        self.readout = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.SiLU(), nn.Linear(HIDDEN, 1))
        self.vector_norm = vector_norm
        self.scale = nn.Parameter(torch.tensor([1.0, 1.3, 0.7]))  # per-axis affine (batch norm)

    def forward(self, h: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x0 = x
        for layer in self.layers:
            h, x = layer(h, x)
        scalar = self.readout(h).sum((1, 2))  # [B]
        v = x - x0  # [B, N, 3]
        if self.vector_norm == "rms":  # divide by the RMS of the vector norms: equivariant
            v = v / v.norm(dim=-1).pow(2).mean((1,), keepdim=True).sqrt()[..., None]
        elif self.vector_norm == "batchnorm":  # per-coordinate statistics over the batch
            flat = v.reshape(-1, 3)
            v = (v - flat.mean(0)) / (flat.std(0) + 1e-5) * self.scale
        elif self.vector_norm == "layernorm":  # LayerNorm over (x, y, z) of each vector
            v = nn.functional.layer_norm(v, (3,))
        return scalar, v


def random_rotation(gen: torch.Generator) -> torch.Tensor:
    q, r = torch.linalg.qr(torch.randn(3, 3, generator=gen, dtype=torch.float64))
    q = q * torch.sign(torch.diagonal(r))
    if torch.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q.float()


def rotate_test(
    model: nn.Module, h: torch.Tensor, x: torch.Tensor, rot: torch.Tensor, shift: torch.Tensor
) -> dict[str, float]:
    with torch.no_grad():
        s, v = model(h, x)
        s_moved, v_moved = model(h, x @ rot.T + shift)
    return {
        "invariant_err": float((s_moved - s).abs().max() / s.abs().max()),
        "equivariant_err": float((v_moved - v @ rot.T).abs().max() / v.abs().max()),
    }


def experiment(spec: dict[str, Any]) -> dict[str, Any]:
    sabotage = spec["sabotage"]
    gen = torch.Generator().manual_seed(spec["seed"])
    h = torch.randn(CLOUDS, POINTS, FEATURES, generator=gen)
    x = torch.randn(CLOUDS, POINTS, 3, generator=gen) * 2.0
    if sabotage == "identity_rotation":  # a test that cannot fail
        rot, shift = torch.eye(3), torch.zeros(3)
    else:
        rot, shift = random_rotation(gen), torch.randn(3, generator=gen) * 5.0
    configs = {
        "model": {
            "raw_coords": sabotage == "raw_coords",
            "vector_norm": "batchnorm" if sabotage == "coord_batchnorm" else "rms",
        },
        "raw_coords": {"raw_coords": True, "vector_norm": "rms"},
        "coord_batchnorm": {"raw_coords": False, "vector_norm": "batchnorm"},
        "coord_layernorm": {"raw_coords": False, "vector_norm": "layernorm"},
    }
    found: dict[str, Any] = {}
    for name, config in configs.items():
        torch.manual_seed(spec["seed"])
        model = EGNN(**config)
        found[name] = {**rotate_test(model, h, x, rot, shift), **config}
    return {
        "model": found.pop("model"),
        "references": found,
        "rotation_angle_deg": round(
            float(torch.rad2deg(torch.arccos(((torch.trace(rot) - 1) / 2).clamp(-1, 1)))), 2
        ),
        "translation_norm": round(float(shift.norm()), 4),
    }


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    if ctx.rank == 0:
        torch.set_num_threads(1)  # reductions then do not depend on the core count
        ctx.events().write("equivariance", **experiment(spec))
        ctx.log("equivariance done")
    if dist.is_initialized():
        dist.barrier()
