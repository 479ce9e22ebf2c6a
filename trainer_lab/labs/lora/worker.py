"""lora worker (imports torch): LoRA written with torch.nn.utils.parametrize, against full
fine-tuning of the same model.

Every nn.Linear weight W gets a parametrization W + (alpha / r) * B @ A: A [r, in] random,
B [out, r] zero, the original W and the bias frozen. Measured, not computed: trainable
parameters, gradient bytes after backward, optimizer-state bytes after a step (Adam keeps
exp_avg, exp_avg_sq and a step scalar per trainable tensor), median step time, the output at
step 0 against the base model, the base weights after training, and the merged model
(parametrization removed, W + (alpha / r) * B @ A baked in) against the adapted one.
All on CPU in float32. Rank 0 does the work; other ranks wait.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.utils import parametrize

from trainer_lab.train.worker import WorkerContext

D_IN, HIDDEN, DEPTH, D_OUT, BATCH = 64, 512, 4, 10, 128


class LoRA(nn.Module):
    def __init__(self, out_f: int, in_f: int, rank: int, alpha: float, random_b: bool) -> None:
        super().__init__()
        self.A = nn.Parameter(torch.randn(rank, in_f) / in_f**0.5)
        self.B = nn.Parameter(
            torch.randn(out_f, rank) * 0.1 if random_b else torch.zeros(out_f, rank)
        )
        self.scale = alpha / rank

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        return weight + self.scale * (self.B @ self.A)


def base_model(seed: int) -> nn.Sequential:
    torch.manual_seed(seed)
    layers: list[nn.Module] = [nn.Linear(D_IN, HIDDEN), nn.GELU()]
    for _ in range(DEPTH - 2):
        layers += [nn.Linear(HIDDEN, HIDDEN), nn.GELU()]
    layers.append(nn.Linear(HIDDEN, D_OUT))
    return nn.Sequential(*layers)


def add_lora(model: nn.Module, rank: int, alpha: float, sabotage: str) -> None:
    for module in model.modules():
        if isinstance(module, nn.Linear):
            out_f, in_f = module.weight.shape
            lora = LoRA(out_f, in_f, rank, alpha, sabotage == "random_b_init")
            parametrize.register_parametrization(module, "weight", lora)
            if sabotage != "unfrozen_base":
                module.parametrizations.weight.original.requires_grad_(False)
                module.bias.requires_grad_(False)


def merge(model: nn.Module, sabotage: str) -> None:
    """In place (a deepcopy of a parametrized module shares its generated class, and removing
    the parametrization from the copy would break the original)."""
    for module in model.modules():
        if isinstance(module, nn.Linear) and parametrize.is_parametrized(module, "weight"):
            if sabotage == "merge_unscaled":  # forgets alpha / r
                lora = module.parametrizations.weight[0]
                w = module.parametrizations.weight.original + lora.B @ lora.A
                parametrize.remove_parametrizations(module, "weight", leave_parametrized=False)
                module.weight = nn.Parameter(w.detach())
            else:
                parametrize.remove_parametrizations(module, "weight", leave_parametrized=True)


def tensor_bytes(tensors: list[torch.Tensor]) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def task(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed + 100)
    x = torch.randn(1024, D_IN, generator=gen)
    y = (x @ torch.randn(D_IN, D_OUT, generator=gen)).argmax(-1)
    return x, y


def finetune(model: nn.Module, lr: float, spec: dict[str, Any]) -> dict[str, Any]:
    x, y = task(spec["seed"])
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(trainable, lr=lr)
    times, losses, grad_bytes = [], [], 0
    for step in range(spec["steps"]):
        i = (step * BATCH) % len(x)
        start = time.perf_counter()
        loss = nn.functional.cross_entropy(model(x[i : i + BATCH]), y[i : i + BATCH])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if step == 0:
            grad_bytes = tensor_bytes([p.grad for p in model.parameters() if p.grad is not None])
        optimizer.step()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
    state = [v for s in optimizer.state.values() for v in s.values() if torch.is_tensor(v)]
    with torch.no_grad():
        accuracy = float((model(x).argmax(-1) == y).float().mean())
    return {
        "params": sum(p.numel() for p in model.parameters()),
        "trainable_params": sum(p.numel() for p in trainable),
        "trainable_tensors": len(trainable),
        "grad_bytes": grad_bytes,
        "optimizer_state_bytes": tensor_bytes(state),
        "step_seconds": round(statistics.median(times[2:] or times), 6),
        "first_loss": round(losses[0], 4),
        "final_loss": round(losses[-1], 4),
        "train_accuracy": round(accuracy, 4),
    }


def experiment(spec: dict[str, Any]) -> dict[str, Any]:
    sabotage, rank, alpha = spec["sabotage"], spec["rank"], spec["alpha"]
    probe = task(spec["seed"] + 1)[0][:256]
    full = finetune(base_model(spec["seed"]), spec["full_lr"], spec)
    base = base_model(spec["seed"])
    initial = {k: v.clone() for k, v in base.state_dict().items()}
    with torch.no_grad():
        base_out = base(probe)
    model = base_model(spec["seed"])
    add_lora(model, rank, alpha, sabotage)
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    formula = sum(rank * sum(m.parametrizations.weight.original.shape) for m in linears)
    with torch.no_grad():
        zero_init_diff = float((model(probe) - base_out).abs().max())
    lora = finetune(model, spec["lora_lr"], spec)
    changed = 0
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear):
            w = module.parametrizations.weight.original
            changed += int((w != initial[f"{name}.weight"]).sum())
            changed += int((module.bias != initial[f"{name}.bias"]).sum())
    with torch.no_grad():
        adapted_out = model(probe)
    merge(model, sabotage)
    with torch.no_grad():
        merged_out = model(probe)
    return {
        "full": full,
        "lora": lora,
        "adapter_rank": rank,
        "alpha": alpha,
        "adapter_params_formula": formula,
        "adapted_linears": len(linears),
        "zero_init_max_abs_diff": zero_init_diff,
        "base_changed_elements": changed,
        "merged_max_abs_diff": float((merged_out - adapted_out).abs().max()),
        "merged_rel_diff": float((merged_out - adapted_out).abs().max() / adapted_out.abs().max()),
        "adapted_vs_base_max_abs_diff": float((adapted_out - base_out).abs().max()),
        "merged_is_plain": not any(parametrize.is_parametrized(m) for m in model.modules()),
    }


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    if ctx.rank == 0:
        torch.set_num_threads(1)  # reductions and step times then do not depend on core count
        ctx.events().write("lora", **experiment(spec))
        ctx.log("lora done")
    if dist.is_initialized():
        dist.barrier()
