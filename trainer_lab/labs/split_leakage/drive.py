"""split-leakage lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from trainer_lab.context import LabContext


def drive(run: LabContext) -> None:
    p = run.params
    run.plan(1)
    run.launch(
        "trainer_lab.labs.split_leakage.worker:main",
        {
            "steps": p["steps"],
            "seed": p["seed"],
            "sabotage": p["sabotage"],
            "collective_timeout_s": 170,
        },
    )
    r = run.report("split_leakage")
    for key, value in r.items():
        run.observe(key, value)
    rnd, grp = r["random"], r["group"]
    inflation = round(rnd["model_r2"] - grp["model_r2"], 4)
    run.observe("r2_inflation", inflation)
    run.check(
        "group_split_disjoint",
        grp["shared_groups"] == 0,
        f"group split: {grp['shared_groups']} of {r['groups']} series on both sides (random "
        f"split: {rnd['shared_groups']})",
    )
    run.check(
        "random_split_inflated",
        inflation >= 0.3,
        f"MLP test R²: random split {rnd['model_r2']:.3f}, group split {grp['model_r2']:.3f} "
        f"(median distance to the nearest training row {rnd['median_nn_distance']:.2f} vs "
        f"{grp['median_nn_distance']:.2f})",
    )
    run.check(
        "nn_lookup_exposes_leak",
        rnd["nn_r2"] >= rnd["model_r2"] - 0.1 and grp["nn_r2"] <= rnd["nn_r2"] - 0.5,
        f"1-NN lookup R²: random split {rnd['nn_r2']:.3f} (MLP {rnd['model_r2']:.3f}), group "
        f"split {grp['nn_r2']:.3f} (MLP {grp['model_r2']:.3f})",
    )
