"""profiler-workflow lab: the driver (torch-free): read the trace's numbers."""

from __future__ import annotations

from trainer_lab.context import LabContext


def drive(run: LabContext) -> None:
    run.plan(1)
    run.launch(
        "trainer_lab.labs.profiler_workflow.worker:main", {**run.params, "collective_timeout_s": 80}
    )
    r = run.report("profiler_workflow")
    ranked = sorted(r["self_us"].items(), key=lambda kv: kv[1], reverse=True)
    top, top_us = ranked[0]
    share = top_us / sum(r["self_us"].values())
    steps = r["steps"]
    data_share = r["data_us"] / r["step_us"]
    ops_share = r["data_ops_us"] / r["data_us"] if r["data_us"] else 0.0
    items = r["items"] / steps
    run.observe("top_op", top)
    run.observe("top_op_share", round(share, 3))
    run.observe("data_share", round(data_share, 3))
    run.observe("data_ops_share", round(ops_share, 3))
    run.observe("item_calls_per_step", items)
    run.observe("profiled_steps", steps)
    run.observe("step_ms", round(r["step_us"] / steps / 1e3, 3))
    runners_up = ", ".join(f"{name} {us / 1e3:.1f} ms" for name, us in ranked[1:4])
    run.check(
        "slow_op_on_top",
        top == "aten::sort",
        f"top self time: {top} {top_us / 1e3:.1f} ms ({share:.0%}); then {runners_up}",
    )
    run.check(
        "host_gap_visible",
        data_share >= 0.2 and ops_share < 0.5,
        f"the data phase is {data_share:.0%} of the profiled steps, {ops_share:.0%} of it in "
        "operators (the rest is Python building the batch)",
    )
    run.check(
        "item_calls_counted",
        items > 1,
        f"{r['items']} aten::item over {steps} profiled steps: {items:g} per step",
    )
