"""The coding round's check facts: what each check saw, as data beside its detail (the result
contract's `Check.facts`). Readers (drill's follow-up questions and reports) read these keys and
never parse a detail, which is prose for people and may be reworded.

Every check of a grading (grader._finish adds these, the checks that build a detail add theirs):
- evidence: str        what the run showed, as quoted: the part of the detail that tells why it
                       failed (a W=3 failure after a W=2 pass), without its likely cause (nor, for
                       a hang, the general explanation of one)
- causes: list[str]    the likely causes the check names (empty when it held): set as data by
                       the check that wrote "likely cause: X" into its detail (cause_text
                       writes that clause from the list); read back from the detail
                       (causes_in) for the others (the torn and the stretch checks, a check
                       quoting a stall's summary, a result from before)
- hang: bool           the run it judged stopped as a hang, or at its deadline
- not_run: bool        the check was not run (its phase skipped, the file not compiled)
- no_optimizer_step: bool  its phase made no optimizer step (every check of it failed for that;
                       evidence is then that reason alone)

Per check (ints are global optimizer steps, counted from 1; "after step s": s steps done):
- skeleton.exits: optimizer_steps (int), steps_expected (int)
- skeleton.loss_falls: loss_first, loss_last (float: the means of the first and last steps)
- restart.resumes_at_checkpoint: killed_rank, killed_after, expected_step (the newest complete
  checkpoint), resumed_after (int | None: no step of the uninterrupted run), first_step_line
  (int | None), checkpoint_writes [{path, step}] (the last three), made_no_step (bool)
- restart.no_replay_or_skip (when it failed on other samples): rank, step, resumed_after,
  fetched, expected (the uninterrupted run's ids), already_trained (how many of fetched were
  trained on before the checkpoint)
- restart.matches_uninterrupted (when the parameters differ): first_diff_step
- torn.previous_checkpoint_used: tears, one per torn save, the failed ones first (as the detail):
  [{path, write, written_after, bytes, of, resumed_after, first_step_line, made_no_step}]
- monitoring.named_phases: phases (list[str], sorted; when every step line has them)
"""

from __future__ import annotations

from typing import Any

from trainer_lab.result import Check
from trainer_lab.usercode.verdict import verdict_parts

CAUSE = "likely cause: "
NOT_RUN = "not run:"
HANG_MARKERS = ("hang:", "deadline: killed")  # how ScriptRun.summary() starts for either
HANG_EXPLANATION = "; expected an optimizer step"  # what a hang's summary adds after its evidence
# words of a detail's part that tells why it failed (a part per world size or torn file)
FAILING_MARKERS = ("expected", "likely cause", "hang:", "error", "deadline", "timeout", "not run")


def causes_in(detail: str) -> list[str]:
    """The causes a detail names, each once: in each part of it (a world size's, a torn file's),
    what follows "likely cause: " ("; "-separated); a cause followed by more evidence in the
    same part is its first segment alone."""
    causes: list[str] = []
    for part in verdict_parts(detail):
        pieces = part.split(CAUSE)[1:]
        for i, piece in enumerate(pieces):
            named = piece.split("; ") if i == len(pieces) - 1 else piece.split("; ")[:1]
            causes += [n for n in (x.strip() for x in named) if n and n not in causes]
    return causes


def cause_text(causes: list[str]) -> str:
    """The detail's clause naming `causes` ("; likely cause: a; b"), for a check that also puts
    them in its facts (`causes`), so no reader needs to parse the clause back."""
    return f"; {CAUSE}{'; '.join(causes)}"


def causes_of(item: Check) -> list[str]:
    """The likely causes a failed check names: its facts' `causes` where the check set them,
    else read from its detail (causes_in: a detail built elsewhere, or a result from before)."""
    if item["passed"]:
        return []
    given = item.get("facts", {}).get("causes")
    if isinstance(given, list) and all(isinstance(c, str) for c in given):
        return list(given)
    return causes_in(item["detail"])


def failing_part(detail: str) -> str:
    """The part of a detail that tells why (a W=3 failure after a W=2 pass); else the first."""
    parts = verdict_parts(detail) or [detail]
    return next((p for p in parts if any(m in p for m in FAILING_MARKERS)), parts[0])


def evidence_facts(item: Check) -> dict[str, Any]:
    """The facts every check carries, derived where the grader wrote the detail."""
    detail = item["detail"]
    part = failing_part(detail)
    hang = any(m in part for m in HANG_MARKERS)
    evidence = part.split(f"; {CAUSE}")[0]
    if "hang:" in evidence:
        evidence = evidence.split(HANG_EXPLANATION)[0]
    return {
        "evidence": evidence,
        "causes": [] if item["passed"] else causes_in(detail),
        "hang": hang,
        "not_run": detail.startswith(NOT_RUN),
        "no_optimizer_step": False,
    }


def with_evidence_facts(item: Check) -> Check:
    """The check with the common facts added; what its builder set is kept."""
    return {**item, "facts": {**evidence_facts(item), **item.get("facts", {})}}
