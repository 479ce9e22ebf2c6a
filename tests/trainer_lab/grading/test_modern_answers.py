"""Correct answers in modern styles pass the coding round, graded for real (issue 35): a sharded
optimizer (ZeroRedundancyOptimizer, consolidated and saved with torch.save), torch's documented
DCP recipe (get_state_dict / set_state_dict in a Stateful, dcp.save / dcp.load), FSDP2 with
DCP, and a save committed by an empty marker file. Their wrong twins still fail. Real torchrun
runs (lab marker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.coding import detail, failed, grade_source
from trainer_lab.grading import CHECK_NAMES, model_answer_source
from trainer_lab.grading.contract import DATASET_MODULE_FILE, FILES, SCRIPT_NAME
from trainer_lab.usercode.evidence import save_events
from trainer_lab.usercode.harness import ScriptLaunch, run_script
from trainer_lab.usercode.verdict import write_workspace

pytestmark = pytest.mark.lab

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(
    "answer",
    [
        "right_zero_consolidated",  # optimizer.state entries are None after load_state_dict
        "right_dcp_recipe",  # the relaunch's get_state_dict runs a zero-lr step first
        "right_touch_marker",  # the commit is an empty file made with Path.touch
    ],
)
def test_a_correct_answer_in_a_modern_style_passes_every_check(answer: str, tmp_path: Path):
    result = grade_source((FIXTURES / f"{answer}.py").read_text(), tmp_path, tuple(CHECK_NAMES))
    assert failed(result) == [], [
        (c["name"], c["detail"]) for c in result["checks"] if not c["passed"]
    ]
    assert "bit-identical" in detail(result, "restart.matches_uninterrupted")


def test_fsdp2_with_dcp_resumes_and_survives_every_tear(tmp_path: Path):
    """FSDP2 with torch's DCP: every shard file, then the metadata commit, torn in turn."""
    source = (FIXTURES / "right_fsdp2_dcp.py").read_text()
    phases = ("skeleton", "restart", "torn", "monitoring")
    result = grade_source(source, tmp_path, phases)
    assert failed(result) == [], [
        (c["name"], c["detail"]) for c in result["checks"] if not c["passed"]
    ]
    # DCP's files: each rank's shard file, then rank 0's .metadata.tmp (renamed: the commit)
    names = {launch["name"] for launch in result["launches"]}
    assert {"tear", "tear-2"} <= names


def test_an_empty_marker_is_never_torn_so_the_save_has_one_file_to_tear(tmp_path: Path):
    source = (FIXTURES / "right_touch_marker.py").read_text()
    result = grade_source(source, tmp_path, ("torn",))
    assert failed(result) == []
    assert {launch["name"] for launch in result["launches"]} == {"w2", "tear", "tear-resume"}
    used = detail(result, "torn.previous_checkpoint_used")
    assert used.startswith("killed while writing step-000008.pt "), used


TOUCH = '    final.with_suffix(".done").touch()  # the commit: an empty file, created at once\n'


def test_a_marker_made_before_the_data_is_written_fails_the_torn_checks(tmp_path: Path):
    """The same empty marker, touched before torch.save: the commit comes first, so the torn
    step-8 file is taken for complete."""
    source = (FIXTURES / "right_touch_marker.py").read_text()
    assert source.count(TOUCH) == 1
    save = "    torch.save(state, final)\n"
    early = source.replace(TOUCH, "").replace(save, TOUCH + save)
    result = grade_source(early, tmp_path, ("torn",))
    assert failed(result) == sorted(CHECK_NAMES["torn"])
    assert "the relaunch loaded the torn file" in detail(result, "torn.finishes")


def test_the_model_answer_fsyncs_its_file_before_the_rename_and_the_dir_after(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    write_workspace(workspace, {SCRIPT_NAME: model_answer_source()}, [FILES / DATASET_MODULE_FILE])
    ckpt = tmp_path / "ckpt"
    args = ("--steps", "4", "--ckpt-dir", str(ckpt), "--ckpt-every", "4")
    launch = ScriptLaunch("t", workspace / SCRIPT_NAME, args, 0, tmp_path / "run", ckpt, 60.0)
    result = run_script(launch)
    assert result.status == "ok", result.summary()
    events = [
        e
        for e in save_events(result.observe_dir, [0])
        if e["pstep"] == 4 and e["event"] in ("write", "fsync", "rename")
    ]
    # a write is recorded as its file is closed: after the fsync made inside the with block
    order = [(e["event"], e["path"].split(".tmp-")[0]) for e in events]
    assert order == [
        ("fsync", ".step-000004.pt"),
        ("write", ".step-000004.pt"),
        ("rename", "step-000004.pt"),
        ("fsync", "."),
    ]


def test_fsdp2_is_one_process_on_the_global_batch_with_its_shards_put_together(tmp_path: Path):
    """Under FSDP2 each rank records its shard: the W=3 comparison with the one-process
    reference puts the shards' norms together instead of reading rank 0's shard as the model."""
    source = (FIXTURES / "right_fsdp2_dcp.py").read_text()
    result = grade_source(source, tmp_path, ("distributed",))
    assert failed(result) == [], [
        (c["name"], c["detail"]) for c in result["checks"] if not c["passed"]
    ]
    assert "shards put together" in detail(result, "distributed.params_in_sync")
