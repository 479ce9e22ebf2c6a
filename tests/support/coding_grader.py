"""A stand-in for the coding screen's grade(): it replays a saved real grading (the fixtures under
tests/drill/mock/coding/fixtures) instead of launching the script, so screen tests run in
milliseconds."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from trainer_lab.grading.variants import load_variants

FIXTURES = Path(__file__).resolve().parents[1] / "drill" / "mock" / "coding" / "fixtures"
BROKEN = "sampler-position-not-saved"


def fake_grader(name: str, source: str, graded: list[tuple[str, ...]]):
    """grade() as the coding screen calls it, writing a saved real grading (all phases; fewer
    when fewer were asked for) and the workspace copy of the script it ran."""

    def grade(script, out_dir, phases, cancel):
        graded.append(tuple(phases))
        result: dict[str, Any] = json.loads((FIXTURES / f"followups-{name}.json").read_text())
        result["checks"] = [c for c in result["checks"] if c["name"].split(".")[0] in phases]
        (out_dir / "workspace").mkdir(parents=True)
        (out_dir / "workspace" / "train.py").write_text(source)
        (out_dir / "result.json").write_text(json.dumps(result))
        return result

    return grade


def broken_source() -> str:
    return next(v for v in load_variants() if v.id == BROKEN).source()


def broken_replay_facts() -> tuple[str, str, str]:
    """(the ids rank 0 fetched, the step, the step resumed after) that the saved grading of the
    broken variant quotes in restart.no_replay_or_skip: what its follow-up must name."""
    result = json.loads((FIXTURES / f"followups-{BROKEN}.json").read_text())
    seen = next(c["detail"] for c in result["checks"] if c["name"] == "restart.no_replay_or_skip")
    found = re.search(r"step (\d+) \(resumed after (\d+)\): fetched (\[[^\]]*\])", seen)
    assert found, seen
    step, resumed, fetched = found.groups()
    return fetched, step, resumed
