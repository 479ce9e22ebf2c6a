"""The data the biotech round gives you. The grader puts its own copy next to your train.py.

    from drill_data import BATCH_SIZE, CLASSES, PAD_ID, VOCAB, ProteinSet

Per-residue tagging of protein sequences (3 classes per residue: helix, strand, coil).
`ProteinSet()` has NUM_SEQUENCES sequences of varying length. Item i is
`(i, tokens, labels, cluster)`: its index, an int64 tensor of amino-acid token ids (1..20, one
per residue), an int64 tensor of per-residue labels of the same length, and the id of its
sequence cluster (sequences of one cluster are near-duplicates of each other).

The dataset's index is metadata, read without reading a sequence: `dataset.lengths[i]` and
`dataset.clusters[i]` (lists, one entry per sequence). The amino acids are token ids 1..20;
ids 0, 21, 22 and 23 are not: pad with PAD_ID (import it, never write its value). Use
BATCH_SIZE sequences per rank per step (import it too).

Sequences are read one way only: `dataset[i]`, or `dataset.__getitems__(ids)` (what a
DataLoader calls for a batch). The grader observes every such read. The dataset holds no
tensors: a sequence's residues exist only as it is read, and under the grader they are drawn per
run (the lengths and clusters stay).
"""

from __future__ import annotations

import torch
from torch.utils.data import Dataset

NUM_SEQUENCES = 60
AMINO_ACIDS = 20  # token ids 1..20
VOCAB = 24  # with 4 ids that are not amino acids (0, 21, 22, 23): PAD_ID is one of them
PAD_ID = 0
CLASSES = 3
BATCH_SIZE = 4
MIN_LENGTH, MAX_LENGTH = 6, 40
NUM_CLUSTERS = 17

SEED = 0  # the residues outside the grader
RELABEL_BIT = 2**32  # the grader's seeds are below it


# The index: each sequence's length and cluster, the same in every run. A cluster's members
# have similar lengths and are spread over the index (not contiguous).
# fmt: off
LENGTHS = [
    8, 35, 22, 22, 33, 32, 28, 19, 30, 19, 18, 34, 18, 34, 34, 19, 17, 11, 20, 19,
    18, 24, 35, 9, 16, 36, 31, 31, 35, 22, 34, 20, 39, 35, 26, 20, 18, 37, 15, 16,
    33, 18, 24, 31, 34, 29, 13, 15, 13, 33, 38, 18, 17, 16, 11, 15, 32, 17, 17, 17,
]
CLUSTERS = [
    4, 10, 2, 1, 12, 10, 12, 5, 10, 14, 8, 7, 15, 0, 12, 9, 15, 16, 5, 1,
    5, 11, 13, 4, 15, 13, 7, 12, 13, 15, 13, 9, 0, 7, 6, 1, 15, 13, 5, 16,
    12, 14, 2, 7, 13, 12, 14, 5, 3, 0, 13, 9, 3, 8, 16, 9, 6, 8, 8, 5,
]
# fmt: on


def _sample(seed: int, index: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(tokens, labels) of sequence `index` of the data drawn from `seed`: its cluster's
    template with a few point mutations, labels from each residue and its neighbours.
    seed // RELABEL_BIT shifts every label (the same residues, other labels)."""
    shift, seed = divmod(seed, RELABEL_BIT)
    length, cluster = LENGTHS[index], CLUSTERS[index]
    template = torch.Generator().manual_seed((seed * 7_919 + cluster) % 2**63)
    tokens = torch.randint(1, AMINO_ACIDS + 1, (MAX_LENGTH,), generator=template)[:length]
    g = torch.Generator().manual_seed((seed * 1_000_003 + 1 + index) % 2**63)
    mutate = torch.rand(length, generator=g) < 0.15
    tokens = torch.where(mutate, torch.randint(1, AMINO_ACIDS + 1, (length,), generator=g), tokens)
    padded = torch.nn.functional.pad(tokens, (1, 1))
    labels = (padded[:-2] + 2 * padded[1:-1] + padded[2:] + shift) % CLASSES
    return tokens, labels


def _read(index: int) -> tuple[torch.Tensor, torch.Tensor]:
    return _sample(SEED, index)


# The grader replaces this with its own reader of the same signature (it records each read).
_fetch = _read


class ProteinSet(Dataset):
    def __init__(self) -> None:
        self.lengths = list(LENGTHS)
        self.clusters = list(CLUSTERS)

    def __len__(self) -> int:
        return NUM_SEQUENCES

    def __getitem__(self, index: int) -> tuple[int, torch.Tensor, torch.Tensor, int]:
        i = int(index)
        if not 0 <= i < NUM_SEQUENCES:
            raise IndexError(f"sequence {i} out of range (0..{NUM_SEQUENCES - 1})")
        tokens, labels = _fetch(i)
        return i, tokens, labels, CLUSTERS[i]

    def __getitems__(self, indices: list[int]) -> list[tuple[int, torch.Tensor, torch.Tensor, int]]:
        return [self[i] for i in indices]
