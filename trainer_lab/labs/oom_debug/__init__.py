"""oom-debug (GPU only): read a memory snapshot taken at an OOM, and what expandable segments
change about fragmentation."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="oom-debug",
    group="failures",
    summary=(
        "GPU only (on a CPU it reports device=cpu, fails runs_on_a_gpu and runs nothing else; "
        "cards scope their claims with `where: device == 'cuda'`). Every allocation stays under "
        "a cap (torch.cuda.set_per_process_memory_fraction), so the OOMs are provoked on "
        "purpose and bounded. Leak: each step allocates a large temporary (freed) and keeps a "
        "small output (never freed) until a temporary no longer fits; the allocator's history "
        "(torch.cuda.memory._record_memory_history, Python stacks) is read back with "
        "torch.cuda.memory._snapshot() in the OOM handler: which function's allocations hold "
        "the live bytes, and the 'oom' trace entry. Fragmentation: a cached segment is cut "
        "into blocks, every other one freed, then a request larger than any hole but smaller "
        "than the free total is made, once with the native allocator and once in a fresh "
        "process under PYTORCH_ALLOC_CONF=expandable_segments:True."
    ),
    params=(
        ParamSpec(
            "cap_mib", "int", 560, "allocator cap for the process", minimum=256, maximum=4096
        ),
        ParamSpec("temp_mib", "int", 96, "leak: the step's temporary", minimum=20, maximum=512),
        ParamSpec("keep_mib", "int", 32, "leak: the output kept per step", minimum=2, maximum=256),
        ParamSpec(
            "hole_mib",
            "int",
            60,
            "fragmentation: block size (20 MiB pages)",
            minimum=20,
            maximum=200,
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: no_history dumps a snapshot without _record_memory_history; "
            "conf_after_init sets PYTORCH_ALLOC_CONF inside the process after its first CUDA "
            "allocation (the allocator has read its config by then)",
            choices=("none", "no_history", "conf_after_init"),
        ),
    ),
    observations=(
        ObservationSpec("device", "cuda where the lab ran on a GPU, else cpu (nothing else)"),
        ObservationSpec("leak.oom_step", "the step whose temporary did not fit"),
        ObservationSpec("leak.kept_mib", "bytes the kept outputs held at the OOM", "MiB"),
        ObservationSpec("snapshot.top_function", "function whose live blocks hold most bytes"),
        ObservationSpec("snapshot.top_share", "its share of the live bytes at the OOM"),
        ObservationSpec("snapshot.blocks_with_stack", "share of live blocks with a stack"),
        ObservationSpec("snapshot.oom_in_trace", "the trace has an 'oom' entry"),
        ObservationSpec(
            "snapshot.oom_request_mib", "size of the request the trace says failed", "MiB"
        ),
        ObservationSpec("fragment.*.oom", "native / expandable: the large request OOMed"),
        ObservationSpec("fragment.*.reserved_mib", "reserved when the request was made", "MiB"),
        ObservationSpec("fragment.*.allocated_mib", "allocated when the request was made", "MiB"),
        ObservationSpec(
            "fragment.*.free_cached_exceeds_request",
            "reserved minus allocated was larger than the request that was made",
        ),
        ObservationSpec("fragment.*.reserved_after_mib", "reserved after the request", "MiB"),
        ObservationSpec("fragment.*.alloc_conf", "PYTORCH_ALLOC_CONF as the process saw it"),
    ),
    checks=(
        CheckSpec("runs_on_a_gpu", "rank 0 ran on CUDA (on a CPU this fails, nothing else runs)"),
        CheckSpec("snapshot_names_the_leak", "live bytes at the OOM belong to the kept outputs"),
        CheckSpec("oom_recorded_in_trace", "the snapshot's trace holds the failed request"),
        CheckSpec("native_allocator_fragments", "OOM though cached free bytes exceed the request"),
        CheckSpec("expandable_segments_fit", "the same request fits with expandable segments"),
    ),
    default_world_size=1,
    min_world_size=1,
    max_world_size=1,
    timeout_s=120.0,
)
