"""The evaluation round's known-wrong variants of its model answer (eval_files/train.py), for
tests: name -> (the checks it must fail, the edits that make it). Each edit's old text occurs
once in the model answer."""

from __future__ import annotations

from typing import NamedTuple

from trainer_lab.grading.prompts.evaluation import given_file


class Variant(NamedTuple):
    fails: tuple[str, ...]
    edits: tuple[tuple[str, str], ...]


TOTAL = "    if world > 1:\n        dist.all_reduce(total)\n"
RETURN = "    return float(total[0] / total[2]), float(total[1] / total[2]), int(total[2])\n"
BEST_LOAD = (
    '    best_path = os.path.join(args.ckpt_dir, "best.pt")\n'
    "    best = torch.load(best_path) if os.path.exists(best_path) else None\n"
)

VARIANTS: dict[str, Variant] = {
    # DistributedSampler's padding: the shards are made even by repeating the first samples
    "padded_sampler_duplicates": Variant(
        ("exact.count_is_eval_size", "exact.same_at_every_world_size"),
        (
            (
                "    mine = list(range(rank, len(data), world))\n",
                "    ids = list(range(len(data)))\n"
                "    ids += ids[: -len(ids) % world]\n"
                "    mine = ids[rank::world]\n",
            ),
        ),
    ),
    # each rank's mean, averaged: 13 and 12 samples weigh the same
    "mean_of_rank_means": Variant(
        ("exact.same_at_every_world_size",),
        (
            (
                TOTAL + RETURN,
                "    means = torch.stack([total[0] / total[2], total[1] / total[2]])\n"
                "    if world > 1:\n"
                "        dist.all_reduce(means)\n"
                "        means /= world\n"
                "    return float(means[0]), float(means[1]), len(data)\n",
            ),
        ),
    ),
    # rank 0 prints the metrics of its own shard
    "rank0_shard_only": Variant(
        ("exact.count_is_eval_size", "exact.same_at_every_world_size"),
        ((TOTAL, ""),),
    ),
    # the best metric starts over on every start: a worse eval after the restart wins
    "best_lost_on_restart": Variant(
        ("best.survives_restart", "best.checkpoint_is_best"),
        (
            (
                "    step = 0\n    names = sorted",
                "    step = 0\n    best = None\n    names = sorted",
            ),
        ),
    ),
    # a best file per step, the newest by name: "best-8.pt" sorts after "best-12.pt"
    "best_by_string_sort": Variant(
        ("best.survives_restart", "best.checkpoint_is_best"),
        (
            (
                BEST_LOAD,
                "    names = os.listdir(args.ckpt_dir)\n"
                '    bests = sorted(n for n in names if n.startswith("best-"))\n'
                "    newest = bests[-1] if bests else None\n"
                "    best = torch.load(os.path.join(args.ckpt_dir, newest)) if bests else None\n",
            ),
            (
                "save(best, best_path)",
                'save(best, os.path.join(args.ckpt_dir, f"best-{step}.pt"))',
            ),
        ),
    ),
}


def variant_source(name: str) -> str:
    source = given_file("train.py")
    for old, new in VARIANTS[name].edits:
        if source.count(old) != 1:
            raise ValueError(f"variant {name}: {old!r} occurs {source.count(old)} times")
        source = source.replace(old, new)
    return source
