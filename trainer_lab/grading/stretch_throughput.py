"""The throughput stretch phase's checks, from what the runs did (timed: see
benchmarks/RESULTS-stretch.md)."""

from __future__ import annotations

import itertools
import math

from trainer_lab.grading.checks_run import failed_run_detail
from trainer_lab.grading.stretch import (
    REPORTED_RANGE,
    STEP_QUANTILE,
    THROUGHPUT_ORDER,
    THROUGHPUT_TARGET,
)
from trainer_lab.grading.stretch_evidence import (
    not_finished,
)
from trainer_lab.result import Check
from trainer_lab.usercode.evidence import (
    fetches,
    step_lines,
    step_records,
)
from trainer_lab.usercode.harness import ScriptRun
from trainer_lab.usercode.verdict import check

# -- throughput ------------------------------------------------------------------------------


def observed_throughput(run: ScriptRun) -> tuple[float | None, tuple[int, int], str]:
    """(samples/s over steps k+1..N, (k, N), evidence): the samples every rank fetched for those
    steps over the time between rank 0's optimizer steps k and N (the first quarter is warm-up)."""
    records = step_records(run.observe_dir, 0)
    n = len(records)
    k = n // 4
    if n < 4:
        return None, (0, n), f"{n} optimizer steps recorded, need at least 4"
    seconds = float(records[-1]["time"]) - float(records[k - 1]["time"]) if k else 0.0
    samples = sum(
        1 for rank in run.ranks() for done, _ in fetches(run.observe_dir, rank) if k <= done < n
    )
    if seconds <= 0 or not samples:
        return None, (k, n), f"no samples or no time between steps {k} and {n}"
    rate = samples / seconds
    return rate, (k, n), f"{samples} samples in {seconds:.3f} s over steps {k + 1}-{n}"


def throughput_reported(run: ScriptRun) -> tuple[bool, str]:
    rate, (k, n), evidence = observed_throughput(run)
    if rate is None:
        return False, f"{failed_run_detail(run)}; {evidence}"
    lines = [line for line in step_lines(run.stdout_path(0)).lines if k < line["step"] <= n]
    values = [line.get("samples_per_s") for line in lines]
    if not lines or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0
        for v in values
    ):
        shown = next((v for v in values if not isinstance(v, int | float)), values[:1])
        return False, (
            f"step lines {k + 1}-{n} must carry samples_per_s > 0, found {str(shown)[:60]}; "
            f"observed {rate:.1f} samples/s ({evidence})"
        )
    logged = len(values) / sum(1.0 / float(v) for v in values)  # time-weighted: harmonic mean
    ratio = logged / rate
    low, high = REPORTED_RANGE
    text = (
        f"logged {logged:.1f} samples/s (harmonic mean of steps {k + 1}-{n}), observed "
        f"{rate:.1f} ({evidence}): {ratio:.2f}x"
    )
    if ratio > high:
        return False, (
            f"{text}; expected within x{low}-{high}; likely cause: the claim is inflated "
            "(samples counted on every rank and multiplied by W again, or a time that leaves "
            "part of the step out)"
        )
    if ratio < low:
        return False, f"{text}; expected within x{low}-{high}; likely cause: samples undercounted"
    return True, text


def typical_rate(run: ScriptRun) -> tuple[float | None, str]:
    """Samples/s of a fast step: global samples per step over the STEP_QUANTILE-th quantile of the
    times between rank 0's consecutive optimizer steps (after the first quarter). A quantile, not
    the total: on a shared machine the steps other processes stalled would decide a total,
    while the fast steps show what the script itself costs."""
    records = step_records(run.observe_dir, 0)
    n = len(records)
    k = n // 4
    times = [float(r["time"]) for r in records[k:]]
    gaps = sorted(b - a for a, b in itertools.pairwise(times) if b > a)
    fetched = sum(
        1 for rank in run.ranks() for done, _ in fetches(run.observe_dir, rank) if k <= done < n
    )
    if len(gaps) < 3 or not fetched:
        return None, f"{n} optimizer steps recorded, need at least 4 with samples"
    per_step = fetched / (n - k)
    fast = gaps[int(STEP_QUANTILE * (len(gaps) - 1))]
    share = f"{STEP_QUANTILE:.0%}"
    text = f"{per_step:g} samples per step, {share} of steps within {fast * 1e3:.2f} ms"
    return per_step / fast, text


def throughput_target(runs: list[ScriptRun], references: list[ScriptRun]) -> tuple[bool, str]:
    """Each side's fastest run (typical_rate) against THROUGHPUT_TARGET."""
    mine = [r for r in (typical_rate(run) for run in runs) if r[0] is not None]
    theirs = [r for r in (typical_rate(run) for run in references) if r[0] is not None]
    if not theirs:
        return False, "the model answer's runs gave no throughput"
    if not mine:
        return False, f"{failed_run_detail(runs[0])}; {typical_rate(runs[0])[1]}"
    (rate, evidence), (ref, ref_evidence) = max(mine), max(theirs)
    assert rate is not None and ref is not None
    text = (
        f"{rate:.1f} samples/s ({evidence}), the model answer {ref:.1f} ({ref_evidence}) in "
        f"the same grading (the fastest of {len(runs)} runs each): {rate / ref:.2f}x"
    )
    if rate < THROUGHPUT_TARGET * ref:
        return False, (
            f"{text}; expected >= {THROUGHPUT_TARGET}x; likely cause: time spent outside the "
            "training step every step (a blocking read, a save or a collective per step)"
        )
    return True, f"{text} (target {THROUGHPUT_TARGET}x)"


def throughput_checks(runs: dict[str, ScriptRun]) -> list[Check]:
    mine = [runs[name] for name, ref in THROUGHPUT_ORDER if not ref]
    references = [runs[name] for name, ref in THROUGHPUT_ORDER if ref]
    run = mine[0]
    failed = next((f"{r.launch.name}: {not_finished(r)}" for r in mine if not_finished(r)), None)
    checks = []
    for name, (ok, detail) in (
        ("throughput.reported_matches_observed", throughput_reported(run)),
        ("throughput.target", throughput_target(mine, references)),
    ):
        if failed:
            ok, detail = False, f"{failed}; {detail}"
        checks.append(check(name, ok, detail))
    return checks
