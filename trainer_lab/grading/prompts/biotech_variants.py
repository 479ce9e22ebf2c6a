"""The biotech round's known-wrong variants of its model answer (biotech_files/train.py), for
tests: name -> (the checks it must fail, the edits that make it). Each edit's old text occurs
once in the model answer."""

from __future__ import annotations

from typing import NamedTuple

from trainer_lab.grading.prompts.biotech import given_file


class Variant(NamedTuple):
    fails: tuple[str, ...]
    edits: tuple[tuple[str, str], ...]


PAD_CHECK = ("masks.padding_never_in_loss",)
TRAINS = ("masks.trains",)
SPLIT = """    held_out = {c for c in data.clusters if c % 5 == 0}
    train = [i for i, c in enumerate(data.clusters) if c not in held_out]
    val = [i for i, c in enumerate(data.clusters) if c in held_out]
"""

VARIANTS: dict[str, Variant] = {
    # the loss sums every position: padded positions (label 0) are targets
    "pad_targets_in_loss": Variant(
        PAD_CHECK,
        (
            (
                "    return losses[real].sum(), int(real.sum())\n",
                "    return losses.sum(), int(real.sum())\n",
            ),
        ),
    ),
    # pad_sequence's default: padded with 0 (not PAD_ID), and every position in the loss
    "zero_padding_in_loss": Variant(
        PAD_CHECK,
        (
            (
                "    tokens = torch.full((len(items), longest), PAD_ID, dtype=torch.long)\n",
                "    tokens = torch.zeros((len(items), longest), dtype=torch.long)\n",
            ),
            (
                "    return losses[real].sum(), int(real.sum())\n",
                "    return losses.sum(), int(real.numel())\n",
            ),
        ),
    ),
    # the loss is masked, the attention is not: residues attend to padded keys
    "no_key_padding_mask": Variant(
        PAD_CHECK,
        (("    logits = model(tokens, key_padding_mask=~real)\n", "    logits = model(tokens)\n"),),
    ),
    # the mask covers one position past each sequence: its first pad is a target and a key
    "mask_off_by_one": Variant(
        PAD_CHECK,
        (("        real[row, : len(t)] = True\n", "        real[row, : len(t) + 1] = True\n"),),
    ),
    # the targets are made from the tokens, not read from the dataset: the labels never reach
    # the loss (other labels, the same step-1 gradients)
    "labels_ignored": Variant(
        TRAINS,
        (("        labels[row, : len(t)] = y\n", "        labels[row, : len(t)] = t % CLASSES\n"),),
    ),
    # the printed loss is the global sum over residues, not their mean (training is right)
    "loss_summed": Variant(
        TRAINS,
        (
            (
                "        mean = all_sum(float(loss_sum.detach()), world) / total\n",
                "        mean = all_sum(float(loss_sum.detach()), world)\n",
            ),
        ),
    ),
    # the process group is always initialised: `python train.py` fails without torchrun's env
    "one_process_broken": Variant(
        TRAINS,
        (('    distributed = "RANK" in os.environ\n', "    distributed = True\n"),),
    ),
    # a random 70/30 split of the sequences: near-duplicates of training sequences validate
    "random_split_by_sequence": Variant(
        ("split.by_cluster",),
        (
            (
                SPLIT,
                "    ids = torch.randperm(len(data), generator=torch.Generator().manual_seed(0))\n"
                "    cut = len(data) * 7 // 10\n"
                "    train, val = sorted(ids[:cut].tolist()), sorted(ids[cut:].tolist())\n",
            ),
        ),
    ),
    # the validation shards without the rank's offset: every rank scores the same half
    "validation_same_shard_on_every_rank": Variant(
        ("split.validates_held_out",),
        (
            (
                "data.__getitems__(val[rank::world])",
                "data.__getitems__(val[::world])",
            ),
        ),
    ),
    # one order for every epoch (DistributedSampler without set_epoch)
    "same_order_every_epoch": Variant(
        ("epoch.reshuffled",),
        (
            (
                "    g = torch.Generator().manual_seed(epoch)\n",
                "    g = torch.Generator().manual_seed(0)\n",
            ),
        ),
    ),
    # only full batches: the longest sequences (the last bucket) are never trained on
    "drop_last_loses_sequences": Variant(
        ("epoch.exactly_once",),
        (
            (
                "    batches = [ids[k : k + size] for k in range(0, len(ids), size)]\n",
                "    batches = [ids[k : k + size] for k in range(0, len(ids) - size + 1, size)]\n",
            ),
            (
                "    per_epoch = math.ceil(len(train) / size)\n",
                "    per_epoch = len(train) // size\n",
            ),
        ),
    ),
    # buckets of BATCH_SIZE, not split by rank: every rank reads the same bucket
    "ranks_read_the_same_bucket": Variant(
        ("epoch.exactly_once",),
        (("data.__getitems__(batch[rank::world])", "data.__getitems__(batch[:BATCH_SIZE])"),),
    ),
    # the relaunch restores the epoch but starts its sampler at the epoch's first batch
    "resume_restarts_the_epoch": Variant(
        ("epoch.resume_continues",),
        (
            (
                "    while step < args.steps:\n        epoch, k = divmod(step, per_epoch)\n",
                "    lost = step % per_epoch\n"
                "    while step < args.steps:\n        epoch, k = divmod(step - lost, per_epoch)\n",
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
