"""The FSDP2 round's known-wrong variants of its model answer (fsdp2_files/train.py), for tests:
name -> (the checks it must fail, the edits that make it, words of the likely cause its failed
checks must name). Each edit's old text occurs once in the model answer."""

from __future__ import annotations

from typing import NamedTuple

from trainer_lab.grading.prompts.fsdp2 import given_file


class Variant(NamedTuple):
    fails: tuple[str, ...]
    edits: tuple[tuple[str, str], ...]
    cause: str  # in the detail of a failed check: the grader names this bug


SAVE_STATE = (
    '    state = {"model": model.state_dict(), "optim": get_optimizer_state_dict(model, opt)}\n'
)
DCP_SAVE = "    dcp.save(state, checkpoint_id=tmp)  # each rank writes its shard\n"
DCP_LOAD = "    dcp.load(state, checkpoint_id=done[-1])  # in place, resharded to this world size\n"
RENAME = (
    '        (tmp / "step.json").write_text(json.dumps({"step": step}))\n'
    "        os.replace(tmp, final)  # after every shard: dcp.save ends when all ranks wrote\n"
)
FULL = "StateDictOptions(full_state_dict=True, cpu_offload=True)"

VARIANTS: dict[str, Variant] = {
    # fully_shard on the root only: one unit, gathered whole, one reduce-scatter
    "root_only_fully_shard": Variant(
        ("sharded.per_block",),
        (("    for block in model.blocks:\n        fully_shard(block, mesh=mesh)\n", ""),),
        "fully_shard on the root only",
    ),
    # the optimizer holds the parameters fully_shard replaced: it steps nothing
    "optimizer_before_fully_shard": Variant(
        ("sharded.per_block", "sharded.trains"),
        (
            (
                "    model = shard(Model(), world)\n"
                "    opt = torch.optim.Adam(model.parameters(), lr=0.01)  # on the sharded "
                "parameters\n",
                "    model = Model()\n"
                "    opt = torch.optim.Adam(model.parameters(), lr=0.01)\n"
                "    model = shard(model, world)\n",
            ),
        ),
        "the optimizer was built before fully_shard",
    ),
    # rank 0 gathers the full state and torch.saves it alone (loaded right, but not sharded)
    "full_state_by_rank0": Variant(
        ("dcp.every_rank_writes", "dcp.atomic"),
        (
            (
                "from torch.distributed.checkpoint.state_dict import (\n",
                "from torch.distributed.checkpoint.state_dict import (\n"
                "    StateDictOptions,\n    get_model_state_dict,\n    set_model_state_dict,\n",
            ),
            (
                SAVE_STATE + DCP_SAVE,
                f"    full = {FULL}\n"
                "    state = {\n"
                '        "model": get_model_state_dict(model, options=full),\n'
                '        "optim": get_optimizer_state_dict(model, opt, options=full),\n'
                "    }\n"
                "    if rank == 0:\n"
                "        tmp.mkdir(exist_ok=True)\n"
                '        torch.save(state, tmp / "full.pt")\n',
            ),
            (
                DCP_LOAD
                + '    model.load_state_dict(state["model"])\n'
                + '    set_optimizer_state_dict(model, opt, state["optim"])\n',
                '    state = torch.load(done[-1] / "full.pt", weights_only=False)\n'
                f"    full = {FULL}\n"
                '    set_model_state_dict(model, state["model"], options=full)\n'
                '    set_optimizer_state_dict(model, opt, state["optim"], options=full)\n',
            ),
        ),
        "rank 0 gathers the full state",
    ),
    # each rank torch.saves its own local shard: no resharding, rank 2 finds no file at W=3
    "local_shards_torch_save": Variant(
        (
            "dcp.every_rank_writes",
            "reshard.resumes_newest",
            "reshard.global_batch",
            "reshard.continues",
        ),
        (
            (
                DCP_SAVE,
                "    tmp.mkdir(exist_ok=True)\n"
                '    torch.save(state, tmp / f"shard-{rank}.pt")\n'
                "    if world > 1:\n"
                "        dist.barrier()\n",
            ),
            (
                DCP_LOAD,
                "    rank = dist.get_rank() if dist.is_initialized() else 0\n"
                '    state = torch.load(done[-1] / f"shard-{rank}.pt", weights_only=False)\n',
            ),
        ),
        "each rank torch.saves its local shard",
    ),
    # the DDP habit: a fixed batch per rank, so the global batch grows to 18 at W=3
    "per_rank_batch_kept": Variant(
        ("reshard.global_batch", "reshard.continues"),
        (
            (
                "    per_epoch = DATASET_SIZE // GLOBAL_BATCH\n",
                "    mine = GLOBAL_BATCH // 2  # the per-rank batch of the W=2 runs, kept\n"
                "    per_epoch = DATASET_SIZE // (mine * world)\n",
            ),
            (
                "    mine = GLOBAL_BATCH // world\n    start = k * GLOBAL_BATCH + rank * mine\n",
                "    start = (k * world + rank) * mine\n",
            ),
        ),
        "the per-rank batch kept at W=3",
    ),
    # the data's own counter starts at 0 on every start: the relaunch replays epoch 0
    "data_position_restarted": Variant(
        ("reshard.global_batch", "reshard.continues"),
        (
            ("    data = TrainSet()\n", "    data = TrainSet()\n    position = 0\n"),
            ("batch_ids(step, rank, world)", "batch_ids(position, rank, world)"),
            ("        step += 1\n", "        step += 1\n        position += 1\n"),
        ),
        "the data position restarted",
    ),
    # resumes at the checkpoint's step + 1: one step of data skipped, one step fewer
    "step_off_by_one": Variant(
        ("reshard.resumes_newest", "reshard.global_batch", "reshard.continues"),
        (('.read_text())["step"]\n', '.read_text())["step"] + 1\n'),),
        "off by one",
    ),
    # the optimizer state is not in the checkpoint: Adam's moments start over on a resume
    "optimizer_state_not_saved": Variant(
        ("reshard.continues",),
        (
            (SAVE_STATE + DCP_SAVE, '    state = {"model": model.state_dict()}\n' + DCP_SAVE),
            (
                SAVE_STATE + DCP_LOAD,
                '    state = {"model": model.state_dict()}\n' + DCP_LOAD,
            ),
            ('    set_optimizer_state_dict(model, opt, state["optim"])\n', ""),
        ),
        "the optimizer state not saved",
    ),
    # written in place, the newest directory loaded: a torn save is loaded (no .metadata)
    "checkpoint_not_atomic": Variant(
        ("dcp.atomic",),
        (
            (DCP_SAVE, DCP_SAVE.replace("checkpoint_id=tmp", "checkpoint_id=final")),
            (RENAME, '        (final / "step.json").write_text(json.dumps({"step": step}))\n'),
        ),
        "not atomic",
    ),
    # unpadded names: "step-8" sorts after "step-12"
    "newest_by_string_sort": Variant(
        ("reshard.resumes_newest",),
        (
            (
                '    final = ckpt_dir / f"step-{step:06d}"\n'
                '    tmp = ckpt_dir / f"step-{step:06d}.tmp"\n',
                '    final = ckpt_dir / f"step-{step}"\n    tmp = ckpt_dir / f"step-{step}.tmp"\n',
            ),
        ),
        "string order",
    ),
}


def variant_source(name: str) -> str:
    source = given_file("train.py")
    for old, new in VARIANTS[name].edits:
        if source.count(old) != 1:
            raise ValueError(f"variant {name}: {old!r} occurs {source.count(old)} times")
        source = source.replace(old, new)
    return source
