"""masked-loss lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from trainer_lab.context import LabContext, LabError

FIELDS = ("auroc_observed", "auroc_hidden", "mean_pred_observed", "mean_pred_hidden")


def drive(run: LabContext) -> None:
    p = run.params
    run.plan(1)
    run.launch(
        "trainer_lab.labs.masked_loss.worker:main",
        {
            "steps": p["steps"],
            "seed": p["seed"],
            "sabotage": p["sabotage"],
            "collective_timeout_s": 170,
        },
    )
    r = run.report("masked_loss")
    for key, value in r.items():
        run.observe(key, value)
    m, z, truth = r["masked"], r["zero_filled"], r["true_rate_hidden"]
    if truth is None:
        raise LabError("no hidden entries: nothing to compare")
    run.observe(
        "hidden_pred_ratio", round(z["mean_pred_hidden"] / max(m["mean_pred_hidden"], 1e-9), 4)
    )
    gain = round(m["auroc_hidden"] - z["auroc_hidden"], 4)
    run.observe("auroc_hidden_gain", gain)
    run.observe("auroc_observed_gain", round(m["auroc_observed"] - z["auroc_observed"], 4))
    run.check(
        "zero_fill_collapses_missing",
        z["mean_pred_hidden"] <= 0.25 * truth,
        f"zero-filled model: mean P(active) {z['mean_pred_hidden']:.3f} on hidden entries whose "
        f"true active rate is {truth:.3f} ({r['observed_share']:.0%} of entries observed)",
    )
    run.check(
        "masked_calibrated_on_missing",
        abs(m["mean_pred_hidden"] - truth) <= 0.15,
        f"masked model: mean P(active) {m['mean_pred_hidden']:.3f} on hidden entries, true rate "
        f"{truth:.3f}",
    )
    run.check(
        "masked_ranks_missing_better",
        gain >= 0.03,
        f"AUROC on hidden entries: masked {m['auroc_hidden']:.3f}, zero-filled "
        f"{z['auroc_hidden']:.3f} (on observed entries: {m['auroc_observed']:.3f} vs "
        f"{z['auroc_observed']:.3f})",
    )
    run.check(
        "filled_matrix_flatters_zero_fill",
        z["filled_accuracy"] >= m["filled_accuracy"] + 0.1,
        f"accuracy against the zero-filled matrix: zero-filled {z['filled_accuracy']:.3f}, "
        f"masked {m['filled_accuracy']:.3f} (the filled matrix rewards predicting 'inactive' "
        "for every untested entry)",
    )
