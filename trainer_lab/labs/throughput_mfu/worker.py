"""throughput-mfu worker (imports torch): tokens/s and model FLOPs utilisation.

FLOPs per token (nanoGPT's estimate_mfu, PaLM appendix B): 6N + 12*L*H*Q*T, where N counts
the parameters that take part in matmuls (embedding lookups do no FLOPs), L layers, H heads,
Q head size, T sequence length. The first term is forward (2N) + backward (4N) of the dense
layers; the second is the attention score and value matmuls over the full T x T (a causal
kernel skips half of them, so this counts the work of the non-causal shape).

- CPU: the trainer's tiny GPT (model="gpt"), fp32, against a peak MEASURED by a matmul
  micro-benchmark in this process (torchrun sets OMP_NUM_THREADS=1, so it is a one-thread
  peak). A FLOP counter cross-checks the 6N term.
- CUDA: a GPT of the same shape written for speed (fused QKV, scaled_dot_product_attention
  with is_causal=True so the flash kernel runs), bf16 autocast, torch.compile, fused AdamW,
  against the device's dense bf16 peak from its datasheet (by name; unknown devices fall back
  to a measured bf16 matmul peak, and the result says which).
The timed steps are the reference trainer's (this lab's model, compile, optimizer, autocast and
random-token data plugged in through a TrainSpec); a step's time is its forward, backward,
gradient-sync and optimizer phases (the data phases are left out: the batch is ready).
Rank 0 measures; other ranks wait.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F
from torch.utils.data import Dataset
from torch.utils.flop_counter import FlopCounterMode

from trainer_lab.config import TrainConfig
from trainer_lab.train.data import build_loader
from trainer_lab.train.model import build_model, loss_fn
from trainer_lab.train.spec import TrainSpec
from trainer_lab.train.trainer import Trainer
from trainer_lab.train.worker import WorkerContext

# Dense (no sparsity) bf16 tensor-core peaks from NVIDIA datasheets, FLOP/s; the first name
# found in torch.cuda.get_device_name() wins, so the PCIe variant comes before the SXM one.
DENSE_BF16_PEAK = (
    ("H100 PCIe", 756e12),
    ("H200", 989e12),
    ("H100", 989e12),
    ("H800", 989e12),
    ("A100", 312e12),
    ("L40S", 362e12),
)


def datasheet_peak(device_name: str) -> float | None:
    """Dense bf16 peak FLOP/s of a known device name, else None."""
    return next((peak for key, peak in DENSE_BF16_PEAK if key in device_name), None)


ATTENTION_OPS = ("bmm", "scaled_dot_product", "flash", "efficient_attention", "cudnn_attention")


def matmul_peak(device: torch.device, dtype: torch.dtype, sizes: tuple[int, ...]) -> float:
    """Best median FLOP/s of square matmuls of the given sizes."""
    best = 0.0
    for n in sizes:
        a = torch.randn(n, n, device=device, dtype=dtype)
        b = torch.randn(n, n, device=device, dtype=dtype)
        reps = 5 if device.type == "cuda" else 8
        times = []
        for _ in range(reps + 2):
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            start = time.perf_counter()
            for _ in range(10 if device.type == "cuda" else 1):
                a @ b
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            times.append((time.perf_counter() - start) / (10 if device.type == "cuda" else 1))
        best = max(best, 2 * n**3 / statistics.median(times[2:]))
    return best


class FusedBlock(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class FusedGPT(nn.Module):
    """The tiny GPT's architecture (pre-LN blocks, 4x GELU MLP, untied head), fast kernels."""

    def __init__(self, cfg: TrainConfig) -> None:
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab, cfg.d_model)
        self.pos = nn.Embedding(cfg.seq_len, cfg.d_model)
        self.blocks = nn.ModuleList(FusedBlock(cfg.d_model, cfg.n_head) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def flops_per_token(cfg: TrainConfig, matmul_params: int, sabotage: str) -> dict[str, int]:
    q = cfg.d_model // cfg.n_head
    dense = (2 if sabotage == "forget_backward" else 6) * matmul_params
    attention = (
        0 if sabotage == "no_attention_term" else 12 * cfg.n_layer * cfg.n_head * q * cfg.seq_len
    )
    return {"dense": dense, "attention": attention, "total": dense + attention}


class RandomTokens(Dataset):
    """`n` sequences of uniformly random tokens (inputs and targets): throughput does not care
    what is learnt, and a vocabulary of 32k makes the trainer's Markov-chain data too costly."""

    def __init__(self, cfg: TrainConfig, n: int) -> None:
        gen = torch.Generator().manual_seed(cfg.seed)
        self.x = torch.randint(cfg.vocab, (n, cfg.seq_len), generator=gen)
        self.y = torch.randint(cfg.vocab, (n, cfg.seq_len), generator=gen)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, index: int) -> tuple[int, torch.Tensor, torch.Tensor]:
        return index, self.x[index], self.y[index]


def train_spec(on_gpu: bool, data: RandomTokens) -> TrainSpec:
    """CPU: the trainer's tiny GPT, fp32, eager. CUDA: the fused GPT, compiled, bf16 autocast,
    fused AdamW."""
    return TrainSpec(
        build_model=FusedGPT if on_gpu else build_model,
        parallelize=(lambda model, _where: torch.compile(model)) if on_gpu else None,
        build_optimizer=lambda model, _cfg: torch.optim.AdamW(
            model.parameters(), lr=3e-4, fused=on_gpu
        ),
        build_loader=lambda cfg, world_size, rank: build_loader(
            cfg, world_size, rank, dataset=data
        ),
        autocast=torch.bfloat16 if on_gpu else None,
    )


def step_seconds(record: dict[str, Any]) -> float:
    phases = record["phases"]
    return phases["forward"] + phases["backward"] + phases["grad_sync"] + phases["optimizer"]


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    if ctx.rank == 0:
        on_gpu = ctx.device.type == "cuda"
        batch = spec["gpu_batch" if on_gpu else "batch"]
        cfg = TrainConfig.from_dict(spec["gpu_config" if on_gpu else "config"])
        cfg = cfg.with_(global_batch=batch, log_every=0)
        data = RandomTokens(cfg, batch)
        trainer = Trainer(cfg, ctx.device, rank=0, world_size=1, spec=train_spec(on_gpu, data))
        model = trainer.module  # eager: what the FLOP counter reads
        n_params = sum(p.numel() for p in model.parameters())
        embeddings = model.tok.weight.numel() + model.pos.weight.numel()
        flops = flops_per_token(cfg, n_params - embeddings, spec["sabotage"])
        x, y = data.x.to(ctx.device), data.y.to(ctx.device)
        # what a FLOP counter sees in one forward + backward (eager model)
        with FlopCounterMode(display=False) as counter:
            with torch.autocast(ctx.device.type, dtype=torch.bfloat16, enabled=on_gpu):
                loss = loss_fn(cfg, model(x), y)
            loss.backward()
        counts = {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}
        attention_counted = sum(
            n for op, n in counts.items() if any(a in op for a in ATTENTION_OPS)
        )
        model.zero_grad(set_to_none=True)
        steps = spec["warmup_steps"] + spec["timed_steps"]
        times = [step_seconds(trainer.train_step()) for _ in range(steps)]
        step_s = statistics.median(times[spec["warmup_steps"] :])
        if on_gpu:
            name = torch.cuda.get_device_name(ctx.device)
            known = datasheet_peak(name)
            peak = known if known else matmul_peak(ctx.device, torch.bfloat16, (8192,))
            peak_source = (
                f"datasheet dense bf16 ({name})" if known else f"measured bf16 matmul ({name})"
            )
        else:
            sizes = (16,) if spec["sabotage"] == "tiny_peak" else (256, 512, 1024)
            peak = matmul_peak(ctx.device, torch.float32, sizes)
            peak_source = (
                f"measured fp32 matmul, sizes {list(sizes)}, {torch.get_num_threads()} thread(s)"
            )
        tokens_per_s = batch * cfg.seq_len / step_s
        ctx.events().write(
            "throughput",
            device=str(ctx.device),
            cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
            dtype="bfloat16 autocast" if on_gpu else "float32",
            compiled=on_gpu,
            params=n_params,
            matmul_params=n_params - embeddings,
            batch=batch,
            seq_len=cfg.seq_len,
            layers=cfg.n_layer,
            heads=cfg.n_head,
            d_model=cfg.d_model,
            flops_per_token=flops,
            counted_flops_per_token=counter.get_total_flops() / (batch * cfg.seq_len),
            counted_attention_flops_per_token=attention_counted / (batch * cfg.seq_len),
            counted_ops=counts,
            step_s=step_s,
            step_times_s=times,
            tokens_per_s=tokens_per_s,
            achieved_flops=tokens_per_s * flops["total"],
            peak_flops=peak,
            peak_source=peak_source,
            mfu=tokens_per_s * flops["total"] / peak,
        )
        ctx.log(f"throughput-mfu done: {tokens_per_s:.0f} tokens/s")
    if dist.is_initialized():
        dist.barrier()
