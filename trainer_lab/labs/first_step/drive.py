"""first-step lab: the driver (torch-free): per-rank phases, bytes and digests -> verdicts."""

from __future__ import annotations

from typing import Any

from trainer_lab.context import LabContext, LabError

WIDTH, BATCH, SAVED_STEP = 256, 64, 3
READ_SLACK = 0.05  # the one reader may read the file's bytes within +-5 % (headers, seeks)


def slowest(per_rank: list[dict[str, Any]], key: str) -> float:
    return max(r["phases"][key] for r in per_rank)


def read_once(read_per_rank: list[int], file_bytes: int) -> bool:
    """Exactly one rank read the file, about once (torch.load reads each record once; the zip
    directory and headers make it differ from the file size by a little)."""
    readers = [b for b in read_per_rank if b > 0]
    return len(readers) == 1 and abs(readers[0] - file_bytes) <= READ_SLACK * file_bytes


def drive(run: LabContext) -> None:
    p = run.params
    model = {
        "width": WIDTH,
        "hidden": p["hidden"],
        "depth": p["depth"],
        "batch": BATCH,
        "saved_step": SAVED_STEP,
    }
    run.plan(1)
    run.launch(
        "trainer_lab.labs.first_step.worker:main",
        {
            "model": model,
            "steady_steps": p["steady_steps"],
            "sabotage": p["sabotage"],
            "collective_timeout_s": 60,
        },
    )
    events = run.events()
    saved = run.report("previous_job")
    per_rank = []
    for rank in range(run.world_size):
        found = [e for e in events.get(rank, []) if e.get("event") == "restart"]
        if len(found) != 1:
            raise LabError(f"rank {rank} did not report its restart ({len(found)} events)")
        per_rank.append(found[0])
    file_bytes = saved["file_bytes"]
    state_bytes = saved["model_bytes"] + saved["optimizer_bytes"]
    for key in ("file_bytes", "model_bytes", "optimizer_bytes", "params"):
        run.observe(f"checkpoint.{key}", saved[key])

    reads = [r["load"]["bytes"] for r in per_rank]
    broadcast = per_rank[0]["load"]["broadcast_bytes"]
    missing_weights = [
        i for i, r in enumerate(per_rank) if r["loaded_digests"]["model"] != saved["model_digest"]
    ]
    missing_optimizer = [
        i
        for i, r in enumerate(per_rank)
        if r["loaded_digests"]["optimizer"] != saved["optimizer_digest"]
    ]
    diverged = [
        i
        for i, r in enumerate(per_rank)
        if r["after_first_steps_digest"] != per_rank[0]["after_first_steps_digest"]
    ]
    restart = {
        "read_per_rank": reads,
        "read_total": sum(reads),
        "read_over_file": round(sum(reads) / file_bytes, 4),
        "readers": sum(b > 0 for b in reads),
        "read_calls_per_rank": [r["load"]["calls"] for r in per_rank],
        "rchar_per_rank": [r["load"]["rchar"] for r in per_rank],
        "broadcast_bytes": broadcast,
        "broadcast_over_state": round(broadcast / state_bytes, 4),
        "broadcast_over_weights": round(broadcast / saved["model_bytes"], 4),
        "skeleton_json_bytes": per_rank[0]["load"]["skeleton_json_bytes"],
        "ranks_missing_weights": len(missing_weights),
        "ranks_missing_optimizer": len(missing_optimizer),
        "ranks_diverged_after_steps": len(diverged),
    }
    for key, value in restart.items():
        run.observe(f"restart.{key}", value)
    contrast_reads = [r["contrast"]["bytes"] for r in per_rank]
    run.observe("contrast.read_per_rank", contrast_reads)
    run.observe("contrast.read_total", sum(contrast_reads))
    run.observe("contrast.read_over_file", round(sum(contrast_reads) / file_bytes, 4))
    run.observe("contrast.readers", sum(b > 0 for b in contrast_reads))
    run.observe("contrast.load_s", max(r["contrast"]["load_s"] for r in per_rank))

    run.observe("phases.import_torch_s", saved["import_torch_s"])
    run.observe("phases.previous_job_s", saved["wall_s"])
    for key in (
        "process_start_to_task_s",
        "new_group_s",
        "model_build_s",
        "checkpoint_load_s",
        "first_step_s",
        "steady_step_s",
        "restart_to_first_step_s",
    ):
        run.observe(f"phases.{key}", slowest(per_rank, key))
    first, steady = slowest(per_rank, "first_step_s"), slowest(per_rank, "steady_step_s")
    run.observe("first_over_steady", round(first / steady, 2))

    run.check(
        "checkpoint_read_once",
        read_once(reads, file_bytes),
        f"bytes read from the {file_bytes:,} B checkpoint per rank: {reads} "
        f"({sum(reads) / file_bytes:.2f}x the file, {restart['readers']} readers); "
        f"{broadcast:,} B broadcast ({saved['model_bytes']:,} B weights + "
        f"{saved['optimizer_bytes']:,} B optimizer state saved); every rank reading "
        f"itself: {contrast_reads}",
    )
    run.check(
        "weights_match_checkpoint",
        not missing_weights,
        f"ranks whose weights differ from the saved ones after the load: "
        f"{missing_weights or 'none'} (saved digest {saved['model_digest']}; loaded: "
        + ", ".join(r["loaded_digests"]["model"] for r in per_rank)
        + ")",
    )
    run.check(
        "optimizer_state_matches_checkpoint",
        not missing_optimizer,
        f"ranks whose AdamW state differs from the saved one after the load: "
        f"{missing_optimizer or 'none'} (saved digest {saved['optimizer_digest']}; loaded: "
        + ", ".join(r["loaded_digests"]["optimizer"] for r in per_rank)
        + ")",
    )
