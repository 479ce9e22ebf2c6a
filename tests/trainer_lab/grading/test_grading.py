"""Grading is tested like a product: the model answer passes every check, the starter fails,
each known-broken variant fails exactly the checks it should, and hostile code gets a clear
verdict. Real torchrun runs (lab marker); each test runs only the phases it needs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.support.coding import detail, failed, grade_source
from trainer_lab.grading import CHECK_NAMES, get_prompt, model_answer_source, starter_source
from trainer_lab.grading.contract import RESTART_STEPS, fault_plan
from trainer_lab.grading.variants import load_variants
from trainer_lab.result import read_result
from trainer_lab.usercode.stall import STALL_S

pytestmark = pytest.mark.lab

ALL_CHECKS = sorted(name for names in CHECK_NAMES.values() for name in names)


def test_the_model_answer_passes_every_check(tmp_path):
    result = grade_source(model_answer_source(), tmp_path, tuple(CHECK_NAMES))
    assert failed(result) == [], [c for c in result["checks"] if not c["passed"]]
    assert sorted(c["name"] for c in result["checks"]) == ALL_CHECKS
    assert result["status"] == "ok"
    assert "bit-identical" in detail(result, "restart.matches_uninterrupted")
    assert read_result(tmp_path / "out") == result
    # the lab contract's per-rank events, per launch: steps with the ids fetched for them
    w2 = tmp_path / "out" / "runs" / "w2"
    events = [json.loads(line) for line in (w2 / "events-rank1.jsonl").read_text().splitlines()]
    assert [e["step"] for e in events] == list(range(1, RESTART_STEPS + 1))
    assert all(len(e["sample_ids"]) == 4 for e in events)
    rank0 = [json.loads(line) for line in (w2 / "events-rank0.jsonl").read_text().splitlines()]
    assert all(e["loss"] is not None and len(e["phases"]) == 5 for e in rank0)
    resumed = (tmp_path / "out" / "runs" / "resume" / "events-rank0.jsonl").read_text()
    plan = fault_plan(result["seed"])  # type: ignore[typeddict-item]
    first = json.loads(resumed.splitlines()[0])["step"]
    assert first == plan.resume_step + 1  # the script's own step numbers
    assert {launch["name"] for launch in result["launches"]} == {
        "single",
        "w2",
        "w3",
        "kill",
        "resume",
        "tear",
        "tear-resume",
        "single-other-data",
        "w3-reference",
        "w3-at-w2",
    }


@pytest.mark.parametrize("variant", load_variants(), ids=lambda v: v.id)
def test_each_broken_variant_fails_exactly_its_checks(variant, tmp_path):
    """Graded on every phase (not only those its change reaches): no other check may fail."""
    result = grade_source(variant.source(), tmp_path, tuple(CHECK_NAMES))
    assert sorted(c["name"] for c in result["checks"]) == ALL_CHECKS
    assert failed(result) == sorted(variant.expect), [
        (c["name"], c["detail"]) for c in result["checks"] if not c["passed"]
    ]


def test_the_causes_of_a_bad_resume_are_told_apart(tmp_path):
    by_id = {v.id: v for v in load_variants()}
    causes = {}
    for name in ("no-rng-state", "no-optimizer-state", "sampler-position-not-saved"):
        result = grade_source(by_id[name].source(), tmp_path / name, ("restart",))
        causes[name] = " ".join(result["observations"]["likely_causes"])
    assert "RNG stream shifted" in causes["no-rng-state"]
    assert "optimizer state" not in causes["no-rng-state"]
    assert "optimizer state not restored" in causes["no-optimizer-state"]
    assert "RNG" not in causes["no-optimizer-state"]
    assert "sampler position" in causes["sampler-position-not-saved"]


def test_the_starter_fails_the_skeleton(tmp_path):
    # it exits 0 without an optimizer step: every check of the phase fails for that reason
    result = grade_source(starter_source(), tmp_path, ("skeleton",))
    assert failed(result) == sorted(CHECK_NAMES["skeleton"])
    assert "no optimizer step seen" in detail(result, "skeleton.exits")
    assert "no JSON step lines on stdout (1 other lines)" in detail(result, "skeleton.json_lines")


def test_an_import_error_names_the_line(tmp_path):
    result = grade_source("import os\nimport nosuch_pkg\n", tmp_path, ("skeleton",))
    assert failed(result) == sorted(CHECK_NAMES["skeleton"])
    exits = detail(result, "skeleton.exits")
    assert "ModuleNotFoundError: No module named 'nosuch_pkg' (train.py:2)" in exits


HANG = """\
import os, time
import torch.distributed as dist
dist.init_process_group("gloo")
if dist.get_rank() == 0:
    dist.barrier()
else:
    while True:
        time.sleep(0.1)
"""


def test_a_hang_in_a_collective_meets_the_deadline_and_is_named(tmp_path):
    result = grade_source(HANG, tmp_path, ("distributed",), timeout_s=15)
    assert failed(result) == sorted(CHECK_NAMES["distributed"])
    text = detail(result, "distributed.params_in_sync")
    assert "W=2: deadline: killed after 15 s" in text
    assert "rank 0: in barrier (a collective) called at train.py:5" in text
    assert "rank 1: running <module> at train.py:8" in text


FIXTURES = Path(__file__).parent / "fixtures"


def test_a_second_correct_answer_in_another_style_passes_every_check(tmp_path):
    """Hand-written ReduceOp.AVG all-reduce, SGD + StepLR, BytesIO saves into a renamed dir."""
    source = get_prompt("ddp").second_answer()
    result = grade_source(source, tmp_path, tuple(CHECK_NAMES))
    assert failed(result) == [], [c for c in result["checks"] if not c["passed"]]
    # each of the save's three files was torn once (file-level writes, not torch.save calls)
    names = {launch["name"] for launch in result["launches"]}
    assert {"tear", "tear-2", "tear-3", "tear-2-resume", "tear-3-resume"} <= names


def test_a_script_without_torch_fails_every_phase_with_no_optimizer_step(tmp_path):
    source = (FIXTURES / "wrong_no_torch.py").read_text()
    for phase in ("skeleton", "monitoring", "restart", "distributed"):
        result = grade_source(source, tmp_path / phase, (phase,))
        assert failed(result) == sorted(CHECK_NAMES[phase]), phase
        assert all("no optimizer step seen" in c["detail"] for c in result["checks"]), phase


def test_a_script_that_learns_nothing_fails(tmp_path):
    source = (FIXTURES / "wrong_learns_nothing.py").read_text()
    result = grade_source(source, tmp_path, ("skeleton",))
    assert failed(result) == ["skeleton.loss_falls"]
    assert "bit-identical to the normal run's" in detail(result, "skeleton.loss_falls")


def test_a_lost_lr_scheduler_is_named_by_its_learning_rates_not_adam(tmp_path):
    source = get_prompt("ddp").second_answer()
    lost = '    sched.load_state_dict(state["sched"])\n'
    assert source.count(lost) == 1
    result = grade_source(source.replace(lost, ""), tmp_path, ("restart",))
    assert failed(result) == ["restart.matches_uninterrupted"]
    causes = " ".join(result["observations"]["likely_causes"])
    # every plan resumes at step 16: the optimizer restored the LR it held (0.1 x 0.7^3), then
    # the fresh StepLR (step_size 5) kept it where the uninterrupted run's decayed at step 21
    assert "the LR at step 21 was 0.0343, the uninterrupted run's 0.02401" in causes
    assert "Adam" not in causes


def test_a_script_that_hangs_in_the_skeleton_is_graded_fast(tmp_path):
    start = time.monotonic()
    source = "import time\nwhile True:\n    time.sleep(0.1)\n"
    result = grade_source(source, tmp_path, tuple(CHECK_NAMES))
    assert time.monotonic() - start < 60
    assert failed(result) == ALL_CHECKS
    later = detail(result, "restart.matches_uninterrupted")
    assert later.startswith("not run: the one-process run did not finish (deadline")
    assert "later phases were not run" in later


def test_a_script_that_hangs_only_at_w2_is_graded_within_a_minute_and_names_the_hang(tmp_path):
    """One process passes the skeleton; under torchrun rank 0 waits in a barrier the other ranks
    never reach. Every W>=2 launch is stopped once no rank makes progress (stall.py), not at its
    deadline, and says where each rank waited."""
    source = (FIXTURES / "wrong_hangs_at_w2.py").read_text()
    lines = source.splitlines()
    barrier = lines.index("        dist.barrier()  # the bug: a collective only rank 0 reaches") + 1
    reduce = lines.index("            dist.all_reduce(mean_loss)") + 1
    start = time.monotonic()
    result = grade_source(source, tmp_path, tuple(CHECK_NAMES))
    assert time.monotonic() - start < 60
    hung = {*CHECK_NAMES["distributed"], *CHECK_NAMES["restart"], *CHECK_NAMES["torn"]}
    assert hung <= set(failed(result))
    assert not set(CHECK_NAMES["skeleton"]) & set(failed(result))
    text = detail(result, "distributed.params_in_sync")
    quiet = f"no rank made progress for {STALL_S:.0f} s"
    assert f"W=2: hang: {quiet} (optimizer steps done: rank 0: 4, rank 1: 4)" in text
    assert f"rank 0: in barrier (a collective) called at train.py:{barrier}" in text
    assert f"rank 1: in all_reduce (a collective) called at train.py:{reduce}" in text
    assert f"W=3: hang: {quiet}" in text
    assert "probably the ranks wait for each other" in text
    causes = result["observations"]["likely_causes"]
    assert causes[0].startswith("the ranks wait for each other: a collective")
    launches = {launch["name"]: launch for launch in result["launches"]}
    for name in ("w2", "w3", "kill", "resume", "tear", "tear-resume"):
        assert launches[name]["status"] == "timeout", name
        assert launches[name]["root_cause"]["kind"] == "hang", name
        assert launches[name]["duration_s"] < 40, name  # the deadline is 90 s


OS_WRITE_TMP = '    tmp = ckpt_dir / f".{final.name}.tmp-{os.getpid()}"\n'


def test_an_atomic_save_written_with_os_write_passes_the_torn_checks(tmp_path):
    """os.open / os.write into a temp file, fsync, os.replace: the tear cuts the temp file, the
    previous checkpoint is used."""
    source = (FIXTURES / "right_os_write_atomic.py").read_text()
    result = grade_source(source, tmp_path, ("torn",))
    assert failed(result) == [], [c for c in result["checks"] if not c["passed"]]
    used = detail(result, "torn.previous_checkpoint_used")
    assert used.startswith("killed while writing .step-000008.pt.tmp-"), used


def test_an_in_place_os_write_fails_the_torn_checks(tmp_path):
    """The same bytes written with os.write straight into the final name: the tear leaves half a
    step-8 checkpoint where the relaunch looks for the newest one."""
    source = (FIXTURES / "right_os_write_atomic.py").read_text()
    assert source.count(OS_WRITE_TMP) == 1
    in_place = source.replace(OS_WRITE_TMP, "    tmp = final  # in place\n")
    result = grade_source(in_place, tmp_path, ("torn",))
    assert failed(result) == sorted(CHECK_NAMES["torn"])
    used = detail(result, "torn.previous_checkpoint_used")
    assert used.startswith("killed while writing step-000008.pt"), used
    assert "the relaunch loaded the torn file" in detail(result, "torn.finishes")
