"""Print the MFU ladder: the mfu-ladder lab's rungs with tokens/s, MFU and the FLOP check.

    python benchmarks/mfu_ladder.py [--param name=value ...] [--runs 1] [--cpu]

Runs the lab (trainer_lab.api.run_lab, world size 1) on whatever the machine has: CUDA when
visible (the GPU ladder: d 4096, 8 layers, seq 2048, bf16, flash SDPA, compile, fused AdamW,
batch 2 -> 16 at the top rung), else the scaled-down CPU ladder (compile skipped by default:
inductor needs minutes there; `--param cpu_compile=true` measures it). `--cpu` hides CUDA.
With --runs N the table shows the median of each rung's tokens/s and MFU over N runs.

Measured so far (write new figures here with the machine and its load):
- CPU, 2-core AMD EPYC dev box (avx512_bf16), torch 2.13, one thread, default params
  (d 128, 2 layers, 4 heads, seq 64, batch 8 -> 32), load average ~11 from other processes,
  peak = measured bf16 matmul 169 GFLOP/s (fp32 88): fp32_eager 2,986 tokens/s (4.9 % MFU),
  bf16_autocast 4,216 (6.9 %), sdpa 2,869 (4.7 %: the CPU SDPA kernel is slower than the
  written-out attention at T 64), compile skipped, fused_adamw 3,019 (4.9 %), large_batch
  3,901 (6.3 %), activation_checkpointing 3,383 (0.87x the top rung). Tokens/s move ~2x between
  runs with the load: compare rungs within one run (their steps interleave), not across runs.
- CPU, 2-core AMD EPYC box WITHOUT avx512/bf16 instructions (same default params), torch 2.13,
  load average ~2 (other sessions' tests), peak = measured fp32 matmul 90.1 GFLOP/s (bf16 only
  1.3): fp32_eager 10,682 tokens/s (32.6 % MFU), bf16_autocast 1,122 (3.4 %: 0.10x, bf16 is
  emulated on this CPU), sdpa 1,059 (3.2 %), compile skipped, fused_adamw 1,208 (3.7 %),
  large_batch 1,138 (3.5 %), activation_checkpointing 937 (0.82x the top rung); counter: 6N and
  12LHQT exact, SDPA model 0, checkpointing recompute x1.214 (full forward x1.310). The ladder's
  order is a GPU order: on a CPU without bf16 units the first rung is the fastest.
- GPU: NOT MEASURED (no GPU was lent to the sessions that built and audited the ladder). The target
  is >= 60 % MFU at the top rung on one H100/H200 (bf16 dense datasheet peak 989 TFLOP/s);
  DESIGN.md records 58.1 % for a d 4096, 8-layer GPT at batch 8 with bf16 + compile.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def parse_params(pairs: list[str]) -> dict[str, Any]:
    from trainer_lab.catalogue import get_lab

    spec = {p.name: p for p in get_lab("mfu-ladder").params}
    params: dict[str, Any] = {}
    for pair in pairs:
        name, _, text = pair.partition("=")
        if name not in spec:
            raise SystemExit(f"unknown param {name!r} (valid: {', '.join(spec)})")
        params[name] = spec[name].parse(text)
    return params


def run_once(params: dict[str, Any]) -> dict[str, Any]:
    from trainer_lab.api import run_lab

    with tempfile.TemporaryDirectory() as folder:
        return run_lab("mfu-ladder", params, 1, Path(folder), timeout_s=900)


def print_ladder(results: list[dict[str, Any]]) -> None:
    obs = results[-1]["observations"]
    peak = f"{obs['peak_flops'] / 1e9:,.1f} GFLOP/s ({obs['peak_source']})"
    print(f"device {obs['device']}; peak {peak}")
    flops = obs["flops_per_token"]
    counted = obs["counted"]
    print(
        f"FLOPs/token: 6N = {flops['dense']:,} (counter {counted['dense']:,.0f}), "
        f"12LHQT = {flops['attention']:,} (counter {counted['attention']:,.0f}; "
        f"SDPA model {counted['sdpa_attention']:,.0f}); checkpointing recompute "
        f"x{counted['checkpointing_ratio']:.3f} "
        f"(full forward x{counted['full_recompute_ratio']:.3f})"
    )
    header = f"{'rung':<26}{'batch':>6}{'tokens/s':>12}{'MFU':>8}{'vs below':>10}{'vs fp32':>9}"
    print(f"{header}  logits diff")
    for name in obs["ladder"]:
        rows = [r["observations"]["rungs"][name] for r in results]
        rate = statistics.median(r["tokens_per_s"] for r in rows)
        mfu = statistics.median(r["mfu"] for r in rows)
        last = rows[-1]
        diff = last["logits_rel_diff"]
        print(
            f"{name:<26}{last['batch']:>6}{rate:>12,.0f}{mfu:>8.2%}"
            f"{last['speedup_vs_previous']:>9.2f}x{last['speedup_vs_fp32']:>8.2f}x  "
            f"{diff:.1e}"
        )
    for name, reason in obs["skipped"].items():
        print(f"{name:<26}skipped: {reason}")
    for check in results[-1]["checks"]:
        print(f"  {'PASS' if check['passed'] else 'FAIL'}  {check['name']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--param", action="append", default=[], help="lab param name=value")
    parser.add_argument("--runs", type=int, default=1, help="runs to take medians over")
    parser.add_argument("--cpu", action="store_true", help="hide CUDA: the CPU ladder")
    args = parser.parse_args()
    if args.cpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    params = parse_params(args.param)
    results = []
    for _ in range(args.runs):
        result = run_once(params)
        if result["status"] not in ("ok", "failed"):
            print(f"mfu-ladder {result['status']}: {result.get('error')}", file=sys.stderr)
            return 3
        results.append(result)
    load = os.getloadavg()
    print(f"mfu-ladder, {args.runs} run(s), load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print_ladder(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
