"""Instrumentation overhead of the reference trainer's step (issue 3 benchmark, target <= 1.05).

    python benchmarks/trainer_overhead.py [--blocks 40] [--block-steps 20] [--sizes lab,5ms]
                                          [--clock wall|cpu]

Single process, one thread, CPU. Both loops drive ONE Trainer (same model, optimizer, LR
scheduler and DataLoader, so weights, optimizer state and allocator are shared alike):
- bare: next batch from the trainer's loader, forward, loss, backward, optimizer step,
  zero_grad, scheduler step;
- instrumented: Trainer.train_step(): the same work plus phase timers, sampler bookkeeping,
  loss.item(), sample ids, one `step` event line written to events-rank0.jsonl per step
  (in the kernel when the step returns) and rank 0's log line every `log_every` steps.
Blocks of --block-steps steps alternate (bare, instrumented, bare, ...) so load from other
processes hits both alike; every step is timed. Printed: the median step time of each kind
over all its steps, their ratio, and the median over block pairs of the ratio of the blocks'
median step times (a second estimate, less sensitive to drift in the machine's load).
--clock cpu times steps with the thread's CPU time (time.thread_time) instead of the wall clock:
on a machine other processes load, a step that waited for a core then costs nothing extra, so
the overhead estimate stays usable (cache pollution from neighbours still shows).
Sizes: `lab` is the MLP the labs train (16-64-64-4, batch 16, ~0.5 ms a step); `5ms` a wider
one whose step takes ~5 ms on an unloaded core of the 2-core dev box (much more when other
processes compete for it); `mid` the 256-1024-1024-256 one (~17 ms).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SIZES = {
    "lab": ("lab MLP 16-64-64-4, batch 16", {}),
    "5ms": (
        "MLP 256-512-512-256, batch 64",
        dict(d_in=256, hidden=512, d_out=256, global_batch=64),
    ),
    "mid": (
        "MLP 256-1024-1024-256, batch 64",
        dict(d_in=256, hidden=1024, d_out=256, global_batch=64),
    ),
}


CLOCK = time.perf_counter  # --clock cpu: time.thread_time


def bare_block(trainer, batches, steps: int) -> list[float]:
    """Seconds of each step of the uninstrumented loop over the trainer's own parts."""
    from trainer_lab.train.model import loss_fn

    cfg, model, optimizer, scheduler = (
        trainer.cfg,
        trainer.model,
        trainer.optimizer,
        trainer.scheduler,
    )
    clock = CLOCK
    times = []
    for _ in range(steps):
        start = clock()
        _, x, y = next(batches)
        loss = loss_fn(cfg, model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        scheduler.step()
        times.append(clock() - start)
    return times


def instrumented_block(trainer, steps: int) -> list[float]:
    clock = CLOCK
    times = []
    for _ in range(steps):
        start = clock()
        trainer.train_step()
        times.append(clock() - start)
    return times


def measure(size: str, blocks: int, block_steps: int) -> dict[str, float]:
    from trainer_lab.config import TrainConfig
    from trainer_lab.events import EventWriter
    from trainer_lab.train.trainer import Trainer

    _, changes = SIZES[size]
    base = TrainConfig(**changes)
    # Enough samples that neither loop wraps an epoch (the bare loop has its own iterator).
    cfg = base.with_(n_samples=(blocks + 2) * block_steps * base.global_batch)
    with tempfile.TemporaryDirectory() as folder:
        writer = EventWriter(Path(folder), 0)
        trainer = Trainer(cfg, rank=0, world_size=1, events=writer, run_label="bench")
        batches = iter(trainer.loader)
        # rank 0's log lines go to a file, as under torchrun (--redirects 3 --log-dir)
        with (Path(folder) / "stderr.log").open("w") as log, contextlib.redirect_stderr(log):
            bare_block(trainer, batches, block_steps)  # warm-up: optimizer state, allocator
            instrumented_block(trainer, block_steps)
            bare, inst = [], []
            for _ in range(blocks):
                bare.append(bare_block(trainer, batches, block_steps))
                inst.append(instrumented_block(trainer, block_steps))
        writer.close()
    # Per-step medians: a step the scheduler preempted (other processes on a 2-core box) is
    # an outlier either way; block means would count it in.
    mb = statistics.median(t for block in bare for t in block)
    mi = statistics.median(t for block in inst for t in block)
    block_ratios = [
        statistics.median(i) / statistics.median(b) for b, i in zip(bare, inst, strict=True)
    ]
    return {
        "bare_ms": mb * 1e3,
        "instrumented_ms": mi * 1e3,
        "overhead_us": (mi - mb) * 1e6,
        "ratio": mi / mb,
        "block_ratio": statistics.median(block_ratios),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=40, help="alternating blocks of each kind")
    parser.add_argument("--block-steps", type=int, default=20, help="steps in a block")
    parser.add_argument(
        "--sizes", default="lab,5ms", help=f"comma-separated, from {', '.join(SIZES)}"
    )
    parser.add_argument(
        "--clock", choices=("wall", "cpu"), default="wall", help="wall time or thread CPU time"
    )
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.thread_time if args.clock == "cpu" else time.perf_counter
    sizes = args.sizes.split(",")
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        parser.error(f"unknown size(s) {', '.join(unknown)}; choose from {', '.join(SIZES)}")

    import torch

    torch.set_num_threads(1)
    print(
        f"trainer instrumentation overhead, single process: {args.blocks} alternating blocks of "
        f"{args.block_steps} steps, per-step medians of {args.clock} time; target ratio <= 1.05"
    )
    for size in sizes:
        r = measure(size, args.blocks, args.block_steps)
        print(
            f"  {SIZES[size][0]:<34} bare {r['bare_ms']:7.3f} ms  "
            f"instrumented {r['instrumented_ms']:7.3f} ms  (+{r['overhead_us']:4.0f} us/step)  "
            f"ratio {r['ratio']:5.3f}  by block {r['block_ratio']:5.3f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
