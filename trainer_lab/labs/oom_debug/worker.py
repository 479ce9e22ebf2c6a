"""oom-debug worker (imports torch): OOMs provoked on purpose under an allocator cap.

part=native: the leak (history recorded, snapshot read in the OOM handler), then the
fragmentation pattern with the native allocator. part=expandable: the fragmentation pattern
only, in a process started with PYTORCH_ALLOC_CONF=expandable_segments:True (unless the
sabotage sets it after the allocator has read its config).
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import torch

from trainer_lab.train.worker import WorkerContext

MIB = 1 << 20
LEAK_FUNCTIONS = ("keep_step_output", "forward_temporary")
HOLES = 8  # blocks the fragmentation segment is cut into; every other one is freed
EXPANDABLE = "expandable_segments:True"


def cap_memory(device: torch.device, cap_bytes: int) -> None:
    """Every allocation of this process beyond cap_bytes raises OutOfMemoryError."""
    total = torch.cuda.get_device_properties(device).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, cap_bytes / total), device)


def keep_step_output(nbytes: int, device: torch.device) -> torch.Tensor:
    """What a training loop keeps by mistake (a loss or metric tensor held across steps)."""
    return torch.empty(nbytes, dtype=torch.uint8, device=device)


def forward_temporary(nbytes: int, device: torch.device) -> torch.Tensor:
    """A step's large activation, freed at the end of the step."""
    return torch.empty(nbytes, dtype=torch.uint8, device=device)


def _block_frames(block: dict[str, Any]) -> list[dict[str, Any]]:
    if block.get("frames"):
        return block["frames"]
    history = block.get("history") or []  # older snapshot layout
    return history[-1].get("frames", []) if history else []


def read_snapshot(snapshot: dict[str, Any]) -> dict[str, Any]:
    """Which function's live blocks hold the bytes, and whether the trace saw the OOM."""
    held: Counter[str] = Counter()
    blocks = with_stack = 0
    for segment in snapshot.get("segments", []):
        for block in segment.get("blocks", []):
            if block.get("state") != "active_allocated":
                continue
            blocks += 1
            names = [frame.get("name") for frame in _block_frames(block)]
            with_stack += bool(names)
            owner = next((n for n in names if n in LEAK_FUNCTIONS), "other" if names else None)
            held[owner or "no stack"] += int(block.get("size", 0))
    traced = [entry for trace in snapshot.get("device_traces", []) for entry in trace]
    ooms = [entry for entry in traced if entry.get("action") == "oom"]
    stacked = {name: size for name, size in held.items() if name != "no stack"}
    top = max(stacked, key=stacked.__getitem__) if stacked else None
    total = sum(held.values())
    return {
        "top_function": top,
        "top_share": round(held[top] / total, 4) if top and total else 0.0,
        "blocks_with_stack": round(with_stack / blocks, 4) if blocks else 0.0,
        "oom_in_trace": bool(ooms),
        "oom_request_mib": round(int(ooms[-1].get("size", 0)) / MIB, 2) if ooms else None,
    }


def leak(spec: dict[str, Any], device: torch.device) -> tuple[dict[str, Any], dict[str, Any]]:
    cap_memory(device, spec["cap_mib"] * MIB)
    if spec["sabotage"] != "no_history":
        torch.cuda.memory._record_memory_history(max_entries=100_000, stacks="python")
    kept: list[torch.Tensor] = []
    oom_step, snapshot = None, {}
    limit = spec["cap_mib"] // spec["keep_mib"] + 2  # the cap is reached before this
    temporary = None
    for step in range(limit):
        try:
            temporary = forward_temporary(spec["temp_mib"] * MIB, device)
            kept.append(keep_step_output(spec["keep_mib"] * MIB, device))
        except torch.OutOfMemoryError:
            oom_step = step
            snapshot = torch.cuda.memory._snapshot()  # what _dump_snapshot pickles
            break
        temporary = None
    del temporary
    kept_mib = round(sum(t.numel() for t in kept) / MIB, 2)
    kept.clear()
    torch.cuda.memory._record_memory_history(enabled=None)
    torch.cuda.empty_cache()
    return {"oom_step": oom_step, "kept_mib": kept_mib}, read_snapshot(snapshot)


def fragment(spec: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """One cached segment of HOLES blocks, every other one freed, then a request of 3 holes:
    more than any hole, less than the free total. The cap leaves room for it only if the
    freed holes can be given back (9 holes: native needs 11, expandable about 7)."""
    hole = spec["hole_mib"] * MIB
    torch.cuda.empty_cache()
    cap_memory(device, 9 * hole)
    whole = torch.empty(HOLES * hole, dtype=torch.uint8, device=device)
    del whole  # cached: the blocks below are cut out of this one segment
    blocks: list[torch.Tensor | None] = [
        torch.empty(hole, dtype=torch.uint8, device=device) for _ in range(HOLES)
    ]
    for i in range(0, HOLES, 2):
        blocks[i] = None
    reserved, allocated = torch.cuda.memory_reserved(device), torch.cuda.memory_allocated(device)
    request = 3 * hole
    try:
        big = torch.empty(request, dtype=torch.uint8, device=device)
        oom = False
        del big
    except torch.OutOfMemoryError:
        oom = True
    reserved_after = torch.cuda.memory_reserved(device)
    blocks.clear()
    torch.cuda.empty_cache()
    return {
        "oom": oom,
        "reserved_mib": round(reserved / MIB, 2),
        "allocated_mib": round(allocated / MIB, 2),
        "free_cached_exceeds_request": reserved - allocated > request,
        "reserved_after_mib": round(reserved_after / MIB, 2),
        "alloc_conf": os.environ.get("PYTORCH_ALLOC_CONF", ""),
    }


def main(ctx: WorkerContext, spec: dict[str, Any]) -> None:
    if ctx.device.type != "cuda":
        ctx.events().write("oom_debug", device=ctx.device.type)
        return
    report: dict[str, Any] = {"device": "cuda"}
    if spec["part"] == "native":
        report["leak"], report["snapshot"] = leak(spec, ctx.device)
    elif spec["sabotage"] == "conf_after_init":
        torch.empty(1, device=ctx.device)  # the allocator is initialised and has read its config
        os.environ["PYTORCH_ALLOC_CONF"] = EXPANDABLE
    report["fragment"] = fragment(spec, ctx.device)
    ctx.events().write("oom_debug", **report)
    ctx.log(f"oom-debug {spec['part']} done")
