"""rendezvous lab: the driver (torch-free): what each start-up failure looked like."""

from __future__ import annotations

import re

from trainer_lab.context import LabContext

# A gloo/CPU lab on any machine: its collectives use CPU tensors, and the numbers it reports
# should not change with the hardware it happens to run on.
CPU_ONLY = {"CUDA_VISIBLE_DEVICES": ""}

ERROR_ORDER = ("other", "address_in_use", "timeout", "absent", "none")


def joined_counts(message: str) -> tuple[int, int] | None:
    """'... 1/2 clients joined.' -> (1, 2)."""
    found = re.search(r"(\d+)/(\d+) clients joined", message)
    return (int(found.group(1)), int(found.group(2))) if found else None


def drive(run: LabContext) -> None:
    timeout = float(run.params["rdzv_timeout_s"])
    run.plan(1)
    run.launch(
        "trainer_lab.labs.rendezvous.worker:main",
        {**run.params, "collective_timeout_s": 10 * timeout + 20},
        env=CPU_ONLY,
    )
    r = run.report("rendezvous")
    ranks, victim = r["ranks"], r["victim"]
    world = len(ranks)

    master = ranks[0]["missing"]
    joined = [
        ranks[k]["missing"] for k in range(1, world) if ranks[k]["missing"]["error"] != "absent"
    ]
    counts = joined_counts(master["message"])
    counted_right = counts == (1 + len(joined), world)
    waited = master["seconds"] / timeout
    run.observe("missing.master_error", master["error"])
    run.observe("missing.master_seconds", round(master["seconds"], 3))
    run.observe("missing.waited_over_timeout", round(waited, 2))
    run.observe("missing.message", master["message"])
    run.observe("missing.message_counts_joined", counted_right)
    run.observe(
        "missing.joined_ranks_error",
        min((j["error"] for j in joined), key=ERROR_ORDER.index, default="none"),
    )
    run.check(
        "missing_rank_waits_then_counts",
        master["error"] == "timeout" and waited >= 0.9 and counted_right,
        f"master: {master['error']} after {master['seconds']:.2f} s ({waited:.2f}x the "
        f"{timeout:g} s timeout): {master['message'][:160]!r}; {1 + len(joined)} of {world} "
        "ranks had joined",
    )

    wrong = ranks[victim]["wrong_address"]
    wrong_waited = wrong["seconds"] / timeout
    run.observe("wrong_address.victim_error", wrong["error"])
    run.observe("wrong_address.victim_seconds", round(wrong["seconds"], 3))
    run.observe("wrong_address.victim_waited_over_timeout", round(wrong_waited, 2))
    run.observe("wrong_address.victim_message", wrong["message"])
    run.observe("wrong_address.master_error", ranks[0]["wrong_address"]["error"])
    run.check(
        "wrong_address_retries_until_timeout",
        wrong["error"] == "timeout" and wrong_waited >= 0.9,
        f"rank {victim} dialled a dead port: {wrong['error']} after {wrong['seconds']:.2f} s "
        f"({wrong['message'][:160]!r}); the master: {ranks[0]['wrong_address']['error']}",
    )

    held = ranks[0]["port_in_use"]
    fast = held["seconds"] < timeout / 2
    run.observe("port_in_use.error", held["error"])
    run.observe("port_in_use.seconds", round(held["seconds"], 4))
    run.observe("port_in_use.fails_before_timeout", held["error"] != "none" and fast)
    run.observe("port_in_use.message", held["message"])
    run.check(
        "port_in_use_fails_fast",
        held["error"] == "address_in_use" and fast,
        f"second master on a held port: {held['error']} after {held['seconds'] * 1e3:.1f} ms "
        f"({held['message'][:160]!r})",
    )
