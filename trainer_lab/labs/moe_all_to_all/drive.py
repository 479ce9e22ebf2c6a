"""moe-all-to-all lab: the driver (torch-free): per-rank counts -> observations and checks."""

from __future__ import annotations

from typing import Any

from trainer_lab.context import LabContext

TOLERANCE = 1e-9  # float64: a correct layer differs from one process by rounding only
PAYLOAD_OPS = ("all_to_all", "all_gather", "reduce_scatter")


def remote(record: dict[str, Any], rank: int, key: str) -> int:
    """Bytes of one collective record sent to (key="sent") or received from ("received")
    ranks other than `rank`: what crosses the network; the rank's own share is a copy."""
    return record["row_bytes"] * sum(n for q, n in enumerate(record[key]) if q != rank)


def stage_bytes(records: list[dict[str, Any]], rank: int, stage: str, key: str) -> int:
    return sum(
        remote(r, rank, key) for r in records if r["stage"] == stage and r["phase"] == "forward"
    )


def phase_bytes(per_rank: list[list[dict[str, Any]]], phase: str) -> int:
    """Payload bytes all ranks sent to other ranks in one phase (count exchanges excluded)."""
    return sum(
        remote(r, rank, "sent")
        for rank, records in enumerate(per_rank)
        for r in records
        if r["phase"] == phase and r["op"] in PAYLOAD_OPS
    )


def calls(records: list[dict[str, Any]], phase: str) -> dict[str, int]:
    return {op: sum(r["op"] == op and r["phase"] == phase for r in records) for op in PAYLOAD_OPS}


def imbalance(values: list[int]) -> float:
    """max / mean: 1.0 is perfectly even; the busiest one sets the step time."""
    mean = sum(values) / len(values)
    return round(max(values) / mean, 4) if mean else 0.0


def drive(run: LabContext) -> None:
    run.plan(1)
    run.launch(
        "trainer_lab.labs.moe_all_to_all.worker:main", {**run.params, "collective_timeout_s": 60}
    )
    r = run.report("moe_all_to_all")
    ranks, ref, world = r["ranks"], r["reference"], run.world_size
    comms = [rank["comms"] for rank in ranks]
    run.observe("experts", r["experts"])
    run.observe("capacity", r["capacity"])
    run.observe("assignments", r["assignments"])
    worst = {
        key: max(rank[key] for rank in ranks)
        for key in (
            "output_diff",
            "all_gather_diff",
            "input_grad_diff",
            "expert_grad_diff",
            "router_local_diff",
            "router_summed_diff",
        )
    }
    run.observe("output.max_abs_diff", worst["output_diff"])
    run.observe("all_gather_design.max_abs_diff", worst["all_gather_diff"])
    run.observe("grads.input_max_abs_diff", worst["input_grad_diff"])
    run.observe("grads.expert_max_abs_diff", worst["expert_grad_diff"])
    run.observe("grads.router_local_max_abs_diff", worst["router_local_diff"])
    run.observe("grads.router_summed_max_abs_diff", worst["router_summed_diff"])

    dropped = sum(rank["dropped"] for rank in ranks)
    processed = sum(rank["processed"] for rank in ranks)
    run.observe("tokens.dropped", dropped)
    run.observe("tokens.dropped_reference", ref["dropped"])
    run.observe("tokens.processed", processed)
    run.observe("tokens.drop_rate", round(ref["dropped"] / r["assignments"], 4))
    per_expert = [n for rank in ranks for n in rank["expert_rows"]]
    rank_rows = [sum(rank["expert_rows"]) for rank in ranks]
    run.observe("load.routed", ref["routed"])
    run.observe("load.processed", per_expert)
    run.observe("load.imbalance", imbalance(ref["routed"]))
    run.observe("load.processed_imbalance", imbalance(per_expert))
    run.observe("load.rank_rows", rank_rows)
    run.observe("load.rank_imbalance", imbalance(rank_rows))

    for phase in ("forward", "backward"):
        for op, n in calls(comms[0], phase).items():
            run.observe(f"collectives.{phase}.{op}", n)
    exchanges = [r for r in comms[0] if r["op"] == "count_exchange"]
    run.observe("collectives.count_exchanges", len(exchanges))
    run.observe(
        "collectives.count_bytes",
        sum(
            remote(x, q, "sent")
            for q, c in enumerate(comms)
            for x in c
            if x["op"] == "count_exchange"
        ),
    )
    row = next(x["row_bytes"] for x in comms[0] if x["stage"] == "dispatch")
    expected = [
        row * sum(ref["remote_rows"][src][dst] for src in range(world)) for dst in range(world)
    ]
    dispatch = {
        "sent_bytes": [stage_bytes(c, q, "dispatch", "sent") for q, c in enumerate(comms)],
        "received_bytes": [stage_bytes(c, q, "dispatch", "received") for q, c in enumerate(comms)],
        "expected_received_bytes": expected,
        "self_rows": [
            sum(x["sent"][q] for x in c if x["stage"] == "dispatch" and x["phase"] == "forward")
            for q, c in enumerate(comms)
        ],
    }
    messages = [
        sum(
            n > 0
            for x in c
            if x["stage"] == "dispatch" and x["phase"] == "forward"
            for peer, n in enumerate(x["sent"])
            if peer != q
        )
        for q, c in enumerate(comms)
    ]
    dispatch["messages"] = messages
    dispatch["mean_message_bytes"] = (
        round(sum(dispatch["sent_bytes"]) / sum(messages), 1) if sum(messages) else 0.0
    )
    dispatch["receive_imbalance"] = imbalance(dispatch["received_bytes"])
    combine = {
        "sent_bytes": [stage_bytes(c, q, "combine", "sent") for q, c in enumerate(comms)],
        "received_bytes": [stage_bytes(c, q, "combine", "received") for q, c in enumerate(comms)],
    }
    for key, value in dispatch.items():
        run.observe(f"dispatch.{key}", value)
    for key, value in combine.items():
        run.observe(f"combine.{key}", value)
    forward, backward = phase_bytes(comms, "forward"), phase_bytes(comms, "backward")
    gathered = phase_bytes([rank["all_gather_comms"] for rank in ranks], "forward")
    run.observe("bytes.layer_forward", forward)
    run.observe("bytes.layer_backward", backward)
    run.observe("bytes.all_gather_design_forward", gathered)
    run.observe("bytes.all_gather_over_layer", round(gathered / forward, 4) if forward else None)

    run.check(
        "output_matches_reference",
        worst["output_diff"] <= TOLERANCE,
        f"layer output vs one process running every expert: max abs diff "
        f"{worst['output_diff']:.3g} (all-gather design: {worst['all_gather_diff']:.3g})",
    )
    grads = max(worst["input_grad_diff"], worst["expert_grad_diff"], worst["router_summed_diff"])
    run.check(
        "gradients_match_reference",
        grads <= TOLERANCE,
        f"max abs diff vs one process: inputs {worst['input_grad_diff']:.3g}, experts (each rank "
        f"its own, never reduced) {worst['expert_grad_diff']:.3g}, router summed over ranks "
        f"{worst['router_summed_diff']:.3g} (one rank's alone: {worst['router_local_diff']:.3g})",
    )
    run.check(
        "drops_counted",
        dropped == ref["dropped"] and processed + dropped == r["assignments"],
        f"{r['assignments']} (token, expert) rows routed, capacity {r['capacity']} per expert "
        f"and rank: the experts ran {processed}, the layer reported {dropped} dropped (one "
        f"process's routing drops {ref['dropped']})",
    )
    run.check(
        "dispatch_moves_only_routed_tokens",
        dispatch["received_bytes"] == expected and combine["sent_bytes"] == expected,
        f"dispatch bytes received from other ranks per rank {dispatch['received_bytes']}, "
        f"rows routed there from other ranks x {row} B: {expected}; combine sent back "
        f"{combine['sent_bytes']}; forward total {forward} B vs {gathered} B gathering every token",
    )
