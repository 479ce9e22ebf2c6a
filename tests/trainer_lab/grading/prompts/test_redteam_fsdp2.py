"""A red team's answers to the FSDP2-first prompt (issue 37), written from the printed contract
alone (benchmarks/redteam37/fsdp2/, its README and verdicts.tsv), kept as tests: each right
answer passes every phase, among them one whose DCP saves are asynchronous (its shards land
while the next step runs, its newest checkpoint may still be in flight at a kill); each wrong or
gaming answer fails the check its bug breaks, graded only on the phases that verdict needs:
files named like DCP's shards that the script torch.saved are no DCP save, and collectives that
carry no block's gradient make no per-block fully_shard. Real torchrun runs (lab marker)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.coding import failed
from trainer_lab.grading import grade
from trainer_lab.grading.prompts.fsdp2 import PHASES

pytestmark = pytest.mark.lab

ANSWERS = Path(__file__).parents[4] / "benchmarks" / "redteam37" / "fsdp2"
SEED = 7  # one kill plan for every answer: a failure reproduces


@dataclass(frozen=True)
class Verdict:
    fails: tuple[str, ...]  # the checks it must fail (none: it passes every phase)
    cause: str = ""  # in a failing check's detail


VERDICTS: dict[str, Verdict] = {
    "r1_stateful_sampler.py": Verdict(()),
    "r2_plain_sd_slicing.py": Verdict(()),
    "r3_async_pointer.py": Verdict(()),
    "w1_root_only_shard.py": Verdict(("sharded.per_block",), "fully_shard on the root only"),
    "w2_full_batch_every_rank.py": Verdict(
        ("sharded.trains", "reshard.global_batch"), "GLOBAL_BATCH // W"
    ),
    "w3_no_completeness_check.py": Verdict(("dcp.atomic",), "not atomic"),
    "w4_resume_restarts_epoch.py": Verdict(("reshard.global_batch",), "data position restarted"),
    "g1_fake_dcp_fullstate.py": Verdict(("dcp.every_rank_writes",), "not a DCP save"),
    "g2_rootonly_dummy_collectives.py": Verdict(
        ("sharded.per_block",), "no reduce-scatter of each block's gradient"
    ),
}


def test_the_table_names_every_kept_answer() -> None:
    assert sorted(VERDICTS) == sorted(p.name for p in ANSWERS.glob("*.py"))


@pytest.mark.parametrize("name", sorted(VERDICTS), ids=lambda n: n.removesuffix(".py"))
def test_a_red_team_answer_gets_its_verdict(name: str, tmp_path: Path) -> None:
    verdict = VERDICTS[name]
    phases = tuple(p for p in PHASES if any(n.startswith(f"{p}.") for n in verdict.fails))
    script = tmp_path / "train.py"
    script.write_text((ANSWERS / name).read_text())
    result = grade(script, tmp_path / "out", phases or PHASES, seed=SEED, prompt="fsdp2").result
    failing = failed(result)
    why = [(c["name"], c["detail"]) for c in result["checks"] if not c["passed"]]
    if not verdict.fails:
        assert failing == [], why
        return
    assert set(verdict.fails) <= set(failing), why
    details = " ".join(c["detail"] for c in result["checks"] if c["name"] in verdict.fails)
    assert verdict.cause in details, why
