"""Lab wall times and the trainer's instrumentation overhead.

    python benchmarks/labs.py [--labs ddp-baseline,sampler,resume | --all] [--repeat 3]
                              [--world-size 2] [--skip-labs] [--skip-overhead]

Wall time: each lab through trainer_lab.runner.run_lab (what `drill lab run` does), median of
--repeat runs. Overhead: Trainer.train_step (phase timers, loss.item(), sample ids, one JSON
event line flushed per step) against a bare loop over the same model, data, optimizer and
scheduler, single process, in alternating blocks (so load from other processes hits both
alike), per-step medians, for the lab-size MLP and a mid-size one.
Targets on the 2-core dev box: each lab <= 20 s at W=2, ratio <= 1.05.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MY_LABS = ("ddp-baseline", "sampler", "resume")


def bench_labs(names: list[str], world_size: int, repeat: int) -> None:
    from trainer_lab.runner import run_lab

    print(f"lab wall time at W={world_size} (median of {repeat}; target <= 20 s)")
    for name in names:
        times, statuses = [], set()
        for _ in range(repeat):
            start = time.perf_counter()
            with tempfile.TemporaryDirectory() as out:
                result = run_lab(name, {}, world_size, Path(out))
            times.append(time.perf_counter() - start)
            statuses.add(result["status"])
        print(
            f"  {name:<24} median {statistics.median(times):6.2f} s  "
            f"min {min(times):6.2f}  max {max(times):6.2f}  status {','.join(sorted(statuses))}"
        )


def _bare_block(cfg, trainer, batches, steps: int) -> float:
    from trainer_lab.model import loss_fn

    start = time.perf_counter()
    for _ in range(steps):
        _, x, y = next(batches)
        loss = loss_fn(cfg, trainer.model(x), y)
        loss.backward()
        trainer.optimizer.step()
        trainer.optimizer.zero_grad(set_to_none=True)
        trainer.scheduler.step()
    return (time.perf_counter() - start) / steps


def _instrumented_block(trainer, steps: int) -> float:
    start = time.perf_counter()
    for _ in range(steps):
        trainer.train_step()
    return (time.perf_counter() - start) / steps


def bench_overhead(blocks: int, block_steps: int) -> None:
    import torch

    from trainer_lab.config import TrainConfig
    from trainer_lab.events import EventWriter
    from trainer_lab.trainer import Trainer

    torch.set_num_threads(1)
    sizes = {
        "lab MLP 16-64-64-4, batch 16": TrainConfig(),
        "mid MLP 256-1024-1024-256, batch 64": TrainConfig(
            d_in=256, hidden=1024, d_out=256, global_batch=64
        ),
    }
    print(
        f"instrumentation overhead, single process: {blocks} alternating blocks of "
        f"{block_steps} steps (bare, instrumented), per-step medians; target ratio <= 1.05"
    )
    for label, base in sizes.items():
        cfg = base.with_(n_samples=(blocks + 1) * block_steps * base.global_batch)
        with tempfile.TemporaryDirectory() as folder:
            writer = EventWriter(Path(folder), 0)
            instrumented = Trainer(cfg, rank=0, world_size=1, events=writer, run_label="bench")
            plain = Trainer(cfg, rank=0, world_size=1)
            batches = iter(plain.loader)
            _bare_block(cfg, plain, batches, block_steps)  # warm-up: optimizer state, allocator
            _instrumented_block(instrumented, block_steps)
            bare, inst = [], []
            for _ in range(blocks):  # alternating, so load from other processes hits both
                bare.append(_bare_block(cfg, plain, batches, block_steps))
                inst.append(_instrumented_block(instrumented, block_steps))
            writer.close()
        mb, mi = statistics.median(bare), statistics.median(inst)
        print(
            f"  {label:<38} bare {mb * 1e3:7.3f} ms  instrumented {mi * 1e3:7.3f} ms  "
            f"(+{(mi - mb) * 1e6:5.0f} us/step)  ratio {mi / mb:5.3f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labs", default=",".join(MY_LABS))
    parser.add_argument("--all", action="store_true", help="every lab in the catalogue")
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--blocks", type=int, default=30, help="overhead: alternating blocks")
    parser.add_argument("--block-steps", type=int, default=20, help="overhead: steps a block")
    parser.add_argument("--skip-labs", action="store_true")
    parser.add_argument("--skip-overhead", action="store_true")
    args = parser.parse_args()
    if not args.skip_overhead:
        bench_overhead(args.blocks, args.block_steps)
    if not args.skip_labs:
        from trainer_lab.catalogue import CATALOGUE

        names = list(CATALOGUE) if args.all else args.labs.split(",")
        bench_labs(names, args.world_size, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
