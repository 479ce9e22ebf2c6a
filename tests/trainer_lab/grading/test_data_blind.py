"""Issue 35, the given data: no channel tells a script which launch it is in, no check runs on
constant data, a step at W=3 is compared with its one-process reference on the same global
batches, a relaunch cannot replay the past, and samples are read only in observed ways. Real
runs (lab marker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.coding import detail, failed, grade_source
from trainer_lab.grading import model_answer_source
from trainer_lab.grading.contract import LAUNCHES, OTHER_DATA, W3_REFERENCE
from trainer_lab.grading.grader import prepare_workspace, to_launch
from trainer_lab.usercode.harness import run_script

pytestmark = pytest.mark.lab

FIXTURES = Path(__file__).parent / "fixtures"

# Dumps what a script can see of its launch before it trains: drill_data's attributes, the
# environment, the files in its cwd.
LOOK = """\
import json, os, re, sys
from pathlib import Path
import drill_data

def shown(value):  # an object's address differs in every process: not told apart by it
    if callable(value):
        return type(value).__name__ + ":" + getattr(value, "__qualname__", "")
    text = type(value).__name__ if type(value).__name__ == "module" else repr(value)
    return re.sub(" at 0x[0-9a-f]+", "", text)

seen = {
    "module": {k: shown(v) for k, v in sorted(vars(drill_data).items()) if k != "__builtins__"},
    "env": sorted(k for k in os.environ if k.startswith("DRILL")),
    "env_values": sorted(v for v in os.environ.values() if "runs" in v or "ckpt" in v),
    "cwd": sorted(p.name for p in Path.cwd().iterdir()),
}
ckpt = Path(sys.argv[sys.argv.index("--ckpt-dir") + 1])
(ckpt.parent / "seen").mkdir(exist_ok=True)
(ckpt.parent / "seen" / (ckpt.name + ".json")).write_text(json.dumps(seen))
"""


def test_a_script_sees_nothing_that_tells_its_launch_or_data_apart(tmp_path):
    script = prepare_workspace(LOOK, tmp_path / "workspace")
    names = ("single", OTHER_DATA, W3_REFERENCE)
    for seed in (1, 2):
        for name in names:
            launch = to_launch(LAUNCHES[name], script, tmp_path / f"out{seed}", 30, seed=seed)
            assert run_script(launch).status == "ok"
    files = [f for seed in (1, 2) for f in (tmp_path / f"out{seed}" / "ckpt" / "seen").iterdir()]
    assert len(files) == 6
    # the checkpoint dir's name says nothing about the launch either
    assert not [f.stem for f in files if any(part in f.stem for part in ("single", "other", "w3"))]
    seen = [json.loads(f.read_text()) for f in files]
    assert all(s == seen[0] for s in seen), seen
    assert seen[0]["env"] == [] and seen[0]["env_values"] == []
    assert "_variant" not in seen[0]["module"]


def test_a_script_that_learns_for_real_only_when_it_sees_a_test_fails(tmp_path):
    source = (FIXTURES / "gaming_fake_learning_unless_tested.py").read_text()
    result = grade_source(source, tmp_path, ("skeleton",))
    assert failed(result) == ["skeleton.loss_falls"]
    assert "the update barely depends on the data" in detail(result, "skeleton.loss_falls")


def _patched(patches: list[tuple[str, str]]) -> str:
    source = model_answer_source()
    for old, new in patches:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source


BROADCAST = [
    ("    ddp = DistributedDataParallel(model) if world > 1 else model\n", "    ddp = model\n"),
    (
        "        loss.backward()  # DDP all-reduces the gradients here\n",
        "        loss.backward()\n"
        "        if world > 1:  # rank 0's gradients for everyone\n"
        "            for p in model.parameters():\n"
        "                dist.broadcast(p.grad, 0)\n",
    ),
]


def test_a_gradient_broadcast_from_rank_0_fails_the_global_batch_check(tmp_path):
    # one data seed: the named cause depends on the data drawn. Over seeds 0-7 the broadcast's
    # gradients lay 74-110 % apart from the reference's (70 % allowed); in one clean-clone CI
    # run's random seed they did not, and only the W=2 / W=3 comparison failed it (the verdict
    # held: params_in_sync failed, for the world-size reason)
    result = grade_source(_patched(BROADCAST), tmp_path, ("distributed",), seed=3)
    assert failed(result) == ["distributed.params_in_sync"]
    text = detail(result, "distributed.params_in_sync")
    assert "broadcast from one rank instead of all-reduced" in text
    # W=2 alone cannot tell
    assert text.startswith(f"W=2: {LAUNCHES['w2'].steps} steps, identical parameters")


REPLAY = [
    (
        '        "model": model.state_dict(),\n        "optimizer": optimizer.state_dict(),\n'
        '        "rng": rng_states,\n',
        "",
    ),
    (
        '    model.load_state_dict(state["model"])\n'
        '    optimizer.load_state_dict(state["optimizer"])\n'
        '    torch.set_rng_state(state["rng"][rank])\n',
        "",
    ),
    (
        "    stream = BatchStream(ToyDataset(), rank, world).from_step(step)\n",
        "    stream = BatchStream(ToyDataset(), rank, world).from_step(0)\n"
        "    for _ in range(step):  # the past, replayed by hand (no optimizer step recorded)\n"
        "        _, _, x, y = next(stream)\n"
        "        optimizer.zero_grad(set_to_none=True)\n"
        "        nn.functional.mse_loss(ddp(x), y).backward()\n"
        "        type(optimizer).step.__wrapped__(optimizer)\n",
    ),
]

SKIP_THROUGH = [
    (
        "    stream = BatchStream(ToyDataset(), rank, world).from_step(step)\n",
        "    stream = BatchStream(ToyDataset(), rank, world).from_step(0)\n"
        "    for _ in range(step):  # skip the batches before the checkpoint, discarding them\n"
        "        next(stream)\n",
    ),
]


def test_a_checkpoint_of_the_step_alone_with_the_past_replayed_fails(tmp_path):
    result = grade_source(_patched(REPLAY), tmp_path, ("restart",))
    assert {"restart.resumes_at_checkpoint", "restart.matches_uninterrupted"} <= set(failed(result))


def test_a_resume_that_skips_through_the_loader_discarding_batches_is_not_poisoned(tmp_path):
    """Its reads of the past serve other values, which it discards: the state it resumes from
    and every later step are the uninterrupted run's (no_replay_or_skip still counts the reads)."""
    result = grade_source(_patched(SKIP_THROUGH), tmp_path, ("restart",))
    assert failed(result) == ["restart.no_replay_or_skip"]
    assert "bit-identical" in detail(result, "restart.matches_uninterrupted")


def test_a_class_based_trainer_with_hand_sharding_passes(tmp_path):
    source = (FIXTURES / "right_class_hand_sharded.py").read_text()
    result = grade_source(source, tmp_path, ("skeleton", "distributed", "restart"))
    assert failed(result) == []


def test_reading_the_samples_past_the_dataset_fails_with_how_to_read_them(tmp_path):
    source = model_answer_source().replace(
        "    stream = BatchStream(ToyDataset(), rank, world).from_step(step)\n",
        "    raw = ToyDataset().x\n"
        "    stream = BatchStream(ToyDataset(), rank, world).from_step(step)\n",
    )
    result = grade_source(source, tmp_path, ("skeleton",))
    assert "skeleton.exits" in failed(result)
    assert "read samples as dataset[i] or dataset.__getitems__(ids)" in detail(
        result, "skeleton.exits"
    )
