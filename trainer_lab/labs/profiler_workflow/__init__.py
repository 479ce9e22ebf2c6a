"""profiler-workflow: read a torch.profiler trace to find the slow op, the host-bound gap and
the .item() calls in a training step."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="profiler-workflow",
    group="performance",
    summary=(
        "A small training step with three planted problems is profiled with torch.profiler "
        "(schedule wait 1, warmup 1, active 3; record_function labels per phase): a batch built "
        "element by element in Python (the host-bound gap: no operator runs), a regulariser "
        "that sorts a large tensor every step (the slow op), and a loss logged with .item() "
        "inside the micro-step loop (on a GPU each one waits for the device). The trace is "
        "read the way one would by hand: the top operator by self time, the share of the step "
        "spent in the data phase, and the count of aten::item per step."
    ),
    params=(
        ParamSpec(
            "micro_steps",
            "int",
            4,
            "micro-steps per step (one .item() each)",
            minimum=2,
            maximum=16,
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: no_slow_op drops the sort; fast_loader builds the batch as one tensor op; "
            "no_item logs the detached loss tensor",
            choices=("none", "no_slow_op", "fast_loader", "no_item"),
        ),
    ),
    observations=(
        ObservationSpec("top_op", "operator with the most self CPU time"),
        ObservationSpec("top_op_share", "its share of all operators' self time"),
        ObservationSpec("data_share", "share of the profiled step spent in the data phase"),
        ObservationSpec("data_ops_share", "share of the data phase inside operators"),
        ObservationSpec("item_calls_per_step", "aten::item calls per profiled step"),
        ObservationSpec("profiled_steps", "steps the schedule recorded", derived=True),
        ObservationSpec("step_ms", "mean profiled step", "ms"),
    ),
    checks=(
        CheckSpec("slow_op_on_top", "aten::sort has the most self time"),
        CheckSpec("host_gap_visible", "the data phase is >= 20 % of the step with few ops in it"),
        CheckSpec("item_calls_counted", "more than one aten::item per step"),
    ),
    default_world_size=1,
    min_world_size=1,
    timeout_s=90.0,
)
