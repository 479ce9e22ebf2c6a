"""Single-process trainer checks, run in a subprocess by test_trainer.py so that the pytest
process never imports torch (other suites assert torch stays out of the app process).

Prints one JSON object of observed facts.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from trainer_lab.config import TrainConfig
from trainer_lab.events import PHASES, read_events
from trainer_lab.train.checkpoint import CheckpointMismatch
from trainer_lab.train.data import build_loader
from trainer_lab.train.trainer import Trainer


def main() -> dict[str, object]:
    root = Path(tempfile.mkdtemp())
    facts: dict[str, object] = {}
    cfg = TrainConfig(steps=6, checkpoint_every=3, n_samples=64, global_batch=8)
    from trainer_lab.events import EventWriter

    writer = EventWriter(root / "events", 0)
    trainer = Trainer(cfg, rank=0, world_size=1, checkpoint_dir=root / "ckpt", events=writer)
    trainer.train()
    writer.close()
    steps = [e for e in read_events(root / "events" / "events-rank0.jsonl") if e["event"] == "step"]
    facts["phases"] = sorted(steps[0]["phases"]) == sorted(PHASES)
    wanted = ("step", "epoch", "loss", "sample_ids")
    facts["step_fields"] = sorted(k for k in steps[0] if k in wanted)
    facts["committed"] = [p.name for p in trainer.checkpoints.committed()]

    # A save that crashed before its rename leaves only a .tmp dir: latest() must ignore it.
    (root / "ckpt" / ".step-000009.tmp").mkdir()
    facts["latest_after_torn_save"] = trainer.checkpoints.latest().name

    # Restoring under another config identity is refused with the differing field named.
    other = Trainer(cfg.with_(hidden=32), rank=0, world_size=1, checkpoint_dir=root / "ckpt")
    try:
        other.restore()
        facts["mismatch"] = None
    except CheckpointMismatch as error:
        facts["mismatch"] = str(error)
    # Run-length fields are not part of the identity.
    longer = Trainer(cfg.with_(steps=99), rank=0, world_size=1, checkpoint_dir=root / "ckpt")
    facts["restored_step_with_other_steps"] = longer.restore()

    # Resume exactness in one process: continue from step 3 and compare losses 4..6.
    resumed = Trainer(cfg, rank=0, world_size=1, checkpoint_dir=root / "ckpt")
    resumed.restore(root / "ckpt" / "step-000003")
    facts["resumed_losses_equal"] = [r["loss"] for r in resumed.train()] == [
        s["loss"] for s in steps[3:]
    ]

    # The sampler's state resumes mid-epoch on each rank of a W=2 partition.
    cfg2 = TrainConfig(n_samples=20, global_batch=4, shuffle=True)
    full = [list(build_loader(cfg2, 2, r)[1]) for r in (0, 1)]
    partial = []
    for r in (0, 1):
        _, sampler = build_loader(cfg2, 2, r)
        sampler.load_state_dict({"epoch": 0, "consumed": 8})
        partial.append(list(sampler))
    facts["sampler_resume_tail"] = all(partial[r] == full[r][4:] for r in (0, 1))

    # The tiny GPT option trains too (next-token cross-entropy goes down).
    gpt = Trainer(
        TrainConfig(model="gpt", n_samples=64, global_batch=8, lr=1e-2, steps=16),
        rank=0,
        world_size=1,
    )
    gpt_losses = [r["loss"] for r in gpt.train()]
    facts["gpt_loss_drops"] = sum(gpt_losses[-3:]) / 3 < sum(gpt_losses[:3]) / 3
    return facts


if __name__ == "__main__":
    json.dump(main(), sys.stdout)
