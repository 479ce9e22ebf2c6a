"""The stretch phases' API, contracts, model answers, variants and launches, and their checks
judged on recorded evidence (written here as the harness writes it): no process is run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.coding import detail, failed, grade_source
from trainer_lab.grading import (
    PHASES,
    STRETCH_CHECK_NAMES,
    STRETCH_PHASES,
    stretch_contract,
    stretch_model_answer,
)
from trainer_lab.grading.grader import launches_for, to_launch
from trainer_lab.grading.stretch import ACCUM_K, AMP_INF_AT, STRETCH_LAUNCHES
from trainer_lab.grading.stretch_accum import accum_one_allreduce
from trainer_lab.grading.stretch_amp import amp_skips_nonfinite, scales
from trainer_lab.grading.stretch_throughput import throughput_reported
from trainer_lab.grading.variants import load_stretch_variants, stretch_variant_source
from trainer_lab.usercode import protocol
from trainer_lab.usercode.harness import ScriptLaunch, ScriptRun


def test_the_stretch_phases_are_not_the_rounds_phases():
    assert STRETCH_PHASES == ("accum", "amp", "fsdp2", "throughput")
    assert not set(STRETCH_PHASES) & set(PHASES)
    assert set(STRETCH_CHECK_NAMES) == set(STRETCH_PHASES)


CONTRACT_WORDS = {
    "accum": ("--accum-steps K", "ddp.no_sync()", "Divide each micro-batch's loss by K"),
    "amp": ('torch.autocast("cpu", dtype=torch.bfloat16)', 'GradScaler("cpu")', "float32"),
    "fsdp2": ("fully_shard", 'init_device_mesh("cpu", (W,))', "DTensor"),
    "throughput": ('"samples_per_s"', "over all\nranks", "70%"),
}


@pytest.mark.parametrize("phase", STRETCH_PHASES)
def test_each_contract_says_what_to_do_and_names_its_checks(phase):
    text = stretch_contract(phase)
    for words in CONTRACT_WORDS[phase]:
        assert words in text, words
    for name in STRETCH_CHECK_NAMES[phase]:
        assert name.split(".", 1)[1] in text, name
    assert "--ckpt-dir" in text or "round's contract" in text


def test_an_unknown_stretch_phase_is_a_clear_error():
    with pytest.raises(ValueError, match="not a stretch phase: 'skeleton'"):
        stretch_contract("skeleton")
    with pytest.raises(ValueError, match="not a stretch phase"):
        stretch_model_answer("fsdp")


@pytest.mark.parametrize("phase", STRETCH_PHASES)
def test_each_model_answer_compiles_and_keeps_the_rounds_arguments(phase):
    source = stretch_model_answer(phase)
    compile(source, "train.py", "exec")
    for arg in ("--steps", "--ckpt-dir", "--ckpt-every"):
        assert f'"{arg}"' in source


def test_every_stretch_variant_patch_applies_once_and_expects_its_phases_checks():
    variants = load_stretch_variants()
    assert {v.phases[0] for v in variants} == set(STRETCH_PHASES)
    for variant in variants:
        assert len(variant.phases) == 1, variant.id
        (phase,) = variant.phases
        source = stretch_variant_source(variant)
        assert source != stretch_model_answer(phase), variant.id
        compile(source, "train.py", "exec")
        assert variant.expect and set(variant.expect) <= set(STRETCH_CHECK_NAMES[phase])


def test_stretch_launches_run_after_what_they_continue_and_timings_alternate():
    names = [p.name for p in launches_for(["amp", "fsdp2"])]
    assert names.index("amp-kill") < names.index("amp-resume")
    assert names.index("fsdp-kill") < names.index("fsdp-resume")
    timed = launches_for(["throughput"])
    mine, ref = None, "throughput"
    assert [p.reference for p in timed] == [ref, mine, mine, ref, ref, mine]  # ABBAAB
    assert all(p.exclusive for p in timed)
    assert not any(p.exclusive for p in launches_for(["accum", "amp", "fsdp2"]))


def test_a_stretch_launch_carries_its_flags_probes_and_fault(tmp_path):
    script = tmp_path / "workspace" / "train.py"
    accum = to_launch(STRETCH_LAUNCHES["accum-w2"], script, tmp_path, 30)
    assert accum.args[-2:] == ("--accum-steps", str(ACCUM_K))
    assert dict(accum.extra_env) == {protocol.PROBES_ENV: "1"}
    amp = dict(to_launch(STRETCH_LAUNCHES["amp-kill"], script, tmp_path, 30).extra_env)
    assert amp[protocol.INF_AT_ENV] == str(AMP_INF_AT)
    plain = to_launch(STRETCH_LAUNCHES["fsdp-w2"], script, tmp_path, 30)
    assert plain.extra_env == () and "--accum-steps" not in plain.args
    reference = tmp_path / "reference-throughput" / "train.py"
    ref = to_launch(
        STRETCH_LAUNCHES["tput-reference"], script, tmp_path, 30, {"throughput": reference}
    )
    assert ref.script == reference
    assert to_launch(STRETCH_LAUNCHES["tput"], script, tmp_path, 30).script == script


def test_a_script_that_does_not_compile_fails_every_stretch_check_unrun(tmp_path):
    result = grade_source("def broken(:\n", tmp_path, ("accum", "fsdp2"))
    names = [*STRETCH_CHECK_NAMES["accum"], *STRETCH_CHECK_NAMES["fsdp2"]]
    assert failed(result) == sorted(names)
    assert detail(result, "fsdp2.resumes").startswith("not run: train.py:1:")
    assert "launches" not in result or not result["launches"]


# -- checks on recorded evidence ---------------------------------------------------------------


def fake_run(tmp_path: Path, args: tuple[str, ...], world: int = 2) -> ScriptRun:
    launch = ScriptLaunch("fake", tmp_path / "train.py", args, world, tmp_path, tmp_path, 1.0)
    (tmp_path / protocol.OBSERVE_DIR).mkdir(parents=True, exist_ok=True)
    return ScriptRun(launch, "ok", 0, 1.0)


def write(run: ScriptRun, name: str, records: list[dict]) -> None:
    with (run.observe_dir / name).open("a") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


def summary(digest: str, norm: float = 1.0) -> dict:
    return {"digest": digest, "norm": norm, "numel": 4, "sample": [norm], "sharded": False}


def record_accum(run: ScriptRun, synced_after: int | None, synced_before: int | None) -> None:
    """One optimizer step of K backward passes on two ranks: the gradients are identical
    after backward `synced_after` / as backward `synced_before` begins (None: never)."""
    for rank in (0, 1):
        passes = []
        for i in range(1, ACCUM_K + 1):
            same_after = synced_after is not None and i >= synced_after
            same_before = synced_before is not None and i >= synced_before
            passes.append(
                {
                    "event": "backward",
                    "pstep": 0,
                    "n": i,
                    "grad": summary("same" if same_after else f"r{rank}-{i}"),
                    "before": None if i == 1 else ("same" if same_before else f"b{rank}-{i}"),
                }
            )
        write(run, protocol.probes_file(rank), passes)
        step = {"pstep": 1, "time": 0.0, "pre": summary("p0"), "post": summary("p1")}
        write(run, protocol.steps_file(rank), [{**step, "grad": summary("at-step")}])


def test_one_allreduce_is_told_from_one_per_micro_batch(tmp_path):
    args = ("--steps", "1", "--accum-steps", str(ACCUM_K))
    right = fake_run(tmp_path / "right", args)
    record_accum(right, synced_after=None, synced_before=None)
    ok, text = accum_one_allreduce(right)
    assert ok, text
    ddp_each = fake_run(tmp_path / "ddp", args)
    record_accum(ddp_each, synced_after=1, synced_before=2)
    ok, text = accum_one_allreduce(ddp_each)
    assert not ok and "after micro-batch 1's backward" in text and "no_sync" in text
    by_hand = fake_run(tmp_path / "hand", args)
    record_accum(by_hand, synced_after=None, synced_before=2)
    ok, text = accum_one_allreduce(by_hand)
    assert not ok and "between micro-batch 1 and 2" in text


def record_amp(run: ScriptRun, scale_after_inf: float, skipped: bool) -> None:
    """Steps of a scaled run: the backward's gradient norm is the optimizer's times the scale;
    the backward of loop step AMP_INF_AT had an inf and (skipped) made no optimizer step."""
    for rank in (0, 1):
        passes, steps, pstep, scale = [], [], 0, 1024.0
        for loop_step in range(1, 9):
            inf = loop_step == AMP_INF_AT
            norm = float("inf") if inf else 2.0 * scale
            passes.append({"event": "backward", "pstep": pstep, "grad": summary("g", norm)})
            if inf:
                passes.append({"event": "inf_injected", "pstep": pstep})
                scale = scale_after_inf
                if skipped:
                    continue
            pstep += 1
            post = summary(f"p{pstep}")
            steps.append({"pstep": pstep, "time": 0.0, "pre": post, "post": post})
            steps[-1]["grad"] = summary("g", 2.0)
        write(run, protocol.probes_file(rank), passes)
        write(run, protocol.steps_file(rank), steps)


def test_a_skipped_overflow_and_its_backoff_are_seen(tmp_path):
    right = fake_run(tmp_path / "right", ("--steps", "8"))
    record_amp(right, scale_after_inf=512.0, skipped=True)
    assert scales(right)[AMP_INF_AT - 1] == 1024.0 and scales(right)[AMP_INF_AT] == 512.0
    ok, text = amp_skips_nonfinite(right)
    assert ok and "the scale went 1024 -> 512 (backed off)" in text
    no_backoff = fake_run(tmp_path / "no-backoff", ("--steps", "8"))
    record_amp(no_backoff, scale_after_inf=1024.0, skipped=True)
    ok, text = amp_skips_nonfinite(no_backoff)
    assert not ok and "expected it lower after the overflow" in text
    stepped = fake_run(tmp_path / "stepped", ("--steps", "8"))
    record_amp(stepped, scale_after_inf=512.0, skipped=False)
    ok, text = amp_skips_nonfinite(stepped)
    assert not ok and "made an optimizer step; expected it skipped" in text


def test_a_logged_throughput_is_held_to_what_was_observed(tmp_path):
    """Twenty steps 10 ms apart, 8 samples each: 800 samples/s observed."""
    for claimed, ok_expected in ((800.0, True), (1600.0, False), (None, False)):
        run = fake_run(tmp_path / str(claimed), ("--steps", "20"), world=0)
        steps = [
            {"pstep": p, "time": 100 + p * 0.01, "pre": summary("a"), "post": summary("b")}
            for p in range(1, 21)
        ]
        write(run, protocol.steps_file(0), steps)
        fetched = [{"pstep": p - 1, "id": i, "pid": 1} for p in range(1, 21) for i in range(8)]
        write(run, protocol.fetch_file(0), fetched)
        lines = [{"step": s, "loss": 0.5, "samples_per_s": claimed} for s in range(1, 21)]
        run.stdout_path(0).write_text("".join(json.dumps(line) + "\n" for line in lines))
        ok, text = throughput_reported(run)
        assert ok is ok_expected, text
        if claimed == 1600.0:
            assert "2.00x" in text and "inflated" in text
        if claimed is None:
            assert "must carry samples_per_s > 0" in text
