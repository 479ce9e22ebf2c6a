"""equivariance lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from trainer_lab.context import LabContext

BROKEN = (
    ("raw_coords", "invariant_err"),
    ("coord_batchnorm", "equivariant_err"),
    ("coord_layernorm", "equivariant_err"),
)


def drive(run: LabContext) -> None:
    p = run.params
    run.plan(1)
    run.launch(
        "trainer_lab.labs.equivariance.worker:main",
        {"seed": p["seed"], "sabotage": p["sabotage"], "collective_timeout_s": 170},
    )
    r = run.report("equivariance")
    for key, value in r.items():
        run.observe(key, value)
    tol, model, refs = p["tolerance"], r["model"], r["references"]
    moved = f"rotation {r['rotation_angle_deg']:.1f} deg, translation {r['translation_norm']:.2f}"
    run.check(
        "invariant_output_invariant",
        model["invariant_err"] <= tol,
        f"scalar head: relative max error {model['invariant_err']:.2e} after {moved} "
        f"(tolerance {tol:g})",
    )
    run.check(
        "vector_output_equivariant",
        model["equivariant_err"] <= tol,
        f"vector head ({model['vector_norm']} normalisation): relative max error "
        f"{model['equivariant_err']:.2e} between f(Rx + t) and R f(x) (tolerance {tol:g})",
    )
    caught = {name: refs[name][field] for name, field in BROKEN}
    weakest = min(caught.values())
    run.observe("weakest_catch", weakest)
    run.check(
        "test_catches_broken_layers",
        weakest > 100 * tol,
        "errors of layers that break equivariance: "
        + ", ".join(f"{name} {err:.2e}" for name, err in caught.items())
        + f" ({moved})",
    )
