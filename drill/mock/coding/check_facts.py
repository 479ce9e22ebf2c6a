"""The facts of a grading as the follow-up questions use them, read from the checks' `facts`
(trainer_lab.grading.facts documents the keys), never from their details: a detail is prose for
people and may be reworded.

    checks = read_checks(result)        # CheckSeen per check shaped like one
    run_facts(checks)                   # {"": the whole run's facts, "torn": its own}

A result written before checks carried facts yields neutral phrases ("its checkpoint files"),
its details quoted whole and no likely cause; whether a check ran is then told by the detail's
"not run:" prefix (was_run), the one fallback.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trainer_lab.grading import (
    BATCH_SIZE,
    CKPT_EVERY,
    DATASET_SIZE,
    RESTART_KILLED_AFTER,
    TEAR_AFTER,
)

MAX_QUOTE = 260  # characters of a check's evidence quoted in a question
MAX_DETAIL = 20_000  # characters of a check's detail read (the grader's are far shorter)
NOT_RUN = "not run:"  # how a check not run starts its detail (results without facts only)


def clean(text: object, limit: int = MAX_QUOTE) -> str:
    """One line of shown text: control characters replaced by a visible placeholder, runs of
    white space collapsed, cut at `limit` characters (at a word, with an ellipsis)."""
    raw = " ".join(str(text).split())
    shown = "".join("\ufffd" if unicodedata.category(ch) == "Cc" else ch for ch in raw)
    if len(shown) <= limit:
        return shown
    cut = shown[:limit].rsplit(" ", 1)[0] or shown[:limit]
    return cut.rstrip(",;: ") + " ..."


def facts_of(check: Mapping[str, Any]) -> Mapping[str, Any]:
    """A check's facts ({} when it has none, or something else)."""
    facts = check.get("facts")
    return facts if isinstance(facts, Mapping) else {}


def was_run(check: Mapping[str, Any]) -> bool:
    """False for a check that was not run (its phase skipped, the file not compiled)."""
    if "facts" in check:
        return not facts_of(check).get("not_run")
    return not str(check.get("detail", "")).startswith(NOT_RUN)  # a result from before facts


def _int(facts: Mapping[str, Any], key: str) -> int | None:
    value = facts.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(facts: Mapping[str, Any], key: str) -> float | None:
    value = facts.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _texts(value: object, limit: int) -> list[str]:
    return [clean(v, limit) for v in value if isinstance(v, str)] if isinstance(value, list) else []


@dataclass(frozen=True)
class CheckSeen:
    name: str
    passed: bool
    detail: str
    facts: Mapping[str, Any] = field(default_factory=dict, compare=False)
    graded: bool = True  # False for a check that was not run (its phase skipped, not compiled)

    @property
    def family(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def evidence(self) -> str:
        """What the run showed, as quoted (without the likely cause); a result from before
        facts: the detail whole."""
        given = self.facts.get("evidence")
        return clean(given if isinstance(given, str) else self.detail)

    @property
    def likely_cause(self) -> str:
        return clean("; ".join(_texts(self.facts.get("causes"), 320)), 320)

    @property
    def hang(self) -> bool:
        return self.facts.get("hang") is True

    @property
    def no_optimizer_step(self) -> bool:
        return self.facts.get("no_optimizer_step") is True


def read_checks(result: Mapping[str, Any]) -> list[CheckSeen]:
    """The result's checks, skipping anything not shaped like one."""
    checks = result.get("checks") if isinstance(result, Mapping) else None
    found = []
    for c in checks if isinstance(checks, list) else []:
        if (
            isinstance(c, Mapping)
            and isinstance(c.get("name"), str)
            and isinstance(c.get("passed"), bool)
        ):
            detail = str(c.get("detail", ""))[:MAX_DETAIL]
            found.append(CheckSeen(c["name"][:100], c["passed"], detail, facts_of(c), was_run(c)))
    return found


def resume_phrase(facts: Mapping[str, Any]) -> str | None:
    """How a relaunch started, as the verb phrase `your run ...` continues with (None: the
    facts do not say)."""
    if "resumed_after" not in facts:
        return None
    resumed = _int(facts, "resumed_after")
    if resumed is None:
        if facts.get("made_no_step") is True:
            return "made no optimizer step at all"
        return "started from weights that match no step of the uninterrupted run"
    text = (
        "started again from the initial weights (step 0)"
        if resumed == 0
        else f"started again from the weights after step {resumed}"
    )
    printed = _int(facts, "first_step_line")
    if printed is not None:
        text += f" and printed step {printed} first"
    return text


def _position(step: int, world: int) -> str:
    per_epoch = max(1, DATASET_SIZE // world // BATCH_SIZE)
    epoch, done = divmod(step, per_epoch)
    return f"the start of epoch {epoch}" if done == 0 else f"{done} steps into epoch {epoch}"


def _writes(facts: Mapping[str, Any]) -> str:
    writes = facts.get("checkpoint_writes")
    if not isinstance(writes, list):
        return "its checkpoint files"
    shown = [
        f"{w.get('path')} after step {w.get('step')}" for w in writes if isinstance(w, Mapping)
    ]
    return clean(", ".join(shown) or "none", 160)


def _ids(facts: Mapping[str, Any], key: str) -> str | None:
    ids = facts.get(key)
    return clean(str(ids), 60) if isinstance(ids, list) else None


def run_facts(checks: list[CheckSeen]) -> dict[str, dict[str, str]]:
    """The facts the checks carry (numbers as text): "" the whole run's, a grader phase's own
    where they differ."""
    by_name = {c.name: c.facts for c in checks}
    restart = by_name.get("restart.resumes_at_checkpoint", {})
    expected = _int(restart, "expected_step")
    if expected is None:
        expected = (RESTART_KILLED_AFTER - 1) // CKPT_EVERY * CKPT_EVERY
    resumed = _int(restart, "resumed_after")
    resumed = resumed if resumed is not None else expected
    replay = by_name.get("restart.no_replay_or_skip", {})
    replay_rank, replay_step = _int(replay, "rank"), _int(replay, "step")
    again = _int(replay, "already_trained")
    diff = _int(by_name.get("restart.matches_uninterrupted", {}), "first_diff_step")
    killed_rank, killed_after = _int(restart, "killed_rank"), _int(restart, "killed_after")
    common = {
        "killed_rank": str(killed_rank if killed_rank is not None else 1),
        "killed_after": str(killed_after if killed_after is not None else RESTART_KILLED_AFTER),
        "expected_step": str(expected),
        "resumed_step": str(resumed),
        "next_step": str(resumed + 1),
        "w2_position": _position(resumed, 2),
        "w3_position": _position(resumed, 3),
        "steps_per_epoch_w2": str(DATASET_SIZE // 2 // BATCH_SIZE),
        "steps_per_epoch_w3": str(DATASET_SIZE // 3 // BATCH_SIZE),
        "batch": str(BATCH_SIZE),
        "global_batch_w2": str(BATCH_SIZE * 2),
        "global_batch_w3": str(BATCH_SIZE * 3),
        "global_batch_64": str(BATCH_SIZE * 64),
        "ckpt_writes": _writes(restart),
        "replay_rank": str(replay_rank if replay_rank is not None else 1),
        "replay_step": str(replay_step if replay_step is not None else resumed + 1),
        "replay_fetched": _ids(replay, "fetched") or "other samples",
        "replay_expected": _ids(replay, "expected") or "other ones",
        "replay_what": (
            "a different batch"
            if not again
            else f"{again} of them already trained on before the checkpoint"
        ),
        "diff_step": str(diff) if diff is not None else "after the resume",
        "resume_phrase": resume_phrase(restart) or "started again",
    }
    tears = by_name.get("torn.previous_checkpoint_used", {}).get("tears")
    tear = tears[0] if isinstance(tears, list) and tears and isinstance(tears[0], Mapping) else {}
    size, whole = _int(tear, "bytes"), _int(tear, "of")
    loss = by_name.get("skeleton.loss_falls", {})
    first, last = _float(loss, "loss_first"), _float(loss, "loss_last")
    made = _int(by_name.get("skeleton.exits", {}), "optimizer_steps")
    common.update(
        {
            "torn_file": (
                clean(tear["path"], 80)
                if isinstance(tear.get("path"), str)
                else f"the save after step {TEAR_AFTER}"
            ),
            "torn_bytes": f"{size} of {whole}" if size is not None else "part of its",
            "loss_first": f"{first:.4g}" if first is not None else "its first value",
            "loss_last": f"{last:.4g}" if last is not None else "its last",
            "single_steps": str(made) if made is not None else "its",
        }
    )
    # the torn phase's relaunch is another run than the restart phase's
    return {"": common, "torn": {"resume_phrase": resume_phrase(tear) or "started again"}}


def logged_phases(checks: list[CheckSeen]) -> list[str]:
    """The phase names of the step lines, as the monitoring check saw them."""
    facts = next((c.facts for c in checks if c.name == "monitoring.named_phases"), {})
    return _texts(facts.get("phases"), 40)[:12]
