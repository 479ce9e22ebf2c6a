"""Follow-up questions from a grading's evidence and the script's code
(drill.mock.coding.followups) and `drill mock followups FILE`. Fast: gradings are fixtures saved
from real ones (the model answer
and its sampler-position-not-saved variant, every phase); the lab test at the end grades both
for real and checks that the fixtures still have the real shape."""

from __future__ import annotations

import copy
import json
import re
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import drill.cli.main as cli_main
from decks import bundled_deck_paths
from drill.cli import mock as mock_cli
from drill.cli import mock_followups, mock_grade
from drill.mock.coding.followup_table import (
    FACT_KEYS,
    FAILED,
    GATE_NO_OPTIMIZER_STEP,
    GATE_NOT_COMPILED,
    HANG,
    WHAT_IF,
    WHAT_IF_ORDER,
)
from drill.mock.coding.followups import (
    FAILED_KIND,
    FROM_CODE_KIND,
    WHAT_IF_KIND,
    follow_ups,
    inspect_source,
    iter_card_ids,
    read_checks,
    template_facts,
)
from trainer_lab.grading import CHECK_NAMES, PHASES, model_answer_source
from trainer_lab.grading.facts import evidence_facts
from trainer_lab.grading.variants import load_variants

FIXTURES = Path(__file__).parent / "fixtures"
BROKEN = "sampler-position-not-saved"


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"followups-{name}.json").read_text())


def variant_source(variant_id: str) -> str:
    return next(v for v in load_variants() if v.id == variant_id).source()


def detail(result: dict[str, Any], name: str) -> str:
    return next(c["detail"] for c in result["checks"] if c["name"] == name)


def facts(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c["facts"] for c in result["checks"] if c["name"] == name)


def with_check(
    result: dict[str, Any], name: str, passed: bool, text: str, **facts: Any
) -> dict[str, Any]:
    """The result with check `name` as the grader writes it: its detail, the facts every check
    carries (trainer_lab.grading.facts) and its own `facts`."""
    changed = copy.deepcopy(result)
    for c in changed["checks"]:
        if c["name"] == name:
            c["passed"], c["detail"] = passed, text
            c["facts"] = {**evidence_facts(c), **facts}
    return changed


def assert_well_formed(questions: list) -> None:
    assert 3 <= len(questions) <= 5, [q.id for q in questions]
    assert len({q.id for q in questions}) == len(questions)
    order = {FAILED_KIND: 0, WHAT_IF_KIND: 1, FROM_CODE_KIND: 2}
    kinds = [order[q.kind] for q in questions]
    assert kinds == sorted(kinds), [q.kind for q in questions]  # failed first
    for q in questions:
        assert 3 <= len(q.rubric) <= 5, (q.id, q.rubric)
        assert q.cards and q.question and q.source_check
        assert not re.search(r"\{[a-z_0-9]+\}", q.question + " ".join(q.rubric))  # unfilled
        assert not re.search(r"[\x00-\x1f\x7f-\x9f]", q.question + " ".join(q.rubric))


# -- the table -------------------------------------------------------------------------------


def bundled_card_ids() -> set[str]:
    ids = set()
    for path in bundled_deck_paths():
        ids.update(card["id"] for card in yaml.safe_load(path.read_text())["cards"])
    return ids


def test_every_card_the_table_links_exists_in_the_bundled_decks():
    linked = list(iter_card_ids())
    assert len(linked) > 20
    assert sorted(set(linked) - bundled_card_ids()) == []


def all_templates():
    return [*FAILED.values(), GATE_NOT_COMPILED, GATE_NO_OPTIMIZER_STEP, HANG, *WHAT_IF.values()]


def test_each_template_uses_known_facts_and_has_a_3_to_5_item_rubric():
    for t in all_templates():
        for text in (t.text, t.lead, *t.rubric):
            fields = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
            assert fields <= FACT_KEYS, (t.id, fields - FACT_KEYS)
        assert 3 <= len(t.rubric) <= 5, t.id
        assert len(t.cards) == len(set(t.cards)) >= 2, t.id
    # a failed check's rubric leaves room for the grader's likely cause in front
    assert all(len(t.rubric) <= 4 for t in (*FAILED.values(), HANG))
    assert set(FAILED) == {n for names in CHECK_NAMES.values() for n in names}
    assert set(WHAT_IF) == set(WHAT_IF_ORDER) == set(PHASES)
    assert all(t.check in CHECK_NAMES[phase] for phase, t in WHAT_IF.items())


@pytest.mark.parametrize(
    "source", [model_answer_source(), "", "def broken(:\n"], ids=["model", "empty", "syntax"]
)
def test_every_fact_is_filled_for_every_phase(source):
    for result in (fixture("model-answer"), fixture(BROKEN), {}):
        facts = template_facts(read_checks(result), inspect_source(source))
        for family in PHASES:
            assert FACT_KEYS - {"evidence"} <= set(facts[family]), family
            assert all(isinstance(v, str) and v for v in facts[family].values())


# -- the model answer and a broken variant ---------------------------------------------------


def test_a_correct_and_a_broken_script_get_different_questions():
    good = follow_ups(fixture("model-answer"), model_answer_source())
    bad = follow_ups(fixture(BROKEN), variant_source(BROKEN))
    assert_well_formed(good)
    assert_well_formed(bad)
    assert [q.kind for q in good] == [WHAT_IF_KIND] * 5
    assert [q.id for q in good] == [WHAT_IF[f].id for f in WHAT_IF_ORDER]
    assert bad[0].kind == FAILED_KIND
    assert bad[0].source_check == "restart.no_replay_or_skip"
    assert "restart.matches_uninterrupted" in bad[0].question  # the phase's other failure
    assert [q.id for q in good] != [q.id for q in bad]
    # the restart phase held for the model answer: its what-if; failed for the variant: no what-if
    assert "what-if-world-size-change" in {q.id for q in good}
    assert "what-if-world-size-change" not in {q.id for q in bad}
    # deterministic
    assert follow_ups(fixture(BROKEN), variant_source(BROKEN)) == bad


def test_a_failed_check_question_quotes_the_runs_own_facts():
    result = fixture(BROKEN)
    seen = detail(result, "restart.no_replay_or_skip")
    rank, step, fetched, expected = re.search(
        r"rank (\d+), step (\d+) \(resumed after \d+\): fetched (\[[^\]]*\]), the "
        r"uninterrupted run (\[[^\]]*\])",
        seen,
    ).groups()
    q = follow_ups(result, variant_source(BROKEN))[0]
    assert f"rank {rank} fetched {fetched} for step {step}" in q.question
    assert f"the uninterrupted run fetched {expected}" in q.question
    resumed = re.search(r"\(resumed after (\d+)\)", seen).group(1)
    assert f"After your resume from step {resumed}" in q.question
    assert q.evidence and q.evidence in seen
    # the grader's likely cause leads the rubric
    assert q.rubric[0] == (
        "Names the cause the run points to: sampler position not restored (other samples "
        "after the resume)"
    )
    assert "map-sampler-state-correctness" in q.cards


def test_a_resume_from_scratch_is_asked_with_its_numbers():
    """The issue's example: killed after step 9, the relaunch started again at step 0."""
    text = (
        "rank 1 SIGKILLed after step 13, relaunched: resumed from the weights after step 0 "
        "(expected 12), first step line 1 (expected 13); checkpoint writes seen: "
        "ckpt_4.pt after step 4, ckpt_8.pt after step 8, ckpt_12.pt after step 12; likely "
        "cause: the checkpoint's weights were not loaded (the relaunch started from the "
        "initial weights)"
    )
    writes = [{"path": f"ckpt_{s}.pt", "step": s} for s in (4, 8, 12)]
    result = with_check(
        fixture("model-answer"),
        "restart.resumes_at_checkpoint",
        False,
        text,
        killed_rank=1,
        killed_after=13,
        expected_step=12,
        resumed_after=0,
        first_step_line=1,
        checkpoint_writes=writes,
        made_no_step=False,
    )
    questions = follow_ups(result, model_answer_source())
    assert_well_formed(questions)
    q = questions[0]
    assert (q.id, q.kind, q.source_check) == (
        "resume-where",
        FAILED_KIND,
        "restart.resumes_at_checkpoint",
    )
    assert "Rank 1 was killed after step 13" in q.question
    assert "The newest complete checkpoint was step 12" in q.question
    assert "started again from the initial weights (step 0) and printed step 1 first" in (
        q.question
    )
    assert (
        "ckpt_4.pt after step 4, ckpt_8.pt after step 8, ckpt_12.pt after step 12" in (q.rubric[1])
    )
    assert "the checkpoint's weights were not loaded" in q.rubric[0]


def test_rank_0_killed_reads_as_rank_0():
    text = re.sub(
        r"rank \d+ SIGKILLed after step \d+",
        "rank 0 SIGKILLed after step 5",
        detail(fixture("model-answer"), "restart.resumes_at_checkpoint"),
    )
    result = with_check(
        fixture("model-answer"),
        "restart.resumes_at_checkpoint",
        True,
        text,
        **{
            **facts(fixture("model-answer"), "restart.resumes_at_checkpoint"),
            "killed_rank": 0,
            "killed_after": 5,
        },
    )
    world = next(q for q in follow_ups(result, "") if q.id == "what-if-world-size-change")
    assert "rank 0 was killed after step 5" in world.question


def test_a_torn_save_and_a_missing_phase_quote_their_evidence():
    result = fixture("model-answer")
    torn = (
        "killed while writing step-000008.pt (file 1 written after step 8, 512 of 20480 bytes "
        "on disk), relaunched: resumed from the weights after step 8 (expected 4), first step "
        "line 9 (expected 5); checkpoint writes seen: step-000004.pt after step 4; likely "
        "cause: an incomplete (torn) checkpoint was taken for complete"
    )
    tear = {
        "path": "step-000008.pt",
        "write": 1,
        "written_after": 8,
        "bytes": 512,
        "of": 20480,
        "resumed_after": 8,
        "first_step_line": 9,
        "made_no_step": False,
    }
    result = with_check(result, "torn.previous_checkpoint_used", False, torn, tears=[tear])
    phases = (
        "step 1: phases is {'data': 0.0017, 'compute': 0.0035}; expected >= 3 named phases, "
        "each a number of seconds >= 0"
    )
    result = with_check(
        result, "monitoring.named_phases", False, phases, phases=["data", "compute"]
    )
    questions = follow_ups(result, model_answer_source())
    assert_well_formed(questions)
    assert [q.source_check for q in questions[:2]] == [
        "torn.previous_checkpoint_used",
        "monitoring.named_phases",
    ]
    assert "while it wrote step-000008.pt (512 of 20480 bytes on disk)" in questions[0].question
    assert "started again from the weights after step 8" in questions[0].question
    assert "Your step lines had 2 phases" in questions[1].question
    assert "'compute': 0.0035" in questions[1].question
    # the phases that held still ask their what-ifs, but not the two that failed
    ids = [q.id for q in questions[2:]]
    assert ids == ["what-if-world-size-change", "what-if-optimizer-under-fsdp", "what-if-64-ranks"]


# -- what-ifs name the script's own design ---------------------------------------------------


def test_what_ifs_name_the_model_answers_own_design():
    by_id = {q.id: q for q in follow_ups(fixture("model-answer"), model_answer_source())}
    save = by_id["what-if-70b-checkpoint"].question
    assert "written by rank 0 alone with torch.save to a temp file, then renamed" in save
    assert "holding step, model, optimizer and rng" in save
    assert "with Adam that is about 840 GB" in save
    assert "relaunch started again from the weights after step 4" in save  # the torn run's
    world = by_id["what-if-world-size-change"]
    killed = re.search(
        r"SIGKILLed after step (\d+)",
        detail(fixture("model-answer"), "restart.resumes_at_checkpoint"),
    ).group(1)
    resumed = re.search(r"went on from step (\d+)", world.question).group(1)
    assert f"killed after step {killed}" in world.question
    assert f"step {int(resumed) + 1} read" in world.question
    assert "the saved 'step'" in world.question
    assert "the same step reads as the start of epoch 4" in world.rubric[0]  # 16 = 4 x 4
    straggler = by_id["what-if-straggler"]
    assert "(data, forward, backward, optimizer, checkpoint_and_log)" in straggler.question
    assert "your 'backward' phase" in straggler.rubric[0]
    fsdp = by_id["what-if-optimizer-under-fsdp"].question
    assert "You train with Adam over DistributedDataParallel" in fsdp
    assert "two moments per parameter" in fsdp
    first, last = re.search(
        r"loss (\S+) -> (\S+)", detail(fixture("model-answer"), "skeleton.loss_falls")
    ).groups()
    assert f"{first} to {last} in 24 steps" in by_id["what-if-64-ranks"].question
    assert "Adam at lr 0.01" in by_id["what-if-64-ranks"].question


OTHER_DESIGN = """
import torch, torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.optim import SGD as Optim
from torch.distributed.fsdp import fully_shard

def main(model, rank):
    fully_shard(model)
    opt = Optim(model.parameters(), lr=0.5, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, 10)
    timings = {}
    timings["fetch"] = 1.0
    timings["fwd"] = 2.0
    timings["bwd_allreduce"] = 3.0
    print({"step": 1, "phases": timings})
    dcp.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3,
              "sampler_offset": 40}, checkpoint_id="ckpt")
"""


def test_what_ifs_follow_another_design():
    result = fixture("model-answer")
    result = with_check(
        result,
        "monitoring.named_phases",
        True,
        "3 phases on all 16 step lines: bwd_allreduce, fetch, fwd",
        phases=["bwd_allreduce", "fetch", "fwd"],
    )
    by_id = {q.id: q for q in follow_ups(result, OTHER_DESIGN)}
    fsdp = by_id["what-if-optimizer-under-fsdp"].question
    assert "You train with SGD over FSDP (fully_shard)" in fsdp
    assert "momentum buffer" in fsdp and "already sharded" in fsdp
    save = by_id["what-if-70b-checkpoint"].question
    assert "saved with torch.distributed.checkpoint, every rank writing its part" in save
    assert "about 560 GB" in save  # fp32 weights + one momentum buffer
    assert "its 'sampler_offset' entry" in by_id["what-if-world-size-change"].question
    straggler = by_id["what-if-straggler"]
    assert "(fetch, fwd, bwd_allreduce)" in straggler.question  # the source's order
    assert "your 'bwd_allreduce' phase" in straggler.rubric[0]
    assert "'fetch' phase" in straggler.rubric[3]
    assert "SGD at lr 0.5" in by_id["what-if-64-ranks"].question


@pytest.mark.parametrize(
    ("code", "guard"),
    [
        ("if rank == 0:\n    torch.save(s, p)\n", True),
        ("if dist.get_rank() == 0:\n    torch.save(s, p)\n", True),
        ("def save(s, p, rank):\n    if rank != 0:\n        return\n    torch.save(s, p)\n", True),
        ("if is_main:\n    torch.save(s, p)\n", True),
        ("if not rank:\n    torch.save(s, p)\n", True),
        ("torch.save(s, p)\n", False),
        ("if rank == 0:\n    pass\nelse:\n    torch.save(s, p)\n", False),
        ("if rank:\n    torch.save(s, p)\n", False),
        ("x = 1\n", None),
    ],
)
def test_the_save_guard_is_read_from_the_tree(code, guard):
    facts = inspect_source("import torch\nimport torch.distributed as dist\n" + code)
    assert facts.parsed
    assert facts.rank0_save is guard


def test_aliases_schedulers_and_renames_are_read():
    facts = inspect_source(
        "import torch.optim as o\nfrom pathlib import Path\nimport os\n"
        "opt = o.AdamW(params, lr=3e-4)\nsched = o.lr_scheduler.CosineAnnealingLR(opt, 5)\n"
        "torch.save(x, tmp)\ntmp.rename(final)\nos.fsync(fd)\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\nm = DDP(m)\n"
    )
    assert facts.optimizers == ["AdamW"]
    assert facts.lr == "0.0003"
    assert facts.renames and facts.fsync
    assert facts.wrappers == ["DistributedDataParallel"]
    assert inspect_source("'a'.replace('a', 'b')\n").renames is False  # str.replace: 2 args


# -- 3-5 questions, whatever comes in --------------------------------------------------------


def gated(result: dict[str, Any]) -> dict[str, Any]:
    """Every check failed for want of an optimizer step (the grader's gate)."""
    changed = copy.deepcopy(result)
    head = (
        "no optimizer step seen (w2 exited 0 without one); expected a torch.optim optimizer "
        "step per training step"
    )
    for c in changed["checks"]:
        c["passed"] = False
        c["detail"] = (
            f"{head}; observed: {c['detail']}; likely cause: the parameters are not updated by "
            "a torch.optim optimizer"
        )
        c["facts"] = {**evidence_facts(c), "no_optimizer_step": True, "evidence": head}
    return changed


def not_compiled(result: dict[str, Any]) -> dict[str, Any]:
    names = [c["name"] for c in result["checks"]]
    error = "train.py:3: SyntaxError: invalid syntax"
    return {
        "lab": "mock-coding",
        "status": "failed",
        "checks": [
            {"name": n, "passed": False, "detail": f"not run: {error}", "facts": {"not_run": True}}
            for n in names
        ],
        "observations": {"syntax_error": error, "checks_passed": 0, "checks_total": len(names)},
    }


def only_phase(result: dict[str, Any], phase: str) -> dict[str, Any]:
    changed = copy.deepcopy(result)
    changed["checks"] = [c for c in changed["checks"] if c["name"].startswith(f"{phase}.")]
    return changed


def without_facts(result: dict[str, Any]) -> dict[str, Any]:
    """A result written before checks carried facts."""
    changed = copy.deepcopy(result)
    for c in changed["checks"]:
        del c["facts"]
    return changed


def garbage_facts(result: dict[str, Any]) -> dict[str, Any]:
    """Every fact of the wrong type (a hand-edited or foreign result file)."""
    changed = copy.deepcopy(result)
    wrong = [None, "x\x1b[31m", 3.5, True, [None], {"a": 1}]
    for i, c in enumerate(changed["checks"]):
        c["facts"] = {k: wrong[(i + j) % len(wrong)] for j, k in enumerate(c["facts"])}
        c["facts"]["tears"] = [{"path": 3, "bytes": "many", "resumed_after": "x"}, 7]
    changed["checks"][0]["facts"] = "not a mapping"
    return changed


def reworded(result: dict[str, Any]) -> dict[str, Any]:
    """Every check's detail in other words (its facts unchanged)."""
    changed = copy.deepcopy(result)
    for c in changed["checks"]:
        c["detail"] = f"the grader now says this otherwise: {c['name']} [{len(c['detail'])}]"
    return changed


def skeleton_hung(result: dict[str, Any]) -> dict[str, Any]:
    """The one-process run hung: later phases were not run."""
    changed = copy.deepcopy(result)
    for c in changed["checks"]:
        c["passed"] = False
        if c["name"].startswith("skeleton."):
            c["detail"] = (
                "hang: no rank made progress for 8 s (optimizer steps done: rank 0: 3), killed "
                "after 8 s (rank 0: in barrier (a collective) called at train.py:40); expected "
                "an optimizer step at least every 8 s"
            )
        else:
            c["detail"] = "not run: the one-process run did not finish; later phases were not run"
        c["facts"] = evidence_facts(c)
    return changed


HOSTILE_SOURCES = {
    "syntax error": "def f(:\n    pass\n",
    "null bytes": "import torch\x00\n",
    "deep nesting": "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n",
    "deep lists": "x = " + "[" * 300 + "]" * 300 + "\n",
    "long sum": "x = " + "1+" * 100_000 + "1\n",
    "unary chain": "x = " + "-" * 50_000 + "1\n",
    "binop depth 500": "x = " + "a+" * 500 + "1\n",
    "huge": "x = {'a': 1}\n" * 200_000,
    "many dicts": "d = {'phases': {'a': 1}}\n" * 2_000,
    "empty": "",
    "control characters": "print({'phases': {'da\\x1bta': 1, 'f\\u0085wd': 2, 'bwd': 3}})\n",
    "not text": None,
}
RESULTS = {
    "model answer": lambda: fixture("model-answer"),
    "broken": lambda: fixture(BROKEN),
    "gated": lambda: gated(fixture("model-answer")),
    "not compiled": lambda: not_compiled(fixture("model-answer")),
    "only restart": lambda: only_phase(fixture(BROKEN), "restart"),
    "only monitoring": lambda: only_phase(fixture("model-answer"), "monitoring"),
    "skeleton hung": lambda: skeleton_hung(fixture("model-answer")),
    "empty": dict,
    "garbage": lambda: {"checks": [1, None, {"name": 3}, {"name": "x.y", "passed": "no"}]},
    "not a list": lambda: {"checks": "all good", "observations": []},
    "huge detail": lambda: with_check(
        fixture(BROKEN), "torn.previous_checkpoint_used", False, "killed while writing (" * 50_000
    ),
    "unknown check": lambda: {"checks": [{"name": "restart.new", "passed": False, "detail": ""}]},
    "written before facts": lambda: without_facts(fixture(BROKEN)),
    "garbage facts": lambda: garbage_facts(fixture(BROKEN)),
}


@pytest.mark.parametrize("result_name", sorted(RESULTS))
@pytest.mark.parametrize("source_name", sorted(HOSTILE_SOURCES))
def test_always_three_to_five_well_formed_questions(result_name, source_name):
    result, source = RESULTS[result_name](), HOSTILE_SOURCES[source_name]
    questions = follow_ups(result, source)
    assert_well_formed(questions)
    assert follow_ups(result, source) == questions


@pytest.mark.parametrize(
    ("result", "source"),
    [
        (lambda: fixture("model-answer"), model_answer_source),
        (lambda: fixture(BROKEN), lambda: variant_source(BROKEN)),
        (lambda: gated(fixture("model-answer")), str),
        (lambda: skeleton_hung(fixture("model-answer")), model_answer_source),
    ],
    ids=["model-answer", BROKEN, "gated", "hung"],
)
def test_the_questions_read_the_checks_facts_not_their_details(result, source):
    """Details are prose for people: reworded, the run's facts and the questions stay."""
    graded, text = result(), source()
    before = template_facts(read_checks(graded), inspect_source(text))
    after = template_facts(read_checks(reworded(graded)), inspect_source(text))
    assert after == before
    assert follow_ups(reworded(graded), text) == follow_ups(graded, text)


def test_a_result_written_before_facts_gets_neutral_phrases_and_the_details_quoted():
    questions = follow_ups(without_facts(fixture(BROKEN)), variant_source(BROKEN))
    assert_well_formed(questions)
    first = questions[0]
    assert first.source_check == "restart.no_replay_or_skip"
    assert "rank 1 fetched other samples" in first.question  # no fact: a neutral phrase
    assert first.evidence == detail(fixture(BROKEN), "restart.no_replay_or_skip")
    assert not first.rubric[0].startswith("Names the cause")


def test_a_gated_or_uncompiled_script_gets_one_question_for_it_not_one_per_phase():
    questions = follow_ups(gated(fixture("model-answer")), "")
    assert [q.kind for q in questions] == [FAILED_KIND, FROM_CODE_KIND, FROM_CODE_KIND]
    assert questions[0].id == "no-optimizer-step"
    assert "no optimizer step seen (w2 exited 0 without one)" in questions[0].question
    assert "observed" not in questions[0].question
    questions = follow_ups(not_compiled(fixture("model-answer")), "def f(:\n")
    assert questions[0].id == "does-not-compile"
    assert "train.py:3: SyntaxError: invalid syntax" in questions[0].question
    assert [q.kind for q in questions[1:]] == [FROM_CODE_KIND, FROM_CODE_KIND]
    # asked from the code alone, a what-if claims nothing the grading did not show
    assert all("Your save survived" not in q.question for q in questions)


def test_a_hang_asks_about_the_collective_and_a_skipped_phase_asks_nothing():
    questions = follow_ups(skeleton_hung(fixture("model-answer")), model_answer_source())
    assert questions[0].id == "hang-skeleton"
    assert "in barrier (a collective) called at train.py:40" in questions[0].question
    assert "expected an optimizer step" not in questions[0].question
    assert [q.kind for q in questions[1:]] == [FROM_CODE_KIND, FROM_CODE_KIND]


def test_control_characters_in_the_evidence_and_the_source_are_replaced():
    result = with_check(
        fixture("model-answer"), "skeleton.exits", False, "error: rank 0: \x1b[31mboom\x07 x"
    )
    questions = follow_ups(result, HOSTILE_SOURCES["control characters"])
    assert "\ufffd[31mboom\ufffd x" in questions[0].question
    assert_well_formed(questions)


def test_the_source_is_never_run(tmp_path):
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w').write('x')\nimport torch\ntorch.save(1, 'p')\n"
    follow_ups(fixture("model-answer"), source)
    assert not marker.exists()


# -- the command -----------------------------------------------------------------------------


@pytest.fixture
def drill(monkeypatch):
    """`drill` with `mock followups` registered (as drill/cli/mock.py will register it)."""
    real = mock_cli.register

    def register(subparsers: Any) -> None:
        real(subparsers)
        mock_parser = subparsers._name_parser_map["mock"]
        (sub,) = mock_parser._subparsers._group_actions
        if "followups" not in sub._name_parser_map:
            mock_followups.register(sub)

    monkeypatch.setattr(mock_cli, "register", register)
    return cli_main.main


@pytest.fixture
def fake_grade(monkeypatch):
    """The grader giving a saved grading (as trainer_lab's would), recording what it was asked."""
    calls: list[dict[str, Any]] = []

    def grade(script, out_dir, phases, **options):
        calls.append({"script": script, "phases": list(phases), **options})
        return fixture(BROKEN if Path(script).name == "broken.py" else "model-answer")

    monkeypatch.setattr(mock_grade, "grade_script", grade)
    return calls


def test_followups_json_prints_the_questions(drill, fake_grade, tmp_path, capsys):
    script = tmp_path / "broken.py"
    script.write_text(variant_source(BROKEN))
    assert drill(["mock", "followups", str(script), "--json", "--phase", "restart"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert fake_grade[0]["phases"] == ["restart"] and "on_progress" not in fake_grade[0]
    assert out["status"] == "failed" and out["checks_passed"] == 13
    assert 3 <= len(out["followups"]) <= 5
    first = out["followups"][0]
    assert first["source_check"] == "restart.no_replay_or_skip"
    assert set(first) == {"id", "kind", "question", "rubric", "cards", "source_check", "evidence"}


def test_followups_prints_checks_questions_rubrics_and_cards(drill, fake_grade, tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_text(model_answer_source())
    assert drill(["mock", "followups", str(script)]) == 0
    out = capsys.readouterr().out
    assert "PASS  restart.resumes_at_checkpoint" in out
    assert "15/15 checks hold; 5 follow-up questions:" in out
    assert "1. [what-if: torn.previous_checkpoint_used] what-if-70b-checkpoint" in out
    assert out.count("A good answer states:") == 5
    assert "Cards: llm-sharded-checkpoints-dcp" in out
    assert max(len(line) for line in out.splitlines()) <= 100


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["mock", "followups"], "usage: drill mock followups FILE [--phase P] [--json]"),
        (["mock", "followups", "/no/such/train.py"], "no such file: /no/such/train.py"),
        (["mock", "followups", "x.py", "--phase", "warmup"], "unknown phase 'warmup'; phases:"),
    ],
)
def test_followups_errors_are_one_line(drill, capsys, argv, message):
    assert drill(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("drill: error")]) == 1


def test_followups_help_explains(drill, capsys):
    with pytest.raises(SystemExit) as exit_:
        drill(["mock", "followups", "--help"])
    assert exit_.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("usage: drill mock followups ")
    assert "rubric a good answer states" in out and "never run" in out
    assert "--json" in out and "--phase" in out


def test_the_command_and_the_domain_import_nothing_heavy():
    code = (
        "import sys, json, drill.mock.coding.followups, drill.cli.mock_followups; "
        "heavy = ('torch', "
        "'numpy', 'sqlmodel', 'textual', 'rich', 'yaml', 'pydantic'); "
        "print(json.dumps([m for m in heavy if m in sys.modules]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


# -- the real gradings (lab) -----------------------------------------------------------------


def small(result: dict[str, Any]) -> dict[str, Any]:
    observations = {k: v for k, v in result["observations"].items() if k != "limits"}
    return {
        "lab": result["lab"],
        "status": result["status"],
        "params": {"phases": result["params"]["phases"]},
        "checks": result["checks"],
        "observations": observations,
    }


def shape(result: dict[str, Any], source: str) -> tuple[list, dict]:
    """Check names and verdicts, and the facts read from the details, with the numbers that vary
    between runs masked (a detail's wording may vary: notes on the run, e.g. a slow teardown)."""
    masked = {
        family: {k: re.sub(r"\d+(\.\d+)?", "N", v) for k, v in facts.items()}
        for family, facts in template_facts(read_checks(result), inspect_source(source)).items()
    }
    return [(c["name"], c["passed"]) for c in result["checks"]], masked


@pytest.mark.lab
@pytest.mark.parametrize(
    ("name", "source"),
    [("model-answer", model_answer_source), (BROKEN, lambda: variant_source(BROKEN))],
    ids=["model-answer", BROKEN],
)
def test_real_gradings_have_the_fixtures_shape_and_their_own_questions(name, source, tmp_path):
    """Set DRILL_WRITE_FIXTURES=1 to rewrite the fixtures from these gradings."""
    import os

    from tests.support.coding import grade_source

    result = grade_source(source(), tmp_path, tuple(CHECK_NAMES))
    if os.environ.get("DRILL_WRITE_FIXTURES") == "1":
        path = FIXTURES / f"followups-{name}.json"
        path.write_text(json.dumps(small(result), indent=1) + "\n")
    assert shape(small(result), source()) == shape(fixture(name), source())
    questions = follow_ups(result, source())
    assert_well_formed(questions)
    if name == BROKEN:
        assert questions[0].source_check == "restart.no_replay_or_skip"
        fetched = re.search(r"fetched (\[[^\]]*\])", detail(result, "restart.no_replay_or_skip"))
        assert fetched and fetched.group(1) in questions[0].question
    else:
        assert [q.kind for q in questions] == [WHAT_IF_KIND] * 5
