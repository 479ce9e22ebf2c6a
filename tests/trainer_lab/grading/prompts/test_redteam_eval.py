"""A red team's answers to the distributed-evaluation prompt (issue 37), written from the printed
contract alone, kept as tests: each right answer passes every phase; each wrong or gaming one
fails the check its bug breaks, graded only on the phases that verdict needs
(redteam_eval/expected.tsv). Real torchrun runs (lab marker)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.support.coding import failed
from trainer_lab.grading import grade
from trainer_lab.grading.prompts.evaluation import PHASES

pytestmark = pytest.mark.lab

ANSWERS = Path(__file__).parent / "redteam_eval"
SEED = 7  # one kill plan for every answer: a failure reproduces


def table() -> list[dict[str, str]]:
    lines = [
        x for x in (ANSWERS / "expected.tsv").read_text().splitlines() if not x.startswith("#")
    ]
    return list(csv.DictReader(lines, delimiter="\t"))


def test_the_table_names_every_kept_answer() -> None:
    assert sorted(row["file"] for row in table()) == sorted(p.name for p in ANSWERS.glob("*.py"))


def cases() -> list[object]:
    return [
        pytest.param(
            row,
            id=row["file"].removesuffix(".py"),
            marks=[pytest.mark.xfail(strict=True, reason=row["gap"])] if row["gap"] != "-" else [],
        )
        for row in table()
    ]


@pytest.mark.parametrize("row", cases())
def test_a_red_team_answer_gets_its_verdict(row: dict[str, str], tmp_path: Path) -> None:
    phases = PHASES if row["phases"] == "all" else tuple(row["phases"].split(","))
    script = tmp_path / "train.py"
    script.write_text((ANSWERS / row["file"]).read_text())
    result = grade(script, tmp_path / "out", phases, seed=SEED, prompt="eval").result
    failing = failed(result)
    why = [(c["name"], c["detail"]) for c in result["checks"] if not c["passed"]]
    if row["expected"] == "pass":
        assert failing == [], why
    else:
        assert set(row["check"].split("|")) & set(failing), (row["requirement"], why)
