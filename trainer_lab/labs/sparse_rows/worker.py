"""sparse-rows worker (imports torch): serve batches of cells from a sparse count matrix.

- A cells x genes count matrix (synthetic, ~2 % non-zero) held as torch sparse CSR.
- A batch of rows is sliced straight out of CSR (crow_indices give each row's span of
  col_indices/values) and densified batch-sized. The bytes it reads are observed, not
  computed: a dispatch mode (ReadCounter) sees every aten op the slicing ran and counts what
  each one read out of the dataset's own tensors.
- For contrast: the same rows out of CSC (every row index of the matrix must be scanned), and
  densifying the whole matrix first. Wall times are measured too (medians).
- Graph batching, the same idea for molecules: a batch of graphs is one block-diagonal sparse
  adjacency (disjoint union, node ids offset per graph); one message-passing layer on the
  batch must equal running each graph alone.
Rank 0 does the work; other ranks wait.
"""

from __future__ import annotations

import statistics
import time
import warnings
from typing import Any

import torch
import torch.distributed as dist
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from trainer_lab.train.worker import WorkerContext


def make_matrix(cells: int, genes: int, density: float, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    n = int(cells * genes * density)
    rows = torch.randint(0, cells, (n,), generator=gen)
    cols = torch.randint(0, genes, (n,), generator=gen)
    counts = torch.randint(1, 20, (n,), generator=gen).float()
    coo = torch.sparse_coo_tensor(torch.stack([rows, cols]), counts, (cells, genes))
    csr = coo.coalesce().to_sparse_csr()
    # to_sparse_csr's col_indices and values are views of the COO's buffers (sized before
    # duplicates merged, row and column indices together): compact copies hold only the CSR
    parts = (csr.crow_indices().clone(), csr.col_indices().clone(), csr.values().clone())
    return torch.sparse_csr_tensor(*parts, csr.shape)


def tensor_bytes(*tensors: torch.Tensor) -> int:
    """Bytes allocated for these tensors (their storages)."""
    return sum(t.untyped_storage().nbytes() for t in tensors)


GATHERS = frozenset(
    {
        torch.ops.aten.index.Tensor,
        torch.ops.aten.index_select.default,
        torch.ops.aten.gather.default,
    }
)


class ReadCounter(TorchDispatchMode):
    """Bytes the ops that ran read out of `held` tensors: a gather from a held tensor reads
    what it returns; any other op given a held tensor (an index, an operand) reads all of the
    view it was given. View ops (slices, aliases) read nothing."""

    def __init__(self, held: list[torch.Tensor]) -> None:
        super().__init__()
        self.held = {t.untyped_storage().data_ptr() for t in held}
        self.bytes = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if func.is_view:
            return out
        inputs, _ = tree_flatten((args, kwargs or {}))
        for position, tensor in enumerate(inputs):
            if not isinstance(tensor, torch.Tensor) or tensor.layout != torch.strided:
                continue
            if tensor.untyped_storage().data_ptr() not in self.held:
                continue
            read = tensor if position > 0 or func not in GATHERS else out
            self.bytes += read.numel() * read.element_size()
        return out


class CellBatches:
    """What a Dataset would hold; `layout` is csr (right), csc or dense (the sabotages)."""

    def __init__(self, csr: torch.Tensor, layout: str, bad_indptr: bool = False) -> None:
        self.layout, self.bad_indptr, self.shape = layout, bad_indptr, csr.shape
        if layout == "csr":
            self.crow, self.col, self.val = csr.crow_indices(), csr.col_indices(), csr.values()
            self.tensors = [self.crow, self.col, self.val]
        elif layout == "csc":
            csc = csr.to_sparse_csc()
            # compact copies: row_indices is a view of a buffer holding both index rows
            self.ccol, self.row, self.val = (
                t.clone() for t in (csc.ccol_indices(), csc.row_indices(), csc.values())
            )
            self.tensors = [self.ccol, self.row, self.val]
        else:
            self.dense = csr.to_dense()
            self.tensors = [self.dense]
        self.held = tensor_bytes(*self.tensors)

    def read_batch(self, idx: torch.Tensor) -> tuple[torch.Tensor, int]:
        """(dense batch, bytes of the held matrix the ops that built it read: observed)."""
        with ReadCounter(self.tensors) as counter:
            out = self.batch(idx)
        return out, counter.bytes

    def batch(self, idx: torch.Tensor) -> torch.Tensor:
        """The dense batch [B, genes] of rows `idx`."""
        genes = self.shape[1]
        if self.layout == "dense":
            return self.dense[idx]
        out = torch.zeros(len(idx), genes)
        if self.layout == "csr":
            starts, ends = self.crow[idx], self.crow[idx + 1]
            if self.bad_indptr:
                starts = torch.minimum(starts + 1, ends)  # off by one: drops each row's first entry
            lens = ends - starts
            total = int(lens.sum())
            first = torch.cumsum(lens, 0) - lens
            pos = torch.arange(total) + torch.repeat_interleave(starts - first, lens)
            which = torch.repeat_interleave(torch.arange(len(idx)), lens)
            out[which, self.col[pos]] = self.val[pos]
            return out
        # CSC: which entries belong to the batch's rows? Only a scan of every row index says.
        slot = torch.full((self.shape[0],), -1, dtype=torch.long)
        slot[idx] = torch.arange(len(idx))
        hit = slot[self.row] >= 0
        cols = torch.repeat_interleave(torch.arange(genes), self.ccol[1:] - self.ccol[:-1])
        out[slot[self.row[hit]], cols[hit]] = self.val[hit]
        return out


def median_seconds(fn: Any, reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def sparse_rows(spec: dict[str, Any]) -> dict[str, Any]:
    sabotage = spec["sabotage"]
    csr = make_matrix(spec["cells"], spec["genes"], spec["density"], spec["seed"])
    cells, genes = csr.shape
    layout = {"densify": "dense", "csc": "csc"}.get(sabotage, "csr")
    dataset = CellBatches(csr, layout, bad_indptr=sabotage == "bad_indptr")
    gen = torch.Generator().manual_seed(spec["seed"] + 1)
    idx = torch.randperm(cells, generator=gen)[: spec["batch"]]
    got, touched = dataset.read_batch(idx)
    whole = CellBatches(csr, "dense")
    truth = whole.dense[idx]
    batch_nnz = int((truth != 0).sum())
    right = CellBatches(csr, "csr")
    csc = CellBatches(csr, "csc")
    reps = 3
    seconds = {
        "csr_batch": median_seconds(lambda: right.batch(idx), reps),
        "csc_batch": median_seconds(lambda: csc.batch(idx), reps),
        "densify_all": median_seconds(lambda: csr.to_dense()[idx], reps),
    }
    nnz = csr.values().numel()
    return {
        "cells": cells,
        "genes": genes,
        "nnz": nnz,
        "density": round(nnz / (cells * genes), 5),
        "bytes": {
            "dense": whole.held,
            "csr": right.held,
            "csc": csc.held,
        },
        "dataset": {"layout": layout, "held_bytes": dataset.held},
        "batch": {
            "rows": len(idx),
            "nnz": batch_nnz,
            "dense_bytes": tensor_bytes(truth),
            "max_abs_diff": float((got - truth).abs().max()),
        },
        "touched_bytes": {
            "dataset": touched,
            "csr": right.read_batch(idx)[1],
            "csc": csc.read_batch(idx)[1],
            "dense": whole.read_batch(idx)[1],
        },
        "seconds": {k: round(v, 6) for k, v in seconds.items()},
    }


def make_graphs(n_graphs: int, seed: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Molecule-like graphs: a chain of atoms plus a few ring closures, bonds both ways."""
    gen = torch.Generator().manual_seed(seed)
    graphs = []
    for _ in range(n_graphs):
        n = int(torch.randint(8, 31, (1,), generator=gen))
        src = list(range(n - 1))
        dst = list(range(1, n))
        for _ in range(n // 6):
            a, b = torch.randint(0, n, (2,), generator=gen).tolist()
            if abs(a - b) > 2:
                src.append(a)
                dst.append(b)
        edges = torch.tensor([src + dst, dst + src])
        graphs.append((torch.randn(n, 8, generator=gen), edges))
    return graphs


def message_pass(x: torch.Tensor, edges: torch.Tensor, batch: torch.Tensor, n: int) -> torch.Tensor:
    """One sum-aggregation layer, then sum pooling per graph: [graphs, features]."""
    gen = torch.Generator().manual_seed(3)
    w_self, w_nb = torch.randn(8, 8, generator=gen), torch.randn(8, 8, generator=gen)
    agg = torch.zeros_like(x).index_add_(0, edges[1], x[edges[0]])
    h = torch.relu(x @ w_self + agg @ w_nb)
    return torch.zeros(n, h.shape[1]).index_add_(0, batch, h)


def graph_batch(spec: dict[str, Any]) -> dict[str, Any]:
    graphs = make_graphs(spec["graphs"], spec["seed"])
    xs, edges, batch, owner, offset = [], [], [], [], 0
    for g, (x, e) in enumerate(graphs):
        xs.append(x)
        edges.append(e + (0 if spec["sabotage"] == "no_offset" else offset))
        batch.append(torch.full((len(x),), g))
        owner.append(torch.full((e.shape[1],), g))
        offset += len(x)
    x, edge_index, batch_vec = torch.cat(xs), torch.cat(edges, 1), torch.cat(batch)
    owners = torch.cat(owner)
    misassigned = int(
        ((batch_vec[edge_index[0]] != owners) | (batch_vec[edge_index[1]] != owners)).sum()
    )
    pooled = message_pass(x, edge_index, batch_vec, len(graphs))
    alone = torch.cat(
        [message_pass(gx, ge, torch.zeros(len(gx), dtype=torch.long), 1) for gx, ge in graphs]
    )
    adjacency = (
        torch.sparse_coo_tensor(edge_index, torch.ones(edge_index.shape[1]), (offset, offset))
        .coalesce()
        .to_sparse_csr()
    )
    padded = padded_adjacency(graphs)
    return {
        "graphs": len(graphs),
        "nodes": offset,
        "edges": int(edge_index.shape[1]),
        "misassigned_edges": misassigned,
        "max_rel_diff_vs_single": float((pooled - alone).abs().max() / alone.abs().max()),
        "adjacency_csr_bytes": tensor_bytes(
            adjacency.crow_indices(), adjacency.col_indices(), adjacency.values()
        ),
        "padded_dense_adjacency_bytes": tensor_bytes(padded),
    }


def padded_adjacency(graphs: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    """The other way to batch: each graph's dense adjacency padded to the largest graph,
    materialised as one [graphs, largest, largest] float32 tensor."""
    largest = max(len(x) for x, _ in graphs)
    padded = torch.zeros(len(graphs), largest, largest)
    for g, (_, edges) in enumerate(graphs):
        padded[g, edges[0], edges[1]] = 1.0
    return padded


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    if ctx.rank == 0:
        torch.set_num_threads(1)  # reductions then do not depend on the core count
        warnings.filterwarnings("ignore", message="Sparse", category=UserWarning)
        ctx.events().write("sparse_rows", **sparse_rows(spec), graph_batch=graph_batch(spec))
        ctx.log("sparse-rows done")
    if dist.is_initialized():
        dist.barrier()
