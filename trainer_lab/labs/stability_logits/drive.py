"""stability-logits lab: the driver (torch-free): per-arm series -> observations and checks."""

from __future__ import annotations

import math
import statistics
from typing import Any

from trainer_lab.context import LabContext
from trainer_lab.labs.stability_logits import ARMS, WITH_QK_NORM, WITH_Z_LOSS

# The model is fixed: small enough for a few hundred steps in seconds on a CPU.
MODEL = {"vocab": 32, "seq": 16, "d_model": 32, "n_head": 2, "n_layer": 2}
SPIKE_WINDOW = 20  # steps of running median a spike is measured against
TAIL = 10  # "final" values are means over the last TAIL steps
LOG_Z_ANCHORED = 1.0  # |log Z| an arm with z-loss must end under
DRIFT_FACTOR = 5.0  # the QK-norm arm's |log Z| must be this many times the stabilised arm's
LOGIT_FACTOR = 10.0  # the baseline's peak attention logit over sqrt(d_head)


def count_spikes(losses: list[float], factor: float, window: int = SPIKE_WINDOW) -> int:
    """Steps whose loss is not finite, or (after the first `window` steps) exceeds `factor` x
    the median of the `window` finite losses before it."""
    spikes = 0
    for i, loss in enumerate(losses):
        if not math.isfinite(loss):
            spikes += 1
            continue
        recent = [x for x in losses[max(0, i - window) : i] if math.isfinite(x)]
        if i >= window and recent and loss > factor * statistics.median(recent):
            spikes += 1
    return spikes


def tail_mean(values: list[float], n: int = TAIL) -> float:
    return statistics.fmean(values[-n:])


def optimal_loss(vocab: int, seq: int) -> float:
    """The induction task's best mean loss: a sequence is `seq // 2 + 1` random tokens repeated,
    so the first `seq // 2` targets are random (log V each) and the rest are copies (0)."""
    return (seq // 2) * math.log(vocab) / seq


def summarise(series: dict[str, Any], spike_factor: float, optimum: float) -> dict[str, Any]:
    """One arm's observations from its per-step series."""
    loss, log_z = series["loss"], series["log_z"]
    final_loss = tail_mean(loss)
    final_log_z = tail_mean(log_z)
    return {
        "qk_norm": series["qk_norm"],
        "z_coef": series["z_coef"],
        "peak_attn_logit": round(max(series["max_logit"]), 3),
        "final_attn_logit": round(tail_mean(series["max_logit"]), 3),
        "final_attn_entropy": round(tail_mean(series["entropy"]), 4),
        "initial_log_z": round(log_z[0], 4),
        "final_log_z": round(final_log_z, 4),
        "final_abs_log_z": round(abs(final_log_z), 4),
        "peak_abs_log_z": round(max(series["max_abs_log_z"]), 3),
        "final_loss": round(final_loss, 4),
        "excess_loss": round(final_loss - optimum, 4),
        "spikes": count_spikes(loss, spike_factor),
        "nonfinite_steps": sum(not math.isfinite(x) for x in loss),
        "curve": {
            key: [round(v, 3) for v in series[key][::10]] for key in ("loss", "max_logit", "log_z")
        },
    }


def drive(run: LabContext) -> None:
    p = run.params
    run.plan(1)
    run.launch(
        "trainer_lab.labs.stability_logits.worker:main",
        {**p, **MODEL, "collective_timeout_s": 60},
    )
    reports = run.events()
    got = run.report("stability")["arms"]
    optimum = optimal_loss(MODEL["vocab"], MODEL["seq"])
    bound = math.sqrt(MODEL["d_model"] // MODEL["n_head"])
    arms = {name: summarise(got[name], p["spike_factor"], optimum) for name in ARMS}
    for name, obs in arms.items():
        for key, value in obs.items():
            run.observe(f"arms.{name}.{key}", value)
    run.observe("attn_logit_bound", bound)
    run.observe("optimal_loss", round(optimum, 4))
    run.observe("total_spikes", sum(a["spikes"] for a in arms.values()))
    base, qk, stab = arms["baseline"], arms["qk_norm"], arms["stabilised"]
    logit_ratio = base["peak_attn_logit"] / qk["peak_attn_logit"]
    run.observe("ratios.attn_logit_baseline_over_qk_norm", round(logit_ratio, 2))
    run.observe(
        "ratios.attn_entropy_qk_norm_over_baseline",
        round(qk["final_attn_entropy"] / max(base["final_attn_entropy"], 1e-6), 2),
    )
    drift_ratio = qk["final_abs_log_z"] / max(stab["final_abs_log_z"], 1e-6)
    run.observe("ratios.abs_log_z_qk_norm_over_stabilised", round(drift_ratio, 2))

    bounded = all(arms[n]["peak_attn_logit"] <= bound + 1e-3 for n in WITH_QK_NORM)
    run.check(
        "qk_norm_bounds_attention_logits",
        bounded and base["peak_attn_logit"] >= LOGIT_FACTOR * bound,
        "peak attention logit: "
        + ", ".join(f"{n} {a['peak_attn_logit']:.1f}" for n, a in arms.items())
        + f"; the QK-norm arms ({', '.join(WITH_QK_NORM)}) must stay <= sqrt(d_head) = "
        f"{bound:g} and the baseline reach >= {LOGIT_FACTOR:g}x that; final attention entropy "
        + ", ".join(f"{n} {a['final_attn_entropy']:.3f}" for n, a in arms.items()),
    )
    anchored = all(arms[n]["final_abs_log_z"] <= LOG_Z_ANCHORED for n in WITH_Z_LOSS)
    run.check(
        "z_loss_anchors_log_z",
        anchored and drift_ratio >= DRIFT_FACTOR,
        "final mean log Z: "
        + ", ".join(f"{n} {a['final_log_z']:.2f}" for n, a in arms.items())
        + f" (log V = {math.log(MODEL['vocab']):.2f} at the start); z-loss arms "
        f"({', '.join(WITH_Z_LOSS)}) must end with |log Z| <= {LOG_Z_ANCHORED:g}, and "
        f"qk_norm's |log Z| / stabilised's = {drift_ratio:.1f} must be >= {DRIFT_FACTOR:g}",
    )
    digests = {rank: e["digests"] for rank, evs in reports.items() for e in evs if "digests" in e}
    differing = {
        name: sorted(r for r, d in digests.items() if d[name] != digests[0][name]) for name in ARMS
    }
    for name, ranks in differing.items():
        run.observe(f"replicas.{name}", len(ranks))
    run.check(
        "replicas_in_sync",
        len(digests) == run.world_size and not any(differing.values()),
        f"{len(digests)} of {run.world_size} ranks reported weight digests; ranks whose final "
        "weights differ from rank 0's, per arm: "
        + ", ".join(f"{n} {r or 'none'}" for n, r in differing.items()),
    )
