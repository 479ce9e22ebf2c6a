"""Red-team answers to the preemption prompt (issue 37) that the grader once judged wrong, kept
as tests (benchmarks/redteam37/preemption, verdicts.tsv): each is graded on the phases its
verdict needs and gets its verdict, failing the check its bug breaks. Real torchrun runs (lab
marker).

- w5_force_quit_fileobj: a force-quit handler (sys.exit on the second SIGTERM) and a save in
  place through a file object: the second SIGTERM now comes during any write into the checkpoint
  dir, so the cut-short file is left as the newest checkpoint;
- g2b_no_comm_calibrated: ranks that never communicate, each stopping by a rule on its own
  signal's timing: the stop phase's second run (the other rank first, the late rank's signal two
  steps later) puts them at different steps;
- r1_flag_allreduce_atomic: a right answer saving through a file object, tmp + rename: the second
  SIGTERM lands in its save and it still passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.coding import failed, grade_prompt_source
from tests.support.paths import REPO
from trainer_lab.usercode import protocol

pytestmark = pytest.mark.lab

ANSWERS = REPO / "benchmarks" / "redteam37" / "preemption"
SEED = 7  # rank 1 first in "term" and "term-again", rank 0 first in "term-late"

# answer -> (phases graded, the checks it must fail: none for a right answer)
CASES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "w5_force_quit_fileobj": (("again",), ("again.resumes_complete",)),
    "g2b_no_comm_calibrated": (("stop",), ("stop.exits_0_in_grace", "stop.stop_together")),
    "r1_flag_allreduce_atomic": (("again",), ()),
    # the second round (README): DataLoader workers read ahead and interleave; a batch counts
    # when the DataLoader hands it over
    "s2_right_dataloader": (("requeue",), ()),
    "s2_right_dataloader_epochs": (("requeue",), ()),
    "s2_gaming_spawn_wrong_order": (("requeue",), ("requeue.drill_data_order",)),
}


def graded(name: str, phases: tuple[str, ...], tmp_path: Path) -> dict:
    source = (ANSWERS / f"{name}.py").read_text()
    return grade_prompt_source(source, tmp_path, phases, SEED, "preemption")


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_red_team_answer_gets_its_verdict(name: str, tmp_path: Path) -> None:
    phases, fails = CASES[name]
    result = graded(name, phases, tmp_path)
    why = [(c["name"], c["detail"]) for c in result["checks"] if not c["passed"]]
    assert failed(result) == sorted(fails), why
    if "again" in phases:  # the second SIGTERM came during a write of the save (a file object)
        sent = result["observations"]["sigterm"]["term-again"]
        assert any(
            r["why"].startswith(protocol.TERM_DURING_SAVE) for rank in sent.values() for r in rank
        ), sent
    if name == "g2b_no_comm_calibrated":  # the first run alone cannot tell it from agreement
        together = next(c for c in result["checks"] if c["name"] == "stop.stop_together")
        assert together["detail"].startswith("term-late: last step begun")
        assert "no agreement" in together["detail"]
        steps = together["facts"]
        assert len(set(steps["steps"].values())) == 1, steps
    if name == "s2_gaming_spawn_wrong_order":  # its spawned workers' reads are seen
        order = next(c for c in result["checks"] if c["name"] == "requeue.drill_data_order")
        assert "read samples []" not in order["detail"], order["detail"]
