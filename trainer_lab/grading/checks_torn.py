"""Checks of the torn-checkpoint phase: a save torn on one rank or on every rank must send the
relaunch back to the previous complete one
(trainer_lab/grading/checks_restart.py lines a relaunch up with the uninterrupted run)."""

from __future__ import annotations

from typing import Any

from trainer_lab.grading.checks_restart import (
    ranks_disagree,
    resume_checks,
    resume_facts,
    resumed_after,
)
from trainer_lab.grading.checks_run import failed_run_detail
from trainer_lab.grading.contract import CKPT_EVERY, TEAR_AFTER
from trainer_lab.result import Check
from trainer_lab.usercode.evidence import save_events, step_lines, step_records
from trainer_lab.usercode.harness import ScriptRun
from trainer_lab.usercode.verdict import check


def torn_checks(reference: ScriptRun, tears: list[tuple[ScriptRun, ScriptRun]]) -> list[Check]:
    """Each (torn run, relaunch): the k-th file of the save after the plan's tear step was torn
    (on its tear_rank alone, or on every rank)."""
    used_ok, finish_ok = True, True
    used_text: list[str] = []
    used_facts: list[dict[str, Any]] = []  # as used_text: the failed ones first
    finish_text: list[str] = []
    u_last = max((r["pstep"] for r in step_records(reference.observe_dir, 0)), default=0)
    for torn, relaunch in tears:
        k = torn.launch.faults.tear_write
        tear_after = torn.launch.faults.tear_write_after or TEAR_AFTER
        alone = torn.launch.faults.tear_rank
        expected = tear_after - CKPT_EVERY
        events = save_events(torn.observe_dir, torn.ranks())
        tear = next((e for e in events if e["event"] == "torn"), None)
        if tear is None:
            detail = (
                f"no file write into --ckpt-dir after step {tear_after} (write {k}) was seen: "
                f"{failed_run_detail(torn)}; expected a checkpoint save after step {tear_after}"
            )
            return [
                check("torn.previous_checkpoint_used", False, detail),
                check("torn.finishes", False, detail),
            ]
        whose = f", on rank {alone} alone" if alone is not None else ""
        prefix = (
            f"killed while writing {tear['path']} (file {k} written after step {tear['pstep']}, "
            f"{tear.get('bytes')} of {tear.get('of')} bytes on disk{whose}), relaunched"
        )
        split = ranks_disagree(reference, relaunch)
        if alone is not None and split is None and resumed_after(reference, relaunch) == tear_after:
            # one rank's save torn, the others' complete: when they hold the whole state (each
            # rank a full copy), every rank resuming from the torn step is as good
            expected = tear_after
        resumed, evidence = resume_checks(reference, torn, relaunch, expected, prefix)
        facts = {
            "path": tear["path"],
            "write": k,
            "written_after": tear["pstep"],
            "bytes": tear.get("bytes"),
            "of": tear.get("of"),
            **resume_facts(reference, torn, relaunch),
        }
        if split is not None:  # what rank 0's weights say is not the cause then
            evidence = f"{evidence.split('; likely cause: ')[0]}; likely cause: {split}"
        elif resumed is None and relaunch.status != "ok":
            evidence = evidence.split("; likely cause: ")[0] + (
                "; likely cause: the relaunch took the torn save for complete (its completeness "
                "test passed before every file of the save was in)"
            )
        if resumed != expected:
            used_ok = False
            if resumed is not None and resumed > expected and "likely cause" not in evidence:
                evidence += "; likely cause: a torn checkpoint was taken for complete"
            used_text.insert(0, evidence)
            used_facts.insert(0, facts)
        else:
            used_text.append(evidence)
            used_facts.append(facts)
        r_steps = step_records(relaunch.observe_dir, 0)
        reached = (resumed or 0) + len(r_steps)
        lines = step_lines(relaunch.stdout_path(0)).lines
        last_line = lines[-1]["step"] if lines else None
        ok = relaunch.status == "ok" and resumed is not None and reached == u_last
        ok = ok and last_line in (None, u_last)
        text = (
            f"write {k}: relaunch {failed_run_detail(relaunch)}, reached step {reached} "
            f"(expected exactly {u_last})"
        )
        if not ok:
            finish_ok = False
            if split is not None:
                text += f"; likely cause: {split}"
            elif reached > u_last:
                text += "; likely cause: --steps counted from the resume instead of from step 0"
            elif relaunch.status != "ok":
                text += "; likely cause: the relaunch loaded the torn file"
            finish_text.insert(0, text)
        else:
            finish_text.append(text)
    return [
        check(
            "torn.previous_checkpoint_used", used_ok, " | ".join(used_text), {"tears": used_facts}
        ),
        check("torn.finishes", finish_ok, " | ".join(finish_text)),
    ]
