"""sparse-rows worker (imports torch): serve batches of cells from a sparse count matrix.

- A cells x genes count matrix (synthetic, ~2 % non-zero) held as torch sparse CSR.
- A batch of rows is sliced straight out of CSR (crow_indices give each row's span of
  col_indices/values) and densified batch-sized; bytes read are counted, not timed.
- For contrast: the same rows out of CSC (every row index of the matrix must be scanned), and
  densifying the whole matrix first. Wall times go into observations only.
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

from trainer_lab.train.worker import WorkerContext

IDX_BYTES, VAL_BYTES = 8, 4  # int64 indices, float32 counts


def make_matrix(cells: int, genes: int, density: float, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    n = int(cells * genes * density)
    rows = torch.randint(0, cells, (n,), generator=gen)
    cols = torch.randint(0, genes, (n,), generator=gen)
    counts = torch.randint(1, 20, (n,), generator=gen).float()
    coo = torch.sparse_coo_tensor(torch.stack([rows, cols]), counts, (cells, genes))
    return coo.coalesce().to_sparse_csr()


def tensor_bytes(*tensors: torch.Tensor) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


class CellBatches:
    """What a Dataset would hold; `layout` is csr (right), csc or dense (the sabotages)."""

    def __init__(self, csr: torch.Tensor, layout: str, bad_indptr: bool = False) -> None:
        self.layout, self.bad_indptr, self.shape = layout, bad_indptr, csr.shape
        if layout == "csr":
            self.crow, self.col, self.val = csr.crow_indices(), csr.col_indices(), csr.values()
            self.held = tensor_bytes(self.crow, self.col, self.val)
        elif layout == "csc":
            csc = csr.to_sparse_csc()
            self.ccol, self.row, self.val = csc.ccol_indices(), csc.row_indices(), csc.values()
            self.held = tensor_bytes(self.ccol, self.row, self.val)
        else:
            self.dense = csr.to_dense()
            self.held = tensor_bytes(self.dense)

    def batch(self, idx: torch.Tensor) -> tuple[torch.Tensor, int]:
        """(dense batch [B, genes], bytes of the matrix read to build it)."""
        genes = self.shape[1]
        if self.layout == "dense":
            return self.dense[idx], len(idx) * genes * VAL_BYTES
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
            return out, 2 * len(idx) * IDX_BYTES + total * (IDX_BYTES + VAL_BYTES)
        # CSC: which entries belong to the batch's rows? Only a scan of every row index says.
        slot = torch.full((self.shape[0],), -1, dtype=torch.long)
        slot[idx] = torch.arange(len(idx))
        hit = slot[self.row] >= 0
        cols = torch.repeat_interleave(torch.arange(genes), self.ccol[1:] - self.ccol[:-1])
        out[slot[self.row[hit]], cols[hit]] = self.val[hit]
        scanned = self.row.numel() * IDX_BYTES + self.ccol.numel() * IDX_BYTES
        return out, scanned + int(hit.sum()) * VAL_BYTES


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
    got, touched = dataset.batch(idx)
    truth = csr.to_dense()[idx]
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
            "dense": cells * genes * VAL_BYTES,
            "csr": right.held,
            "csc": csc.held,
        },
        "dataset": {"layout": layout, "held_bytes": dataset.held},
        "batch": {
            "rows": len(idx),
            "nnz": batch_nnz,
            "dense_bytes": len(idx) * genes * VAL_BYTES,
            "max_abs_diff": float((got - truth).abs().max()),
        },
        "touched_bytes": {
            "dataset": touched,
            "csr": right.batch(idx)[1],
            "csc": csc.batch(idx)[1],
            "dense": len(idx) * genes * VAL_BYTES,
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
    largest = max(len(gx) for gx, _ in graphs)
    return {
        "graphs": len(graphs),
        "nodes": offset,
        "edges": int(edge_index.shape[1]),
        "misassigned_edges": misassigned,
        "max_rel_diff_vs_single": float((pooled - alone).abs().max() / alone.abs().max()),
        "adjacency_csr_bytes": tensor_bytes(
            adjacency.crow_indices(), adjacency.col_indices(), adjacency.values()
        ),
        "padded_dense_adjacency_bytes": len(graphs) * largest * largest * VAL_BYTES,
    }


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    if ctx.rank == 0:
        torch.set_num_threads(1)  # reductions then do not depend on the core count
        warnings.filterwarnings("ignore", message="Sparse", category=UserWarning)
        ctx.events().write("sparse_rows", **sparse_rows(spec), graph_batch=graph_batch(spec))
        ctx.log("sparse-rows done")
    if dist.is_initialized():
        dist.barrier()
