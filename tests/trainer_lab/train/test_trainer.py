from __future__ import annotations

import json
import subprocess
import sys

from tests.support.paths import REPO


def test_trainer_checkpoint_and_sampler_facts() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tests.support.trainer_checks"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    facts = json.loads(out.stdout)
    assert facts["phases"] is True
    assert facts["step_fields"] == ["epoch", "loss", "sample_ids", "step"]
    assert facts["committed"] == ["step-000003", "step-000006"]
    assert facts["latest_after_torn_save"] == "step-000006"
    assert facts["mismatch"] is not None
    assert "refusing to restore step-000006" in facts["mismatch"]
    assert "hidden: checkpoint 64 vs run 32" in facts["mismatch"]
    assert facts["restored_step_with_other_steps"] == 6
    assert facts["resumed_losses_equal"] is True
    assert facts["sampler_resume_tail"] is True
    assert facts["gpt_loss_drops"] is True
