"""fsdp worker (imports torch). For each world size w in spec["sizes"], ranks 0..w-1 form a
group and train the same MLP three ways on the same global batches: DDP (fp32), FSDP2
fully_shard (fp32) and FSDP2 with bf16 compute (MixedPrecisionPolicy); the other ranks wait.
After the last optimizer step (gradients still held) every rank measures the bytes of the
parameters, gradients and optimizer state it holds: the storages behind its (local) tensors,
each counted once, padding included.

`wrap` "root" applies fully_shard to the root only (one group: every parameter gathered at
once, nothing to overlap); each FSDP run records the most gathered parameter bytes alive at once
during forward.

Debug switches: `replicate` builds FSDP on a 2-D HSDP mesh of w replicas x 1 shard (a full
replica per rank); `master_copy` makes the bf16 run step an fp32 master copy of its shards
that the optimizer owns (the bytes count as optimizer state)."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import FSDPModule, MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor import DTensor
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import Dataset

from trainer_lab.config import TrainConfig
from trainer_lab.train.data import build_loader
from trainer_lab.train.model import build_model, loss_fn, param_count
from trainer_lab.train.spec import Placement, TrainSpec, build_adamw, build_constant_lr
from trainer_lab.train.trainer import Trainer
from trainer_lab.train.worker import WorkerContext


def _local(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.to_local() if isinstance(tensor, DTensor) else tensor


def held_bytes(tensors: list[torch.Tensor]) -> int:
    """Bytes of the distinct storages behind these tensors on this rank."""
    seen: dict[int, int] = {}
    for tensor in tensors:
        storage = _local(tensor).untyped_storage()
        seen[storage.data_ptr()] = storage.nbytes()
    return sum(seen.values())


def _storage_ptr(tensor: torch.Tensor) -> int:
    return _local(tensor).untyped_storage().data_ptr()


def measure(model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, int]:
    params = list(model.parameters())
    grads = [p.grad for p in params if p.grad is not None]
    states = [v for state in optimizer.state.values() for v in state.values() if torch.is_tensor(v)]
    # Tensors the optimizer steps that are not the model's own (a master copy) are its state too.
    model_storages = {_storage_ptr(p) for p in params}
    owned = [
        t
        for group in optimizer.param_groups
        for t in group["params"]
        if _storage_ptr(t) not in model_storages
    ]
    sizes = {
        "params": held_bytes(params),
        "grads": held_bytes(grads),
        "optimizer": held_bytes(states + owned),
    }
    sizes["total"] = sum(sizes.values())
    sizes["param_elements"] = sum(_local(p).numel() for p in params)
    return sizes


def wrap(
    model: nn.Module,
    mode: str,
    group: Any,
    device: torch.device,
    sum_grads: bool,
    single: Any = None,
    root_only: bool = False,
) -> nn.Module:
    """The parallelize step: DDP on the group, or fully_shard per layer (then the root).
    `single`: this rank's one-rank group; when given, FSDP gets a 2-D HSDP mesh of w
    replicas x 1 shard (debug: nothing is sharded, every rank holds a full replica)."""
    if mode == "ddp":
        ids = [device.index] if device.type == "cuda" else None
        return DDP(model, device_ids=ids, process_group=group)
    if single is None:
        mesh = DeviceMesh.from_group(group, device.type)
    else:
        w = dist.get_world_size(group)
        mesh = DeviceMesh.from_group(
            [group, single],
            device.type,
            mesh=torch.arange(w).reshape(w, 1),
            mesh_dim_names=("replicate", "shard"),
        )
    policy = (
        MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        if mode == "fsdp_mp"
        else MixedPrecisionPolicy()
    )
    if not root_only:  # one group per layer: gathered (and freed) one layer at a time
        for layer in model.modules():
            if isinstance(layer, nn.Linear):
                fully_shard(layer, mesh=mesh, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)
    if sum_grads:  # debug: sum instead of average across ranks (the shape of the gloo bug)
        for module in model.modules():  # each fully_shard-ed module reduces its own params
            if isinstance(module, FSDPModule):
                module.set_gradient_divide_factor(1.0)
                module.set_force_sum_reduction_for_comms(True)  # gloo has no PREMUL_SUM
    return model


def track_gathered(model: nn.Module) -> list[int]:
    """[peak]: the most bytes of unsharded (all-gathered) parameters alive at once, read before
    each layer's forward (FSDP2 swaps a gathered group's parameters in as plain tensors)."""
    peak = [0]

    def before_forward(_module: nn.Module, _args: Any) -> None:
        gathered = sum(
            p.numel() * p.element_size() for p in model.parameters() if not isinstance(p, DTensor)
        )
        peak[0] = max(peak[0], gathered)

    for layer in model.modules():
        if isinstance(layer, nn.Linear):
            layer.register_forward_pre_hook(before_forward)  # after FSDP's own (prepended) hook
    return peak


def full_grad_norm(model: nn.Module) -> float:
    """L2 norm of the whole (unsharded) gradient; for FSDP an all-gather within the group."""
    total = torch.zeros((), dtype=torch.float64)
    for p in model.parameters():
        if p.grad is None:
            continue
        grad = p.grad.full_tensor() if isinstance(p.grad, DTensor) else p.grad
        total += grad.detach().double().pow(2).sum().cpu()
    return total.sqrt().item()


class FixedBatches(Dataset):
    """`steps` global batches of the lab's own data, in order: with an unshuffled sampler, step k
    of every mode trains on global batch k, rank r on its r-th contiguous block of rows (the
    unshuffled sampler deals items round-robin, so the rows are stored dealt that way)."""

    def __init__(self, cfg: TrainConfig, steps: int, world_size: int) -> None:
        gen = torch.Generator().manual_seed(cfg.seed + 1)
        per_rank = cfg.global_batch // world_size
        xs = [
            torch.randn(cfg.global_batch, cfg.d_in, generator=gen)
            .reshape(world_size, per_rank, cfg.d_in)
            .transpose(0, 1)  # item j * world_size + r = row r * per_rank + j
            .reshape(cfg.global_batch, cfg.d_in)
            for _ in range(steps)
        ]
        self.x = torch.cat(xs)
        self.y = torch.tanh(self.x[:, : cfg.d_out] * 2)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, index: int) -> tuple[int, torch.Tensor, torch.Tensor]:
        return index, self.x[index], self.y[index]


class MasterCopyAdamW(torch.optim.AdamW):
    """Debug master_copy: AdamW over its own fp32 copy of the weights, copied back into the
    model's parameters after each step (hand-rolled mixed precision on top of FSDP's fp32
    shards); the copy is optimizer-owned memory."""

    def __init__(self, model: nn.Module, cfg: TrainConfig) -> None:
        self.model_params = list(model.parameters())
        masters = [p.detach().clone() for p in self.model_params]
        super().__init__(masters, lr=cfg.lr, weight_decay=cfg.weight_decay)

    def _pairs(self) -> Any:
        return zip(self.param_groups[0]["params"], self.model_params, strict=True)

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        for master, p in self._pairs():
            master.grad = p.grad
        loss = super().step(closure)
        for master, p in self._pairs():
            p.copy_(master)
        return loss

    def zero_grad(self, set_to_none: bool = True) -> None:
        super().zero_grad(set_to_none)
        for p in self.model_params:
            p.grad = None


def train_spec(
    mode: str,
    group: Any,
    spec: dict[str, Any],
    single: Any,
    steps: int,
    watch: dict[str, Any],
) -> TrainSpec:
    """The reference trainer with this mode's parallelism, the lab's data and two probes:
    the full gradient norm before each step, the bytes held after it (the last one is kept)."""

    def parallelize(model: nn.Module, where: Placement) -> nn.Module:
        root_only = spec.get("wrap") == "root"
        built = wrap(model, mode, group, where.device, spec["sum_grads"], single, root_only)
        watch["peak_gathered"] = track_gathered(built)
        return built

    def on_grads(trainer: Trainer) -> None:
        watch["grad_norm"] = full_grad_norm(trainer.module)

    def after_optimizer(trainer: Trainer) -> None:
        watch["memory"] = measure(trainer.module, trainer.optimizer)

    def loader(cfg: TrainConfig, world_size: int, rank: int) -> tuple[Any, Any]:
        in_order = cfg.with_(shuffle=False)
        data = FixedBatches(cfg, steps, world_size)
        return build_loader(in_order, world_size, rank, dataset=data)

    master_copy = mode == "fsdp_mp" and spec.get("master_copy")
    return TrainSpec(
        parallelize=parallelize,
        build_optimizer=MasterCopyAdamW if master_copy else build_adamw,
        build_scheduler=build_constant_lr,
        build_loader=loader,
        loss=lambda cfg, out, y: loss_fn(cfg, out.float(), y),  # bf16 compute, fp32 loss
        on_grads=on_grads,
        after_optimizer=after_optimizer,
    )


def train(
    ctx: WorkerContext,
    cfg: TrainConfig,
    mode: str,
    w: int,
    group: Any,
    spec: dict[str, Any],
    single: Any = None,
) -> None:
    steps = int(spec["steps"])
    watch: dict[str, Any] = {}
    events = ctx.events()
    plan = train_spec(mode, group, spec, single, steps, watch)
    trainer = Trainer(
        cfg.with_(steps=steps),
        ctx.device,
        events,
        run_label=f"{mode}-w{w}",
        rank=ctx.rank,
        world_size=w,
        spec=plan,
    )
    for _ in range(steps):
        record = trainer.train_step()
        loss, step = record["loss"], record["step"]
        events.write("loss", mode=mode, w=w, step=step, loss=loss, grad_norm=watch["grad_norm"])
    peak = watch["peak_gathered"][0]
    events.write("memory", mode=mode, w=w, peak_gathered=peak, **watch["memory"])


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    cfg = TrainConfig.from_dict(spec["config"])
    if ctx.rank == 0:
        built = build_model(cfg)
        ctx.events().write("model", n_params=param_count(built))
    single = None
    if spec.get("replicate"):
        for rank in range(ctx.world_size):  # every rank takes part in creating each group
            own = dist.new_group([rank])
            single = own if rank == ctx.rank else single
    for w in spec["sizes"]:
        group = dist.new_group(list(range(w)))  # every rank takes part in creating it
        if ctx.rank < w:
            for mode in ("ddp", "fsdp", "fsdp_mp"):
                train(ctx, cfg, mode, w, group, spec, single)
        dist.barrier()
