"""What-if follow-ups name the script's own design, read from its syntax tree
(drill.mock.coding.followups.inspect_source); the source is never run."""

from __future__ import annotations

import re

import pytest

from drill.mock.coding.followups import follow_ups, inspect_source
from tests.support.coding import detail
from tests.support.followups import fixture, with_check
from trainer_lab.grading import model_answer_source


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
