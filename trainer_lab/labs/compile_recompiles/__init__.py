"""compile-recompiles: what makes torch.compile compile again, break graphs, or give up."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="compile-recompiles",
    group="performance",
    summary=(
        "torch.compile's front end (Dynamo) counted with torch._dynamo's own counters: graphs "
        "compiled, graph breaks and the recompile limit. Six batch sizes through one compiled "
        "model (automatic dynamic shapes), an int attribute changed every step (a guard fails "
        "each time, up to the recompile limit) against the same value held in a buffer, "
        "`.item()` in forward (a graph break) against keeping the value a tensor, and "
        "activation checkpointing (use_reentrant=False) inside the compiled region, with its "
        "gradients compared with eager. backend='eager' by default: the counts are Dynamo's "
        "and do not depend on the code generator, which on CPU would cost seconds a graph."
    ),
    params=(
        ParamSpec(
            "backend", "choice", "eager", "torch.compile backend", choices=("eager", "aot_eager")
        ),
        ParamSpec(
            "steps", "int", 12, "calls in the changing-attribute runs", minimum=10, maximum=40
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: dynamic_false compiles with dynamic=False; buffer_as_int keeps the scale "
            "as an int in the buffer run too; capture_scalars sets "
            "capture_scalar_outputs, so .item() stays in the graph; disable_checkpoint runs "
            "each checkpointed block in a torch._dynamo.disable'd function; "
            "raise_recompile_limit lets the int run recompile 64 times",
            choices=(
                "none",
                "dynamic_false",
                "buffer_as_int",
                "capture_scalars",
                "disable_checkpoint",
                "raise_recompile_limit",
            ),
        ),
    ),
    observations=(
        ObservationSpec(
            "batch_sizes", "distinct batch sizes fed to the compiled model", derived=True
        ),
        ObservationSpec("shapes.graphs", "graphs compiled for them"),
        ObservationSpec("attr_int.graphs", "graphs compiled, int attribute changed every step"),
        ObservationSpec("attr_int.hit_recompile_limit", "Dynamo gave up on the frame (bool)"),
        ObservationSpec("attr_buffer.graphs", "graphs compiled, value held in a buffer"),
        ObservationSpec("recompile_limit", "torch._dynamo.config.recompile_limit", derived=True),
        ObservationSpec("item.graph_breaks", "graph breaks with .item() in forward"),
        ObservationSpec("item.graphs", "graphs compiled with .item() in forward"),
        ObservationSpec("tensor_only.graph_breaks", "graph breaks when the value stays a tensor"),
        ObservationSpec("checkpoint.graph_breaks", "graph breaks around checkpointed blocks"),
        ObservationSpec("checkpoint.graphs", "graphs compiled for the checkpointed model"),
        ObservationSpec("checkpoint.grad_max_abs_diff", "compiled + checkpoint vs eager grads"),
    ),
    checks=(
        CheckSpec("dynamic_shapes_stop_recompiling", "six batch sizes: at most two graphs"),
        CheckSpec(
            "changing_int_recompiles_to_the_limit",
            "int attribute: a graph per value up to the limit; a buffer: one graph",
        ),
        CheckSpec("item_breaks_the_graph", ".item() breaks the graph; tensor math does not"),
        CheckSpec(
            "checkpoint_compiles_whole",
            "checkpoint inside compile: one graph, no break, same grads",
        ),
    ),
    default_world_size=1,
    min_world_size=1,
    timeout_s=120.0,
)
