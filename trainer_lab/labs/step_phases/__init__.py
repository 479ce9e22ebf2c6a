"""step-phases: where the time of a training step goes, per rank, under four scenarios.

Just over the ~350-line guideline: one spec and driver for four scenarios (baseline,
slow-loader, checkpoint-stall, straggler); the statistics live in analysis.py."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SCENARIO_STEPS = {"baseline": 30, "slow-loader": 20, "checkpoint-stall": 50, "straggler": 16}

SPEC = LabSpec(
    name="step-phases",
    group="performance",
    summary=(
        "Per-rank time of every phase of the training step (data wait, host-to-device, "
        "forward, backward, gradient sync, optimizer, checkpoint), samples/s, p50/p99 step "
        "time; scenarios: a slow loader fixed by workers and prefetch, periodic checkpoint "
        "stalls found from the step times and removed by DCP async_save, and a straggler rank "
        "that makes its peers wait in gradient sync."
    ),
    params=(
        ParamSpec(
            "scenario",
            "choice",
            "baseline",
            "baseline | slow-loader | checkpoint-stall | straggler",
            choices=tuple(SCENARIO_STEPS),
        ),
        ParamSpec(
            "steps", "int", 0, "steps per run (0: the scenario's default)", minimum=0, maximum=400
        ),
        ParamSpec(
            "loader_delay_ms",
            "float",
            -1.0,
            "per-sample delay of the slow dataset (-1: 5 ms for slow-loader, none for baseline)",
            minimum=-1.0,
            maximum=50.0,
        ),
        ParamSpec(
            "workers", "int", 4, "slow-loader: loader worker processes", minimum=0, maximum=8
        ),
        ParamSpec(
            "prefetch",
            "int",
            4,
            "slow-loader: batches prefetched per worker",
            minimum=1,
            maximum=16,
        ),
        ParamSpec(
            "checkpoint_every",
            "int",
            10,
            "checkpoint-stall: save every N steps (0: never, so no period can be found)",
            minimum=0,
            maximum=100,
        ),
        ParamSpec(
            "frozen_mb",
            "int",
            8,
            "checkpoint-stall: MB of frozen (untrained) model state saved with every checkpoint",
            minimum=0,
            maximum=512,
        ),
        ParamSpec(
            "straggler_delay_ms",
            "float",
            40.0,
            "straggler: extra forward time of the slow rank (0: no straggler)",
            minimum=0.0,
            maximum=500.0,
        ),
        ParamSpec("slow_rank", "int", -1, "straggler: the slow rank (-1: the last)", minimum=-1),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: inert switches each scenario's mechanism off: slow-loader's second run gets "
            "no workers, checkpoint-stall's async run saves synchronously, straggler's slow rank "
            "is not slowed; the scenario's checks must fail",
            choices=("none", "inert"),
        ),
    ),
    observations=(
        ObservationSpec("ranks", "per rank: median ms of every phase, median step ms"),
        ObservationSpec("ranks.*.*", "ranks.<rank>.<phase>_ms: median phase time", "ms"),
        ObservationSpec("*.ranks", "the same per run (serial, prefetch, sync, async, ...)"),
        ObservationSpec("*.ranks.*.*", "<run>.ranks.<rank>.<phase>_ms", "ms"),
        ObservationSpec("*.step_ms.p50", "p50 step time of a run", "ms"),
        ObservationSpec("*.step_ms.p99", "p99 step time of a run", "ms"),
        ObservationSpec("*.samples_per_s", "samples/s of a run at its p50 step"),
        ObservationSpec("*.data_wait_share", "median data wait / p50 step of a run"),
        ObservationSpec("sync.spike_steps", "checkpoint-stall: steps found to spike"),
        ObservationSpec("step_ms.p50", "p50 step time (slowest rank per step)", "ms"),
        ObservationSpec("step_ms.p99", "p99 step time (slowest rank per step)", "ms"),
        ObservationSpec("samples_per_s", "global samples per second at the p50 step time"),
        ObservationSpec("data_wait_share", "baseline: median data wait / median step time"),
        ObservationSpec("serial.data_wait_share", "slow-loader, no workers: data wait / step"),
        ObservationSpec("prefetch.data_wait_share", "slow-loader, workers: data wait / step"),
        ObservationSpec("speedup", "slow-loader: serial p50 step / prefetch p50 step"),
        ObservationSpec("sync.period", "checkpoint-stall: period found from step times (0: none)"),
        ObservationSpec(
            "sync.stall_ms", "mean excess time of the checkpoint steps, DCP save", "ms"
        ),
        ObservationSpec("async.stall_ms", "the same with DCP async_save", "ms"),
        ObservationSpec("async.drain_ms", "waiting for the last async save at the end", "ms"),
        ObservationSpec("sync.total_s", "checkpoint-stall: sum of step times, DCP save", "s"),
        ObservationSpec("async.total_s", "the same with async_save, plus the final drain", "s"),
        ObservationSpec(
            "async.max_wait_previous_ms",
            "longest wait for the previous async save (the write outlasted the interval)",
            "ms",
        ),
        ObservationSpec("stall_reduction", "checkpoint-stall: 1 - async stall / sync stall"),
        ObservationSpec("straggler.named_rank", "rank named as the straggler (-1: none)"),
        ObservationSpec(
            "straggler.named_is_slow_rank", "the rank named from the timings is the slowed one"
        ),
        ObservationSpec("straggler.grad_sync_growth_ms", "per rank: grad_sync median growth", "ms"),
        ObservationSpec("straggler.grad_sync_growth_ms.*", "grad_sync growth of one rank", "ms"),
    ),
    checks=(
        CheckSpec("loader_not_bottleneck", "baseline: data wait < 25 % of the step"),
        CheckSpec("serial_loader_dominates", "slow-loader: data wait >= 50 % without workers"),
        CheckSpec("prefetch_recovers", "slow-loader: workers cut data wait 3x and step time 2x"),
        CheckSpec("period_detected", "checkpoint-stall: the spike period equals the save period"),
        CheckSpec("async_removes_stall", "checkpoint-stall: async stall <= half the sync stall"),
        CheckSpec("straggler_named", "straggler: the breakdown names the slowed rank"),
        CheckSpec("peers_wait_in_grad_sync", "straggler: every other rank's grad_sync grows"),
    ),
    timeout_s=120.0,
)
