"""allreduce-cost lab: the driver (torch-free): fit alpha + beta * bytes, compare ring volume."""

from __future__ import annotations

from trainer_lab.context import LabContext

# A gloo/CPU lab on any machine: its collectives use CPU tensors, and the numbers it reports
# should not change with the hardware it happens to run on.
CPU_ONLY = {"CUDA_VISIBLE_DEVICES": ""}


def fit_line(xs: list[float], ys: list[float]) -> tuple[float, float, float]:
    """Ordinary least squares y = a + b x: (a, b, r2). The large messages dominate it, which
    is where beta (the bandwidth term) lives; alpha is read off the smallest message."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    b = sxy / sxx
    a = my - b * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys, strict=True))
    return a, b, 1 - ss_res / ss_tot if ss_tot > 0 else 0.0


def drive(run: LabContext) -> None:
    run.plan(1)
    run.launch(
        "trainer_lab.labs.allreduce_cost.worker:main",
        {**run.params, "collective_timeout_s": 60},
        env=CPU_ONLY,
    )
    r = run.report("allreduce_cost")
    sizes, seconds, ring = r["sizes_bytes"], r["seconds"], r["ring"]
    world = run.world_size
    alpha, beta, r2 = fit_line([float(s) for s in sizes], seconds)
    run.observe("sizes_bytes", sizes)
    run.observe("seconds", [round(s, 7) for s in seconds])
    run.observe("fit.alpha_us", round(alpha * 1e6, 2))
    run.observe("latency_us", round(min(seconds[:3]) * 1e6, 2))
    run.observe("fit.beta_ns_per_byte", round(beta * 1e9, 5))
    run.observe("fit.r2", round(r2, 4))
    run.observe("fit.bandwidth_gb_s", round(1 / beta / 1e9, 3) if beta > 0 else None)
    floor = min(seconds[:3])  # the latency-bound sizes: one slow repetition must not decide
    time_ratio = seconds[-1] / floor
    run.observe("time_ratio", round(time_ratio, 2))
    run.observe("size_ratio", sizes[-1] // sizes[0])
    formula = 2 * (world - 1) / world
    run.observe("bus_bandwidth_gb_s", round(formula * sizes[-1] / seconds[-1] / 1e9, 3))
    over_size = max(ring["sent_bytes"]) / ring["tensor_bytes"]
    run.observe("ring.bytes_over_size", round(over_size, 4))
    run.observe("ring.formula", round(formula, 4))
    run.observe("ring.volume_vs_formula", round(over_size / formula, 4))
    run.observe("ring.matches_all_reduce", ring["matches"])
    run.observe("ring.messages_per_rank", max(ring["messages"]))
    run.check(
        "time_grows_with_size",
        time_ratio >= 10,
        f"{sizes[-1]:,} B took {seconds[-1] * 1e3:.2f} ms, up to {sizes[2]:,} B "
        f"{floor * 1e3:.3f} ms (fastest of the three smallest): {time_ratio:.1f}x for "
        f"{sizes[-1] // sizes[0]}x the bytes",
    )
    run.check(
        "alpha_beta_fits",
        r2 >= 0.8 and beta > 0,
        f"t = {alpha * 1e6:.1f} us + {beta * 1e9:.3f} ns/B * bytes, r2 {r2:.3f}",
    )
    run.check(
        "ring_volume_is_2_n_minus_1_over_n",
        abs(over_size / formula - 1) <= 0.01,
        f"each rank sent up to {max(ring['sent_bytes']):,} B for a {ring['tensor_bytes']:,} B "
        f"tensor: {over_size:.3f} S against 2(n-1)/n = {formula:.3f} at n = {world}",
    )
    run.check(
        "ring_equals_all_reduce",
        ring["matches"],
        "the hand-written ring's result equals dist.all_reduce's on every rank"
        if ring["matches"]
        else "the hand-written ring's result differs from dist.all_reduce's",
    )
