"""sparse-rows: batches of cells sliced out of a sparse CSR matrix vs densifying; graph batches."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="sparse-rows",
    group="performance",
    summary=(
        "A synthetic single-cell count matrix (cells x genes, ~2 % non-zero) held as torch "
        "sparse CSR; a batch of cells is sliced out of CSR and densified batch-sized. Bytes "
        "held are the storages' sizes; bytes read per batch are observed (a dispatch mode "
        "counts what each aten op the slicing ran read out of the held tensors), CSR vs CSC vs "
        "dense; median wall times too. Also: a batch of molecular graphs as one block-diagonal "
        "sparse adjacency (node ids offset per graph), checked against running each graph "
        "alone, and the padded dense adjacency materialised beside it."
    ),
    params=(
        ParamSpec("cells", "int", 10000, "rows of the matrix", minimum=100, maximum=200000),
        ParamSpec("genes", "int", 2000, "columns of the matrix", minimum=10, maximum=40000),
        ParamSpec(
            "density", "float", 0.02, "share of non-zero entries", minimum=0.001, maximum=0.2
        ),
        ParamSpec("batch", "int", 256, "cells per batch", minimum=1, maximum=4096),
        ParamSpec("graphs", "int", 32, "molecular graphs per graph batch", minimum=2, maximum=512),
        ParamSpec("seed", "int", 0, "data seed", minimum=0),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: densify holds the whole matrix dense; csc holds it as CSC; bad_indptr "
            "slices each row from one entry too far; no_offset batches graphs without "
            "shifting node ids",
            choices=("none", "densify", "csc", "bad_indptr", "no_offset"),
        ),
    ),
    observations=(
        ObservationSpec("cells", "rows"),
        ObservationSpec("genes", "columns"),
        ObservationSpec("nnz", "stored non-zeros"),
        ObservationSpec("density", "nnz / (cells x genes)"),
        ObservationSpec("bytes.*", "storage bytes of the whole matrix as dense, csr or csc", "B"),
        ObservationSpec("dataset.layout", "how the dataset holds the matrix"),
        ObservationSpec("dataset.held_bytes", "bytes the dataset holds", "B"),
        ObservationSpec("dataset_over_dense", "held bytes / the dense matrix's bytes"),
        ObservationSpec("batch.*", "rows, nnz, dense_bytes, max_abs_diff (vs dense rows)"),
        ObservationSpec(
            "touched_bytes.*", "bytes of the held matrix the ops building one batch read", "B"
        ),
        ObservationSpec(
            "read_amplification",
            "bytes the dataset's ops read / the batch's own entries (12 B) and row pointers",
        ),
        ObservationSpec("csc_read_amplification", "bytes read from CSC / from CSR, same batch"),
        ObservationSpec("seconds.*", "median wall time: csr_batch, csc_batch, densify_all", "s"),
        ObservationSpec("time_ratio.*", "densify_over_csr, csc_over_csr (wall time)"),
        ObservationSpec("graph_batch.*", "the graph batch: sizes, misassigned edges, diffs"),
        ObservationSpec(
            "graph_batch.padded_over_csr",
            "storage bytes: the padded dense adjacency materialised / the batch's CSR adjacency",
        ),
    ),
    checks=(
        CheckSpec("dataset_stays_sparse", "the dataset holds CSR bytes, not the dense matrix"),
        CheckSpec("rows_match_dense", "sliced rows equal the dense matrix's rows exactly"),
        CheckSpec("row_reads_touch_only_the_batch", "a batch reads only its rows' entries"),
        CheckSpec("graph_batch_matches_single_graphs", "batched message passing = per graph"),
    ),
    default_world_size=1,
    min_world_size=1,
    timeout_s=180.0,
)
