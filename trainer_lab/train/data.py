"""Deterministic synthetic data whose items carry their index, and a resumable sampler."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from trainer_lab.config import TrainConfig


class SyntheticDataset(Dataset):
    """Item i is (i, x_i, y_i), the same on every rank and every run for a given seed.

    MLP: y = tanh(x W) + noise for a fixed teacher W. GPT: token sequences from a fixed
    Markov chain, target = next token.
    """

    def __init__(self, cfg: TrainConfig) -> None:
        gen = torch.Generator().manual_seed(cfg.seed + 7919)
        n = cfg.n_samples
        if cfg.model == "gpt":
            trans = torch.softmax(torch.randn(cfg.vocab, cfg.vocab, generator=gen) * 3, dim=-1)
            seqs = torch.empty(n, cfg.seq_len + 1, dtype=torch.long)
            seqs[:, 0] = torch.randint(cfg.vocab, (n,), generator=gen)
            for t in range(1, cfg.seq_len + 1):
                seqs[:, t] = torch.multinomial(trans[seqs[:, t - 1]], 1, generator=gen).squeeze(1)
            self.x, self.y = seqs[:, :-1].contiguous(), seqs[:, 1:].contiguous()
        else:
            teacher = torch.randn(cfg.d_in, cfg.d_out, generator=gen) / cfg.d_in**0.5
            self.x = torch.randn(n, cfg.d_in, generator=gen)
            self.y = torch.tanh(self.x @ teacher * 2) + cfg.noise * torch.randn(
                n, cfg.d_out, generator=gen
            )

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, index: int) -> tuple[int, torch.Tensor, torch.Tensor]:
        return index, self.x[index], self.y[index]


class ResumableSampler(DistributedSampler):
    """DistributedSampler that can resume mid-epoch.

    State is global (epoch, samples consumed by all ranks in this epoch), so it is the same on
    every rank. Rank r's share of the padded index list is indices[r::W]; after `consumed` global
    samples each rank has taken consumed // W of its own, which is what we skip on resume.
    """

    def __init__(self, dataset: Dataset, num_replicas: int, rank: int, cfg: TrainConfig) -> None:
        super().__init__(
            dataset,
            num_replicas=num_replicas,
            rank=rank,
            shuffle=cfg.shuffle,
            seed=cfg.seed,
            drop_last=cfg.drop_last,
        )
        self.consumed = 0  # global samples consumed in the current epoch

    def __iter__(self) -> Iterator[int]:
        indices = list(super().__iter__())
        skip = self.consumed // self.num_replicas
        return iter(indices[skip:])

    def advance(self, global_samples: int) -> None:
        self.consumed += global_samples

    def set_epoch(self, epoch: int) -> None:
        if epoch != self.epoch:
            self.consumed = 0
        super().set_epoch(epoch)

    def state_dict(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "consumed": self.consumed}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.epoch = int(state["epoch"])
        self.consumed = int(state["consumed"])

    def padding(self) -> tuple[int, int]:
        """(padded duplicates, dropped samples) per epoch across all ranks."""
        n = len(self.dataset)  # type: ignore[arg-type]
        total = self.total_size
        return (max(total - n, 0), max(n - total, 0))


def build_loader(
    cfg: TrainConfig, world_size: int, rank: int, dataset: Dataset | None = None
) -> tuple[DataLoader, ResumableSampler]:
    if cfg.global_batch % world_size:
        raise ValueError(
            f"global_batch {cfg.global_batch} is not divisible by world size {world_size}"
        )
    dataset = dataset if dataset is not None else SyntheticDataset(cfg)
    sampler = ResumableSampler(dataset, world_size, rank, cfg)
    loader = DataLoader(
        dataset,
        batch_size=cfg.global_batch // world_size,
        sampler=sampler,
        drop_last=cfg.drop_last,
        num_workers=0,
        # Its own generator: otherwise every iter(loader) draws a seed from the global RNG,
        # and a resumed run (one extra iter() mid-epoch) would shift the dropout RNG stream.
        generator=torch.Generator().manual_seed(cfg.seed),
    )
    return loader, sampler
