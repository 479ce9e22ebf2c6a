"""The amp stretch phase's checks (mixed precision with a loss scaler), from what the runs did."""

from __future__ import annotations

import math

from trainer_lab.grading.stretch import (
    AMP_INF_AT,
    CKPT_EVERY,
    STRETCH_KILLED_AFTER,
)
from trainer_lab.grading.stretch_evidence import (
    not_finished,
    probe_records,
    real_steps,
    resumed_matches,
)
from trainer_lab.result import Check
from trainer_lab.usercode.evidence import (
    step_records,
)
from trainer_lab.usercode.harness import ScriptRun
from trainer_lab.usercode.verdict import check

# -- amp -------------------------------------------------------------------------------------


def scales(run: ScriptRun, rank: int = 0) -> dict[int, float]:
    """Optimizer step -> the loss scale it was taken at: the gradients' norm after the last
    backward before it over the norm the optimizer stepped with (1.0: no scaling). Steps whose
    norms are not finite or zero are left out."""
    last: dict[int, float] = {}
    for r in probe_records(run, rank, "backward"):
        norm = r["grad"].get("norm") if isinstance(r.get("grad"), dict) else None
        if isinstance(norm, int | float):
            last[r["pstep"] + 1] = float(norm)
    found = {}
    for rec in step_records(run.observe_dir, rank):
        after, at = last.get(rec["pstep"]), rec["grad"].get("norm")
        if after and at and math.isfinite(after) and math.isfinite(at):
            found[rec["pstep"]] = after / at
    return found


def _fmt_scales(found: dict[int, float]) -> str:
    spans: list[tuple[int, int, float]] = []
    for step in sorted(found):
        value = found[step]
        if spans and math.isclose(spans[-1][2], value, rel_tol=1e-3) and spans[-1][1] == step - 1:
            spans[-1] = (spans[-1][0], step, spans[-1][2])
        else:
            spans.append((step, step, value))
    return ", ".join(
        f"{v:.6g} at steps {a}-{b}" if a != b else f"{v:.6g} at step {a}" for a, b, v in spans
    )


def amp_autocast(run: ScriptRun) -> tuple[bool, str]:
    seen = 0
    for rank in run.ranks():
        for r in probe_records(run, rank, "step"):
            outputs, params = r.get("outputs") or {}, r.get("params") or {}
            if not outputs.get("bfloat16"):
                return False, (
                    f"rank {rank}, optimizer step {r['pstep']}: outputs of the modules that "
                    f"hold parameters by dtype {outputs}, none bfloat16; expected the forward "
                    "under torch.autocast('cpu', dtype=torch.bfloat16); likely cause: no "
                    "autocast around the forward pass"
                )
            if set(params) != {"float32"}:
                return False, (
                    f"rank {rank}, optimizer step {r['pstep']}: parameters by dtype {params}; "
                    "expected float32 master weights; likely cause: the model cast to "
                    "bfloat16 (model.bfloat16()) instead of autocast"
                )
            seen += 1
    if not seen:
        return False, "no optimizer step recorded with its forward dtypes"
    return True, (
        f"on all {seen} optimizer steps (all ranks) the modules' outputs were bfloat16 and the "
        "parameters float32"
    )


def amp_loss_scaled(run: ScriptRun) -> tuple[bool, str]:
    found = scales(run)
    if not found:
        return False, "no optimizer step with finite gradients to measure a loss scale on"
    low = min(found.values())
    text = f"gradients after backward / at the optimizer step: {_fmt_scales(found)}"
    if low < 1.5:
        return False, (
            f"{text}; expected a scale > 1 on every step; likely cause: the loss is not "
            "multiplied by the scaler's scale before backward (scaler.scale(loss)), or the "
            "gradients are not unscaled before the step"
        )
    return True, f"{text}: the loss was scaled and the gradients unscaled before every step"


def amp_skips_nonfinite(run: ScriptRun) -> tuple[bool, str]:
    injected_at = AMP_INF_AT - 1
    for rank in run.ranks():
        injected = probe_records(run, rank, "inf_injected")
        if not injected:
            return False, (
                f"rank {rank} made no backward pass after {injected_at} optimizer steps: the "
                "overflow could not be injected"
            )
        passes = probe_records(run, rank, "backward")
        after = [p for p in passes if p["pstep"] >= injected_at]
        if len(after) < 2:
            return False, f"rank {rank}: no backward pass after the one with the inf gradient"
        if after[1]["pstep"] != injected_at:
            return False, (
                f"rank {rank}: the step with an inf gradient (loop step {AMP_INF_AT}) made an "
                "optimizer step; expected it skipped; likely cause: optimizer.step() called "
                "directly instead of scaler.step(optimizer), or no check for inf/nan"
            )
        bad = [
            r["pstep"]
            for r in step_records(run.observe_dir, rank)
            if not math.isfinite(r["post"].get("norm") or 0.0)
        ]
        if bad:
            return False, f"rank {rank}: parameters not finite after optimizer step {bad[0]}"
    found = scales(run)
    before, later = found.get(injected_at), found.get(injected_at + 1)
    if before is None or later is None:
        return False, (
            f"the step with the inf gradient was skipped, but no loss scale was seen around it "
            f"(scales: {_fmt_scales(found) or 'none'})"
        )
    text = (
        f"the inf gradient at loop step {AMP_INF_AT} made no optimizer step on any rank; the "
        f"scale went {before:.6g} -> {later:.6g}"
    )
    if not later < before:
        return False, (
            f"{text}; expected it lower after the overflow; likely cause: scaler.update() not "
            "called after scaler.step (or the scale not backed off on a skipped step)"
        )
    return True, f"{text} (backed off)"


def amp_scaler_resumed(
    reference: ScriptRun, killed: ScriptRun, relaunch: ScriptRun
) -> tuple[bool, str]:
    # the checkpoint after loop step 8 holds optimizer step 7 (the overflow at step 6 skipped),
    # or 8 when the overflow was not skipped (amp.skips_nonfinite says so)
    saved = (STRETCH_KILLED_AFTER - 1) // CKPT_EVERY * CKPT_EVERY
    ok, text, resumed = resumed_matches(reference, killed, relaunch, (saved - 1, saved))
    if resumed is None:
        return False, text
    u, r = scales(reference), scales(relaunch)
    if not u or min(u.values()) < 1.5:
        return False, f"{text}; no loss scale > 1 to compare (see amp.loss_scaled)"
    first = real_steps(step_records(relaunch.observe_dir, 0))
    pairs = [(rec["pstep"], resumed + i) for i, rec in enumerate(first, start=1)]
    for mine, theirs in pairs:
        if mine in r and theirs in u and not math.isclose(r[mine], u[theirs], rel_tol=1e-3):
            return False, (
                f"{text}; but the loss scale after the resume was {r[mine]:.6g} at optimizer "
                f"step {theirs}, the uninterrupted run's {u[theirs]:.6g}; expected the saved "
                "scale; likely cause: the scaler's state is not in the checkpoint or not "
                "restored (scaler.state_dict() / load_state_dict())"
            )
    if not ok:
        return False, text
    shown = u.get(resumed + 1)
    return (
        True,
        f"{text}; the loss scale after the resume was the saved one ({shown:.6g})"
        if shown
        else text,
    )


def amp_checks(runs: dict[str, ScriptRun]) -> list[Check]:
    run = runs["amp-w2"]
    failed = not_finished(run)
    checks = []
    for name, judge in (
        ("amp.autocast", amp_autocast),
        ("amp.loss_scaled", amp_loss_scaled),
        ("amp.skips_nonfinite", amp_skips_nonfinite),
    ):
        ok, detail = judge(run)
        if failed:
            ok, detail = False, f"{failed}; {detail}"
        checks.append(check(name, ok, detail))
    ok, detail = amp_scaler_resumed(run, runs["amp-kill"], runs["amp-resume"])
    checks.append(check("amp.scaler_resumed", ok, detail))
    return checks
