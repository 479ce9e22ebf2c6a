"""The stretch phases graded like products: each phase's model answer and a second right answer in
another style pass, each known-broken variant fails exactly its checks for its reason. Real
torchrun runs (lab marker), one phase per grading.

The throughput phase compares timings taken on this machine in the same grading: its right
answers pass at about 1x the model answer (target 0.7x), its slow variant runs at about 0.35x
(benchmarks/RESULTS-stretch.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.coding import detail, failed, grade_source
from trainer_lab.grading import STRETCH_CHECK_NAMES, STRETCH_PHASES, stretch_model_answer
from trainer_lab.grading.variants import load_stretch_variants, stretch_variant_source

pytestmark = pytest.mark.lab

FIXTURES = Path(__file__).parent / "fixtures"


def grade_phase(source: str, tmp_path: Path, phase: str) -> dict:
    result = grade_source(source, tmp_path, (phase,))
    assert sorted(c["name"] for c in result["checks"]) == sorted(STRETCH_CHECK_NAMES[phase])
    return result


# what each passing phase must show in its evidence (not only that it passed)
PASS_EVIDENCE = {
    "accum": ("accum.one_allreduce_per_step", "identical at the optimizer step: one all-reduce"),
    "amp": ("amp.skips_nonfinite", "the scale went 65536 -> 32768 (backed off)"),
    "fsdp2": ("fsdp2.resumes", "bit for bit"),
    "throughput": ("throughput.reported_matches_observed", "samples/s (harmonic mean"),
}


@pytest.mark.parametrize("phase", STRETCH_PHASES)
def test_each_stretch_model_answer_passes_its_phase(phase, tmp_path):
    result = grade_phase(stretch_model_answer(phase), tmp_path, phase)
    assert failed(result) == [], [(c["name"], c["detail"]) for c in result["checks"]]
    assert result["status"] == "ok"
    name, text = PASS_EVIDENCE[phase]
    assert text in detail(result, name)
    assert result["observations"]["phase_launch_seconds"][phase] > 0


SECOND_ANSWERS = {
    "accum": "stretch_accum_manual_allreduce.py",  # no DDP: one hand-written all-reduce, SGD
    "amp": "stretch_amp_own_scaler.py",  # a hand-written loss scaler
    "fsdp2": "stretch_fsdp2_full_state.py",  # root-only fully_shard, full state dict by rank 0
    "throughput": "stretch_throughput_window.py",  # samples/s over a moving window
}


@pytest.mark.parametrize("phase", STRETCH_PHASES)
def test_a_second_right_answer_in_another_style_passes(phase, tmp_path):
    source = (FIXTURES / SECOND_ANSWERS[phase]).read_text()
    result = grade_phase(source, tmp_path, phase)
    assert failed(result) == [], [(c["name"], c["detail"]) for c in result["checks"]]


# the reason each variant's first expected check names
VARIANT_REASONS = {
    "accum-no-no-sync": "after micro-batch 1's backward the gradients were already identical",
    "accum-loss-not-scaled": "the micro-batch loss is not divided by K",
    "accum-never-synced": "the optimizer stepped with gradients that differ between ranks",
    "fsdp2-optimizer-before-shard": "are plain tensors, not DTensors",
    "fsdp2-no-optimizer-state": "after step 9 the parameters differ",
    "fsdp2-gradients-summed": "gradients summed across ranks, not averaged",
    "amp-no-scaler-state": "the loss scale after the resume was 65536 at optimizer step 8",
    "amp-no-autocast": "none bfloat16",
    "amp-optimizer-steps-itself": "expected a scale > 1 on every step",
    "throughput-inflated-claim": "likely cause: the claim is inflated",
    "throughput-blocking-read": "expected >= 0.7x",
}


@pytest.mark.parametrize("variant", load_stretch_variants(), ids=lambda v: v.id)
def test_each_stretch_variant_fails_exactly_its_checks(variant, tmp_path):
    (phase,) = variant.phases
    result = grade_phase(stretch_variant_source(variant), tmp_path, phase)
    assert failed(result) == sorted(variant.expect), [
        (c["name"], c["detail"]) for c in result["checks"] if not c["passed"]
    ]
    assert VARIANT_REASONS[variant.id] in detail(result, variant.expect[0])


def test_an_all_reduce_by_hand_after_every_micro_batch_fails_the_count(tmp_path):
    """The second right answer with its one all-reduce moved into the micro-batch loop: the
    gradients become identical between micro-batches (K all-reduces per step)."""
    source = (FIXTURES / SECOND_ANSWERS["accum"]).read_text()
    once = "        if world > 1:\n            average_gradients(model)\n"
    each = "            micro_loss.backward()  # local only: nothing is sent here\n"
    assert source.count(once) == 1 and source.count(each) == 1
    source = source.replace(once, "").replace(
        each, each + "            if world > 1:\n                average_gradients(model)\n"
    )
    result = grade_phase(source, tmp_path, "accum")
    assert failed(result) == ["accum.one_allreduce_per_step"]
    text = detail(result, "accum.one_allreduce_per_step")
    assert "between micro-batch 1 and 2 the gradients became identical" in text


def test_the_rounds_answer_without_accumulation_fails_the_accum_phase(tmp_path):
    """The round's model answer does not know --accum-steps: argparse stops it (exit 2)."""
    from trainer_lab.grading import model_answer_source

    result = grade_phase(model_answer_source(), tmp_path, "accum")
    assert failed(result) == sorted(STRETCH_CHECK_NAMES["accum"])
    assert "unrecognized arguments: --accum-steps 4" in detail(result, "accum.micro_batches")


def test_a_stretch_phase_grades_beside_a_round_phase_and_probes_only_its_runs(tmp_path):
    """The accum answer is still the round's script: graded on monitoring and accum at once,
    both pass; only the runs that asked for the probes were probed."""
    from trainer_lab.grading import CHECK_NAMES

    result = grade_source(stretch_model_answer("accum"), tmp_path, ("monitoring", "accum"))
    names = [*CHECK_NAMES["monitoring"], *STRETCH_CHECK_NAMES["accum"]]
    assert sorted(c["name"] for c in result["checks"]) == sorted(names)
    assert failed(result) == [], [(c["name"], c["detail"]) for c in result["checks"]]
    runs = tmp_path / "out" / "runs"
    assert (runs / "accum-w2" / "observe" / "probes-rank1.jsonl").stat().st_size > 0
    for plain in ("w2", "accum-const"):
        assert not list((runs / plain / "observe").glob("probes-rank*")), plain
