"""compile-recompiles lab: the driver (torch-free)."""

from __future__ import annotations

from trainer_lab.context import LabContext

BATCH_SIZES = 6  # the worker's (2, 3, 4, 5, 6, 7)


def drive(run: LabContext) -> None:
    run.plan(1)
    run.launch(
        "trainer_lab.labs.compile_recompiles.worker:main",
        {**run.params, "collective_timeout_s": 100},
    )
    r = run.report("compile_recompiles")
    run.observe("batch_sizes", BATCH_SIZES)
    run.observe("recompile_limit", r["recompile_limit"])
    run.observe("shapes.graphs", r["shapes"]["graphs"])
    run.observe("attr_int.graphs", r["attr_int"]["graphs"])
    run.observe("attr_int.hit_recompile_limit", r["attr_int"]["hit_recompile_limit"])
    run.observe("attr_buffer.graphs", r["attr_buffer"]["graphs"])
    run.observe("item.graph_breaks", r["item"]["graph_breaks"])
    run.observe("item.graphs", r["item"]["graphs"])
    run.observe("tensor_only.graph_breaks", r["tensor_only"]["graph_breaks"])
    ck = r["checkpoint"]
    run.observe("checkpoint.graph_breaks", ck["graph_breaks"])
    run.observe("checkpoint.graphs", ck["graphs"])
    run.observe("checkpoint.grad_max_abs_diff", ck["grad_max_abs_diff"])
    shapes = r["shapes"]["graphs"]
    run.check(
        "dynamic_shapes_stop_recompiling",
        shapes <= 2,
        f"{BATCH_SIZES} batch sizes compiled {shapes} graphs",
    )
    attr, buffer, limit = r["attr_int"], r["attr_buffer"], r["recompile_limit"]
    run.check(
        "changing_int_recompiles_to_the_limit",
        attr["graphs"] == limit and attr["hit_recompile_limit"] and buffer["graphs"] == 1,
        f"int attribute changed on {run.params['steps']} calls: {attr['graphs']} graphs, "
        f"recompile limit ({limit}) hit: {attr['hit_recompile_limit']}; held in a buffer: "
        f"{buffer['graphs']} graph(s)",
    )
    item, tensor = r["item"], r["tensor_only"]
    run.check(
        "item_breaks_the_graph",
        item["graph_breaks"] >= 1 and tensor["graph_breaks"] == 0,
        f".item() in forward: {item['graph_breaks']} graph breaks ({item['graphs']} graphs); "
        f"the value kept a tensor: {tensor['graph_breaks']}",
    )
    run.check(
        "checkpoint_compiles_whole",
        ck["graphs"] == 1 and ck["graph_breaks"] == 0 and ck["grad_max_abs_diff"] <= 1e-6,
        f"3 checkpointed blocks under compile: {ck['graph_breaks']} graph breaks, "
        f"{ck['graphs']} graph(s), gradients vs eager: max diff {ck['grad_max_abs_diff']:.2e}",
    )
