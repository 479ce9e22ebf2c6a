"""mfu-ladder worker (imports torch): one GPT, trained rung by rung, tokens/s and MFU per rung.

Rank 0 measures; other ranks wait. Events (rank 0):
- `flop_count`: torch.utils.flop_counter.FlopCounterMode over one forward + backward of one
  sequence: the math-attention model (mm = dense, bmm = attention), the SDPA model (whose
  CPU kernel the counter does not see) and the math model with activation checkpointing.
- `peak`: the peak FLOP/s MFU is measured against.
- `rung` (one per rung): step times of every step (warm-up included, flagged), batch, the
  first step's logits against the fp32 rung's (same weights, same tokens), or why it was
  skipped.
On CPU all rungs are built first and their steps interleave (rung 1 step 1, rung 2 step 1, ...)
so a load burst from another process hits every rung alike; on a GPU they run one after the
other and each frees its memory before the next is built.
"""

from __future__ import annotations

import gc
import os
import time
from dataclasses import replace
from typing import Any

import torch
import torch.distributed as dist
from torch.nn import functional as F
from torch.utils.flop_counter import FlopCounterMode

from trainer_lab.config import TrainConfig
from trainer_lab.labs.mfu_ladder.model import LadderGPT
from trainer_lab.labs.mfu_ladder.rungs import RUNGS, Rung
from trainer_lab.labs.throughput_mfu.worker import datasheet_peak, matmul_peak
from trainer_lab.train.worker import WorkerContext


def count_flops(model: LadderGPT, tokens: torch.Tensor) -> dict[str, float]:
    """FLOPs per token the counter sees in one forward + backward, by op."""
    with FlopCounterMode(display=False) as counter:
        logits = model(tokens)
        F.cross_entropy(logits.flatten(0, 1), tokens.flatten()).backward()
    n = tokens.numel()
    return {str(op): count / n for op, count in counter.get_flop_counts()["Global"].items()}


def counter_report(cfg: TrainConfig, device: torch.device, sabotage: str) -> dict[str, Any]:
    tokens = torch.randint(cfg.vocab, (1, cfg.seq_len), device=device)
    report: dict[str, Any] = {}
    for label, attention, checkpointing in (
        ("math", "math", False),
        ("sdpa", "sdpa", False),
        ("math_checkpointing", "math", sabotage != "no_checkpointing"),
    ):
        torch.manual_seed(cfg.seed)
        model = LadderGPT(cfg, attention, checkpointing).to(device)
        report[label] = count_flops(model, tokens)
        report["matmul_params"] = model.matmul_params()
        report["params"] = sum(p.numel() for p in model.parameters())
        del model
    return report


def peak_flops(device: torch.device, sabotage: str) -> tuple[float, str]:
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        known = datasheet_peak(name)
        if known:
            return known, f"datasheet dense bf16 ({name})"
        return matmul_peak(device, torch.bfloat16, (8192,)), f"measured bf16 matmul ({name})"
    sizes = (4,) if sabotage == "tiny_peak" else (256, 512, 1024)
    fp32 = matmul_peak(device, torch.float32, sizes)
    bf16 = matmul_peak(device, torch.bfloat16, sizes)
    best = "bf16" if bf16 > fp32 else "fp32"
    return max(fp32, bf16), (
        f"measured matmul, best of fp32 {fp32 / 1e9:.1f} and bf16 {bf16 / 1e9:.1f} GFLOP/s "
        f"({best}), sizes {list(sizes)}, {torch.get_num_threads()} thread(s)"
    )


class RungRun:
    """One rung's model, optimizer and batch; `step()` trains one timed step."""

    def __init__(
        self,
        rung: Rung,
        cfg: TrainConfig,
        device: torch.device,
        data: torch.Tensor,
        batch: int,
        sabotage: str = "none",
    ) -> None:
        self.rung, self.device, self.batch = rung, device, batch
        self.x, self.y = data[:batch, :-1], data[:batch, 1:]
        torch.manual_seed(cfg.seed)  # every rung starts from the same weights
        causal = not (rung.attention == "sdpa" and sabotage == "sdpa_not_causal")
        checkpointing = rung.checkpointing and sabotage != "no_checkpointing"
        self.model = LadderGPT(cfg, rung.attention, checkpointing, causal).to(device)
        self.optimizer = torch.optim.AdamW(
            self.model.parameters(), lr=3e-4, fused=True if rung.fused_adamw else None
        )
        self.step_model = torch.compile(self.model) if rung.compiled else self.model
        self.times: list[float] = []
        self.first_logits: torch.Tensor | None = None
        self.losses: list[float] = []

    def _sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def step(self) -> None:
        self._sync()
        start = time.perf_counter()
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.rung.bf16):
            logits = self.step_model(self.x)
            loss = F.cross_entropy(logits.flatten(0, 1), self.y.flatten())
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self._sync()
        self.times.append(time.perf_counter() - start)
        if self.first_logits is None:  # before any update: the same function on every rung
            self.first_logits = logits[0].detach().float()
        self.losses.append(loss.item())


def relative_diff(a: torch.Tensor | None, reference: torch.Tensor | None) -> float | None:
    if a is None or reference is None:
        return None
    return float((a - reference).norm() / reference.norm())


def build(
    rung: Rung, cfg: TrainConfig, device: torch.device, data: torch.Tensor, spec: dict[str, Any]
) -> RungRun:
    """The rung's run; on a GPU an out-of-memory large batch retries at half the factor."""
    factor = spec["big_batch_factor"] if rung.large_batch else 1
    while True:
        run = RungRun(rung, cfg, device, data, spec["batch"] * factor, spec["sabotage"])
        if device.type != "cuda" or factor == 1:
            return run
        try:  # the first step allocates the activations: that is where the OOM shows
            run.step()
            return run
        except torch.cuda.OutOfMemoryError:
            pass  # free outside the handler: the traceback holds the step's tensors
        del run
        gc.collect()
        torch.cuda.empty_cache()
        spec.setdefault("oom_batches", []).append(spec["batch"] * factor)
        factor //= 2


def plan(device: torch.device, spec: dict[str, Any]) -> list[tuple[Rung, str | None]]:
    """The rungs to run, each with the reason it is skipped (None: run it)."""
    if device.type == "cuda" or spec["cpu_compile"]:
        return [(rung, None) for rung in RUNGS]
    reason = (
        "torch.compile on CPU: inductor took minutes to compile this model's training step on "
        "the 2-core dev box (113 s for a 4-layer model under load), far past this lab's "
        "budget; cpu_compile=true measures it. The rungs after it run eager."
    )
    return [
        (rung, reason) if rung.name == "compile" else (replace(rung, compiled=False), None)
        for rung in RUNGS
    ]


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    if ctx.rank == 0:
        run_ladder(ctx, spec)
    if dist.is_initialized():
        dist.barrier()


def run_ladder(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    device = ctx.device
    on_gpu = device.type == "cuda"
    spec = dict(spec)
    shape = spec["gpu" if on_gpu else "cpu"]
    cfg = TrainConfig.from_dict(shape["config"])
    spec.update(batch=shape["batch"], big_batch_factor=shape["big_batch_factor"])
    events = ctx.events()
    warmup = 0 if spec["sabotage"] == "no_warmup" else spec["warmup_steps"]
    steps = warmup + spec["timed_steps"]

    counted = counter_report(cfg, device, spec["sabotage"])
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    events.write("flop_count", device=str(device), cuda_visible_devices=visible, **counted)
    peak, peak_source = peak_flops(device, spec["sabotage"])
    events.write("peak", peak_flops=peak, peak_source=peak_source)

    torch.manual_seed(cfg.seed + 1)
    rows = spec["batch"] * spec["big_batch_factor"]
    data = torch.randint(cfg.vocab, (rows, cfg.seq_len + 1), device=device)
    rungs = plan(device, spec)
    reference: torch.Tensor | None = None

    def report(run: RungRun) -> None:
        nonlocal reference
        if reference is None:
            reference = run.first_logits
        events.write(
            "rung",
            name=run.rung.name,
            change=run.rung.change,
            compiled=run.rung.compiled,
            batch=run.batch,
            seq_len=cfg.seq_len,
            warmup=warmup,
            step_times_s=run.times,
            losses=run.losses,
            logits_rel_diff=relative_diff(run.first_logits, reference),
            dtype="bfloat16 autocast" if run.rung.bf16 else "float32",
            oom_batches=spec.get("oom_batches", []) if run.rung.large_batch else [],
        )

    for rung, reason in rungs:
        if reason:
            events.write("rung", name=rung.name, change=rung.change, skipped=reason)
    active = [rung for rung, reason in rungs if not reason]
    if on_gpu:  # one at a time: a 2-billion-parameter model and its Adam state fill the GPU
        for rung in active:
            run = build(rung, cfg, device, data, spec)
            while len(run.times) < steps:
                run.step()
            report(run)
            del run
            gc.collect()
            torch.cuda.empty_cache()
    else:
        runs = [build(rung, cfg, device, data, spec) for rung in active]
        for _ in range(steps):
            for run in runs:
                run.step()
        for run in runs:
            report(run)
    ctx.log("mfu-ladder done")
