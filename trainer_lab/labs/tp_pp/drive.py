"""tp-pp lab: the driver (torch-free)."""

from __future__ import annotations

from trainer_lab.context import LabContext

# A gloo/CPU lab on any machine: its collectives use CPU tensors, and the numbers it reports
# should not change with the hardware it happens to run on.
CPU_ONLY = {"CUDA_VISIBLE_DEVICES": ""}


def drive(run: LabContext) -> None:
    run.plan(1)
    run.launch(
        "trainer_lab.labs.tp_pp.worker:main",
        {**run.params, "collective_timeout_s": 60},
        env=CPU_ONLY,
    )
    r = run.report("tp_pp")
    tp, pp = r["tp"], r["pp"]
    for key, value in tp.items():
        run.observe(f"tp.{key}", value)
    run.check(
        "tp_one_all_reduce_each_way",
        tp["forward_all_reduces"] == 1
        and tp["backward_all_reduces"] == 1
        and tp["all_gathers"] == 0,
        f"forward: {tp['forward_all_reduces']} all-reduce, backward: "
        f"{tp['backward_all_reduces']}, all-gathers: {tp['all_gathers']}; each rank holds "
        f"{tp['local_up_shape']} of the up projection",
    )
    run.check(
        "tp_matches_one_process",
        tp["max_abs_diff"] <= 1e-5 and tp["grad_max_abs_diff"] <= 1e-5,
        f"output max diff {tp['max_abs_diff']:.2e}, gradients {tp['grad_max_abs_diff']:.2e}",
    )
    world, micro = run.world_size, run.params["microbatches"]
    sends = sum(rank["sends"] for rank in pp)
    per_boundary = sends / ((world - 1) * micro)
    loss_diff = pp[-1]["loss_abs_diff"]
    grads = all(rank["grads_match"] for rank in pp)
    run.observe("pp.sends", sends)
    run.observe("pp.sends_per_boundary_per_microbatch", round(per_boundary, 4))
    run.observe("pp.loss_abs_diff", loss_diff)
    run.observe("pp.grads_match", grads)
    run.check(
        "pp_matches_one_process",
        loss_diff is not None and loss_diff <= 1e-6 and grads,
        f"mean micro-batch loss vs one process: {loss_diff}; every stage's gradients match: "
        f"{grads}",
    )
    run.check(
        "pp_two_sends_per_boundary",
        per_boundary == 2,
        f"{sends} sends over {world - 1} stage boundaries x {micro} micro-batches: "
        f"{per_boundary:g} each",
    )
