"""checkpoint-atomicity lab: the driver (torch-free orchestration of the worker launches)."""

from __future__ import annotations

import statistics
from typing import Any

from trainer_lab.config import TrainConfig
from trainer_lab.context import LabContext

TASK = "trainer_lab.labs.checkpoint_atomicity.worker:main"


def _expected(dirs: list[dict[str, Any]]) -> str | None:
    good = [d for d in dirs if d["committed"] and d["complete"]]
    return max(good, key=lambda d: d["step"])["name"] if good else None


def drive(run: LabContext) -> None:
    p = run.params
    cfg = TrainConfig(
        hidden=p["hidden"],
        global_batch=4 * run.world_size,
        n_samples=64 * run.world_size,
        grad_sync="explicit" if run.world_size > 1 else "none",
        steps=0,
    )
    root = run.out_dir / "checkpoints"
    spec = {
        "config": cfg.to_dict(),
        "collective_timeout_s": 20,
        "checkpoint_dir": str(root),
        "trials": p["trials"],
        "saves_per_attempt": p["saves_per_attempt"],
        "seed": p["seed"],
        "picker": p["picker"],
        "incompatible": p["incompatible"],
        "kill": p["kill"],
    }
    run.plan(1)
    # One store per restart round (see elastic-restart: the shared one can hold stale keys).
    env = {"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"}
    result = run.launch(TASK, spec, max_restarts=p["trials"], env=env)
    events = run.events()
    rank0 = events.get(0, [])
    scans = {e["attempt"]: e["dirs"] for e in rank0 if e["event"] == "scan"}
    picks_raw = {e["attempt"]: e for e in rank0 if e["event"] == "pick"}
    kills = sorted(
        (e for evs in events.values() for e in evs if e["event"] == "kill"), key=lambda e: e["time"]
    )
    restarts = max(scans, default=0)
    picks, wrong, torn_picked, torn_seen = [], 0, 0, set()
    for attempt in sorted(scans):
        if attempt == 0:
            continue
        dirs = {d["name"]: d for d in scans[attempt]}
        torn_seen |= {n for n, d in dirs.items() if not (d["committed"] and d["complete"])}
        expected = _expected(scans[attempt])
        pick = picks_raw.get(attempt, {})
        picked = pick.get("picked")
        loaded = picked is None or bool(pick.get("ok"))
        is_torn = picked is not None and not (
            dirs.get(picked, {}).get("committed") and dirs.get(picked, {}).get("complete")
        )
        wrong += int(picked != expected or not loaded)
        torn_picked += int(is_torn)
        picks.append(
            {
                "attempt": attempt,
                "picked": picked,
                "expected": expected,
                "loaded": loaded,
                "error": pick.get("error"),
            }
        )
    saves = [e["seconds"] * 1000 for e in rank0 if e["event"] == "save"]
    mismatch = next((e for e in rank0 if e["event"] == "mismatch"), None)
    final_dirs = sorted(root.glob("step-*"))
    size = sum(f.stat().st_size for f in final_dirs[-1].iterdir()) if final_dirs else None
    run.observe("trials", p["trials"])
    run.observe("restarts", restarts)
    run.observe(
        "kills",
        [{k: e[k] for k in ("stage", "fraction", "rank", "save_index", "where")} for e in kills],
    )
    run.observe("torn_dirs_seen", len(torn_seen))
    run.observe("picks", picks)
    run.observe("wrong_picks", wrong)
    run.observe("torn_picks", torn_picked)
    run.observe("mismatch.refused", bool(mismatch and mismatch["refused"]))
    run.observe("mismatch.message", mismatch["message"][:400] if mismatch else None)
    run.observe("save_latency_ms.median", round(statistics.median(saves), 3) if saves else None)
    run.observe("save_latency_ms.max", round(max(saves), 3) if saves else None)
    run.observe("checkpoint_bytes", size)
    stages = ", ".join(f"{e['stage']}@{e['fraction']}" for e in kills)
    run.check(
        "every_kill_landed",
        len(kills) == p["trials"] and restarts == p["trials"] and result.ok,
        f"{len(kills)} kill(s) of {p['trials']} ({stages}); {restarts} restart(s); "
        f"launch {result.status}",
    )
    run.check(
        "latest_complete_always_found",
        wrong == 0 and len(picks) == p["trials"],
        f"{len(picks) - wrong} of {len(picks)} restarts loaded the newest complete checkpoint"
        + "".join(
            f"; attempt {x['attempt']} picked {x['picked']} (expected {x['expected']}"
            f"{', ' + x['error'] if x['error'] else ''})"
            for x in picks
            if x["picked"] != x["expected"] or not x["loaded"]
        ),
    )
    run.check(
        "torn_never_picked",
        torn_picked == 0,
        f"{torn_picked} torn pick(s); {len(torn_seen)} torn or uncommitted dir(s) were on disk",
    )
    message = mismatch["message"] if mismatch else "no attempt tried"
    run.check(
        "incompatible_config_refused",
        bool(mismatch and mismatch["refused"] and f"{p['incompatible']}:" in message),
        message[:240],
    )
