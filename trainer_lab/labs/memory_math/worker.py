"""memory-math worker (imports torch): bytes per parameter, measured tensor by tensor.

Setups (all AdamW):
- fp32: fp32 weights, fp32 grads, fp32 Adam moments.
- bf16_autocast: the same fp32 weights, grads and moments; autocast makes bf16 copies of the
  weights for the matmuls, which live only from forward until backward has used them (they are
  counted through saved-tensor hooks).
- bf16_pure: the model cast to bf16 (weights, grads and moments all bf16), for contrast.
Bytes are summed over distinct storages of the parameters, their .grad, and every tensor in
the optimizer state (Adam keeps exp_avg, exp_avg_sq and a scalar `step` tensor per parameter).
Rank 0 measures; other ranks wait.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import torch
import torch.distributed as dist

from trainer_lab.config import TrainConfig
from trainer_lab.train.data import SyntheticDataset
from trainer_lab.train.model import build_model, loss_fn
from trainer_lab.train.worker import WorkerContext


def storage_bytes(tensors: list[torch.Tensor]) -> int:
    seen: dict[int, int] = {}
    for t in tensors:
        storage = t.untyped_storage()
        seen[storage.data_ptr()] = storage.nbytes()
    return sum(seen.values())


def optimizer_tensors(optimizer: torch.optim.Optimizer) -> dict[str, list[torch.Tensor]]:
    by_key: dict[str, list[torch.Tensor]] = {}
    for state in optimizer.state.values():
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                by_key.setdefault(key, []).append(value)
    return by_key


def measure(
    cfg: TrainConfig, setup: str, optimizer_name: str, device: torch.device, sabotage: str = "none"
) -> dict[str, Any]:
    torch.manual_seed(cfg.seed)
    model = build_model(cfg).to(device)
    if setup == "bf16_pure" or (setup == "bf16_autocast" and sabotage == "cast_model"):
        model = model.to(torch.bfloat16)
    params = list(model.parameters())
    n = sum(p.numel() for p in params)
    if optimizer_name == "adamw":
        optimizer: torch.optim.Optimizer = torch.optim.AdamW(params, lr=1e-3)
    else:
        optimizer = torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    data = SyntheticDataset(cfg)
    x, y = data.x[:8].to(device), data.y[:8].to(device)
    if x.is_floating_point():
        x = x.to(params[0].dtype)  # a model cast to bf16 takes bf16 inputs
    param_ptrs = {p.untyped_storage().data_ptr() for p in params}
    # what autocast's bf16 copy of each parameter looks like, to recognise it among saved tensors
    low = {}
    if setup == "bf16_autocast":
        for p in params:
            low.setdefault(tuple(p.shape), []).append(p.detach().to(torch.bfloat16))
    casts: dict[int, int] = {}  # storage -> bytes of low-precision weight copies held for backward
    saved: dict[int, int] = {}

    def is_cast(t: torch.Tensor) -> bool:
        if t.dtype != torch.bfloat16:
            return False
        views = [t] + ([t.t()] if t.dim() == 2 else [])
        return any(torch.equal(v, c) for v in views for c in low.get(tuple(v.shape), []))

    def pack(t: torch.Tensor) -> torch.Tensor:
        ptr = t.untyped_storage().data_ptr()
        if ptr not in param_ptrs:
            saved[ptr] = t.untyped_storage().nbytes()
            if is_cast(t):
                casts[ptr] = t.untyped_storage().nbytes()
        return t

    autocast = (
        torch.autocast(device.type, dtype=torch.bfloat16)
        if setup == "bf16_autocast"
        else nullcontext()
    )
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), autocast:
        out = model(x)
        loss = loss_fn(cfg, out.float(), y)
    loss.backward()
    optimizer.step()
    state = optimizer_tensors(optimizer)
    weights = storage_bytes(params)
    grads = storage_bytes([p.grad for p in params if p.grad is not None])
    per_key = {k: storage_bytes(v) for k, v in state.items()}
    opt_total = sum(per_key.values())
    return {
        "params": n,
        "param_tensors": len(params),
        "weight_dtype": str(params[0].dtype).removeprefix("torch."),
        "grad_dtype": str(params[0].grad.dtype).removeprefix("torch."),
        "bytes": {"weights": weights, "grads": grads, "optimizer": opt_total},
        "optimizer_bytes_by_state": per_key,
        "bytes_per_param": {
            "weights": weights / n,
            "grads": grads / n,
            "optimizer": opt_total / n,
            "total": (weights + grads + opt_total) / n,
        },
        "transient_weight_copies_per_param": sum(casts.values()) / n,
        "saved_activation_bytes": sum(saved.values()),
        "cuda_allocated": torch.cuda.memory_allocated(device) if device.type == "cuda" else None,
    }


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    if ctx.rank == 0:
        cfg = TrainConfig.from_dict(spec["config"])
        for setup in ("fp32", "bf16_autocast", "bf16_pure"):
            result = measure(cfg, setup, spec["optimizer"], ctx.device, spec["sabotage"])
            ctx.events().write("memory", setup=setup, **result)
        ctx.log("memory-math done")
    if dist.is_initialized():
        dist.barrier()
