"""sparse-rows lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

from trainer_lab.context import LabContext

ENTRY_BYTES, ROW_POINTER_BYTES = 12, 16  # int64 column index + float32 value; two int64 pointers


def drive(run: LabContext) -> None:
    p = run.params
    run.plan(1)
    run.launch("trainer_lab.labs.sparse_rows.worker:main", {**p, "collective_timeout_s": 170})
    r = run.report("sparse_rows")
    for key, value in r.items():
        run.observe(key, value)
    size, batch, touched, secs = r["bytes"], r["batch"], r["touched_bytes"], r["seconds"]
    held_ratio = round(r["dataset"]["held_bytes"] / size["dense"], 5)
    own = batch["nnz"] * ENTRY_BYTES + batch["rows"] * ROW_POINTER_BYTES
    amplification = round(touched["dataset"] / own, 3)
    graphs = r["graph_batch"]
    run.observe("dataset_over_dense", held_ratio)
    run.observe("read_amplification", amplification)
    run.observe("csc_read_amplification", round(touched["csc"] / touched["csr"], 3))
    run.observe(
        "graph_batch.padded_over_csr",
        round(graphs["padded_dense_adjacency_bytes"] / graphs["adjacency_csr_bytes"], 3),
    )
    run.observe(
        "time_ratio",
        {
            "densify_over_csr": round(secs["densify_all"] / secs["csr_batch"], 2),
            "csc_over_csr": round(secs["csc_batch"] / secs["csr_batch"], 2),
        },
    )
    run.check(
        "dataset_stays_sparse",
        r["dataset"]["held_bytes"] <= size["csr"]
        and size["csr"] <= 4 * r["density"] * size["dense"],
        f"the dataset holds {r['dataset']['held_bytes']:,} B as {r['dataset']['layout']} "
        f"({held_ratio:.1%} of the dense {size['dense']:,} B); CSR is {size['csr']:,} B for "
        f"{r['nnz']:,} non-zeros ({ENTRY_BYTES} B each + row pointers)",
    )
    run.check(
        "rows_match_dense",
        batch["max_abs_diff"] == 0,
        f"{batch['rows']} rows sliced and densified: max abs diff {batch['max_abs_diff']:g} "
        "against the same rows of the dense matrix",
    )
    run.check(
        "row_reads_touch_only_the_batch",
        amplification <= 1.01,
        f"one batch read {touched['dataset']:,} B of the {r['dataset']['layout']} matrix; its "
        f"{batch['nnz']:,} entries and row pointers are {own:,} B (CSR {touched['csr']:,} B, "
        f"CSC {touched['csc']:,} B, dense {touched['dense']:,} B)",
    )
    run.check(
        "graph_batch_matches_single_graphs",
        graphs["misassigned_edges"] == 0 and graphs["max_rel_diff_vs_single"] <= 1e-5,
        f"{graphs['graphs']} graphs, {graphs['nodes']} nodes, {graphs['edges']} directed "
        f"edges: {graphs['misassigned_edges']} edges land in another graph's nodes; pooled "
        f"output vs each graph alone: max rel diff {graphs['max_rel_diff_vs_single']:.2e}",
    )
