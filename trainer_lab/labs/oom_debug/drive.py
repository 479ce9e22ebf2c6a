"""oom-debug lab: the driver (torch-free). Without a visible GPU nothing is launched."""

from __future__ import annotations

from trainer_lab.context import LabContext, LabError
from trainer_lab.devices import visible_gpus

EXPANDABLE, NATIVE = "expandable_segments:True", "expandable_segments:False"
PAGE_MIB = 20  # an expandable segment maps large-pool memory in 20 MiB pages


def drive(run: LabContext) -> None:
    p = run.params
    if visible_gpus() == 0:
        run.plan(0)
        _on_cpu(run, "no GPU visible")
        return
    if p["hole_mib"] % PAGE_MIB:
        raise LabError(f"hole_mib must be a multiple of {PAGE_MIB} (the segments' page size)")
    run.plan(2)
    spec = {**p, "collective_timeout_s": 60}
    native = {"PYTORCH_ALLOC_CONF": NATIVE}  # whatever the caller's environment says
    run.launch(
        "trainer_lab.labs.oom_debug.worker:main", {**spec, "part": "native"}, "native", env=native
    )
    env = native if p["sabotage"] == "conf_after_init" else {"PYTORCH_ALLOC_CONF": EXPANDABLE}
    run.launch(
        "trainer_lab.labs.oom_debug.worker:main",
        {**spec, "part": "expandable"},
        "expandable",
        env=env,
    )
    native, expandable = run.report("oom_debug", "native"), run.report("oom_debug", "expandable")
    if native["device"] != "cuda":
        _on_cpu(run, "GPUs visible, but the rank ran on the CPU")
        return
    if expandable["device"] != "cuda":
        raise LabError("the expandable-segments launch did not run on the GPU")
    run.observe("device", "cuda")
    run.check("runs_on_a_gpu", True, "rank 0 ran on CUDA")
    for key in ("leak", "snapshot"):
        for name, value in native[key].items():
            run.observe(f"{key}.{name}", value)
    run.observe("fragment.native", native["fragment"])
    run.observe("fragment.expandable", expandable["fragment"])
    _checks(run, native, expandable["fragment"])


def _on_cpu(run: LabContext, why: str) -> None:
    """Nothing to observe but the device: the lab fails here, cards scoped to CUDA skip it."""
    run.observe("device", "cpu")
    run.check("runs_on_a_gpu", False, f"{why}: this lab needs CUDA (nothing else was run)")


def _checks(run: LabContext, native: dict, expandable: dict) -> None:
    leak, snap, frag = native["leak"], native["snapshot"], native["fragment"]
    run.check(
        "snapshot_names_the_leak",
        snap["top_function"] == "keep_step_output",
        f"OOM at step {leak['oom_step']}: {snap['top_function']} holds "
        f"{snap['top_share']:.0%} of the live bytes ({snap['blocks_with_stack']:.0%} of the "
        f"live blocks carry a stack); the kept outputs are {leak['kept_mib']} MiB",
    )
    run.check(
        "oom_recorded_in_trace",
        bool(snap["oom_in_trace"]),
        f"'oom' entry in the trace: {snap['oom_in_trace']} (request {snap['oom_request_mib']} MiB)",
    )
    run.check(
        "native_allocator_fragments",
        bool(frag["oom"]) and bool(frag["free_cached_exceeds_request"]),
        f"native: OOM {frag['oom']} with {frag['reserved_mib']} MiB reserved, "
        f"{frag['allocated_mib']} MiB allocated",
    )
    cap_mib = 9 * run.params["hole_mib"]
    run.check(
        "expandable_segments_fit",
        not expandable["oom"] and expandable["reserved_after_mib"] <= cap_mib,
        f"PYTORCH_ALLOC_CONF={expandable['alloc_conf']!r}: OOM {expandable['oom']}, "
        f"{expandable['reserved_after_mib']} MiB reserved after the request (cap {cap_mib} MiB)",
    )
