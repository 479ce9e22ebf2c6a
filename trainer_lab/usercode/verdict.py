"""A graded run of user code as a lab result (torch-free), shared by the coding-round grader
(trainer_lab.grading) and the exercise runner (trainer_lab.exercises.runner).

    result = begin(lab, params, world_size, out_dir)
    source = read_script(path); error = syntax_error(source, name)    # trainer_lab.usercode.source
    if error: not_compiled(result, check_names, error)                # no run at all
    else:     write_workspace(...); run; result["checks"] = [...]
    return finish(result, out_dir, started)                          # tally, status, result.json
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer_lab.result import Check, LabResult, new_result, write_result


def check(name: str, passed: bool, detail: str, facts: Mapping[str, Any] | None = None) -> Check:
    """A check; `facts`: what it saw as data (trainer_lab.result.Check)."""
    made: Check = {"name": name, "passed": bool(passed), "detail": detail}
    if facts is not None:
        made["facts"] = dict(facts)
    return made


def verdict_parts(detail: str) -> list[str]:
    """A check's detail per run it judged: `W=2: ...; W=3: ...` per world size, `... | ...` per
    torn file; else the detail whole."""
    if " | " in detail:
        return detail.split(" | ")
    return [s for s in re.split(r"; (?=W=\d+: )", detail) if s]


@dataclass(frozen=True)
class SharedReason:
    """A reason several failed checks quote word for word, shown once (shared_reasons)."""

    number: int
    text: str
    checks: tuple[str, ...]

    @property
    def label(self) -> str:
        """What the checks' details say in its place."""
        return f"reason {self.number}"

    @property
    def affects(self) -> str:
        return f"affects {len(self.checks)} checks: {', '.join(self.checks)}"


SHARED_MIN_CHARS = 40  # a shorter text is cheaper to repeat than to refer to


def shared_reasons(result: Mapping[str, Any]) -> tuple[list[SharedReason], list[Check]]:
    """The reasons two or more failed checks quote (a failed run's summary, why a phase was not
    run or fails as a whole: observations "shared_reasons"), each once with the checks it
    affects, in check order; and the checks with each such reason replaced by its label."""
    checks: list[Check] = [
        check(str(c.get("name", "")), bool(c.get("passed")), str(c.get("detail", "")))
        for c in result.get("checks") or []
        if isinstance(c, Mapping)
    ]
    # quoted text -> its group: launches whose summaries differ only in numbers (a hang at W=2
    # stops every W=2 launch, each after its own seconds) are one reason
    group_of: dict[str, str] = {}
    names: dict[str, list[str]] = {}  # group -> the launches quoting it
    first: dict[str, str] = {}  # group -> the first quoted text
    for launch in result.get("launches") or []:
        if not isinstance(launch, Mapping) or launch.get("status") in ("ok", None):
            continue
        cause = launch.get("root_cause")
        if isinstance(cause, Mapping) and cause.get("kind") == "planned":
            continue  # a planned kill is no reason for a failure
        summary = str(launch.get("summary") or "")
        group = "run " + re.sub(r"\d+(\.\d+)?", "#", summary)
        group_of.setdefault(summary, group)
        first.setdefault(group, summary)
        names.setdefault(group, []).append(str(launch.get("name")))
    observations = result.get("observations") or {}
    for text in [observations.get("not_run"), *(observations.get("shared_reasons") or [])]:
        if isinstance(text, str):
            group_of.setdefault(text, text)
            first.setdefault(text, text)
    texts = {
        group: f"{'run' if len(names[group]) == 1 else 'runs'} {', '.join(names[group])}: {quoted}"
        if group in names
        else quoted
        for group, quoted in first.items()
    }
    hits: dict[str, set[int]] = {}
    for quoted, group in group_of.items():
        if len(quoted) >= SHARED_MIN_CHARS:
            hit = {i for i, c in enumerate(checks) if not c["passed"] and quoted in c["detail"]}
            hits.setdefault(group, set()).update(hit)
    tokens: dict[str, str] = {}
    for quoted in sorted(group_of, key=len, reverse=True):  # a summary may quote a shorter one
        group = group_of[quoted]
        if len(quoted) < SHARED_MIN_CHARS or len(hits.get(group, ())) < 2:
            continue
        token = tokens.setdefault(group, f"\x00{len(tokens)}\x00")
        for i in hits[group]:
            checks[i]["detail"] = checks[i]["detail"].replace(quoted, token)
    found: list[tuple[str, str, list[int]]] = [  # (token, text, indexes of the checks)
        (token, texts[group], [i for i, c in enumerate(checks) if token in c["detail"]])
        for group, token in tokens.items()
    ]
    found = [f for f in found if f[2]]
    reasons = []
    for number, (token, text, hit) in enumerate(sorted(found, key=lambda f: f[2][0]), 1):
        reason = SharedReason(number, text, tuple(checks[i]["name"] for i in hit))
        reasons.append(reason)
        for i in hit:
            checks[i]["detail"] = checks[i]["detail"].replace(token, reason.label)
    return reasons, checks


def begin(lab: str, params: dict[str, Any], world_size: int, out_dir: Path) -> LabResult:
    """A new result; user code runs on CPU, so the backend is gloo when it runs distributed."""
    result = new_result(lab, params, world_size, out_dir)
    result["env"]["backend"] = "gloo" if world_size else None
    return result


def not_compiled(result: LabResult, names: Iterable[str], error: str) -> None:
    """Every check fails with the compile error: a file that does not compile is never run."""
    result["checks"] = [
        check(name, False, f"not run: {error}", {"not_run": True}) for name in names
    ]
    result["observations"] = {"syntax_error": error}


def write_workspace(workspace: Path, texts: Mapping[str, str], copies: Iterable[Path] = ()) -> None:
    """The run's cwd: the user's text (a copy, so edits made during the run do not race it) and
    the given files."""
    workspace.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (workspace / name).write_text(text)
    for path in copies:
        shutil.copyfile(path, workspace / path.name)


def finish(
    result: LabResult, out_dir: Path, started: float, extra: Mapping[str, Any] | None = None
) -> LabResult:
    """Count the checks that held, set the status (ok only when every check held; a cancelled
    run stays cancelled), add `extra` to the observations, then write out_dir/result.json."""
    passed = sum(c["passed"] for c in result["checks"])
    result["observations"].update(
        {"checks_passed": passed, "checks_total": len(result["checks"]), **(extra or {})}
    )
    if result["status"] != "cancelled":
        result["status"] = "ok" if passed == len(result["checks"]) else "failed"
    result["duration_s"] = round(time.monotonic() - started, 3)
    write_result(out_dir, result)
    return result
