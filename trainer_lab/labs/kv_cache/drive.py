"""kv-cache lab: the driver (torch-free): one launch, then observations and checks."""

from __future__ import annotations

import math

from trainer_lab.context import LabContext, LabError

FP32_BYTES = 4
LOGIT_TOLERANCE = 1e-4  # fp32: one token's matmuls vs the whole sequence's, rounding only
CACHE_TOLERANCE = 1e-5


def exponent(values: list[int]) -> float:
    """log2 of the last probe's value over the middle one's (probe lengths S/2 and S)."""
    return round(math.log2(values[-1] / values[-2]), 4) if values[-2] > 0 else math.inf


def drive(run: LabContext) -> None:
    p = run.params
    if p["seq_len"] % 4 or p["prompt_len"] >= p["seq_len"] // 4:
        raise LabError("seq_len must be a multiple of 4 and prompt_len below seq_len / 4")
    run.plan(1)
    run.launch("trainer_lab.labs.kv_cache.worker:main", {**p, "collective_timeout_s": 60})
    r = run.report("kv_cache")
    top, low, sums = r["maxima"], r["minima"], r["sums"]
    batch = p["batch"]
    logit_diff, cache_diff = top["logit_diff"], top["cache_diff_first_layer"]
    run.observe("decode.max_abs_logit_diff", logit_diff)
    run.observe("decode.max_abs_cache_diff_first_layer", cache_diff)
    run.observe("decode.max_abs_cache_diff", top["cache_diff"])

    measured = r["cache_bytes"]["fp32"]
    m = r["model"]  # the model's configuration: the formula's inputs
    formula = 2 * m["layers"] * m["kv_heads"] * m["head_dim"] * p["seq_len"] * batch * FP32_BYTES
    run.observe("cache.bytes", measured)
    run.observe("cache.bytes_bf16", r["cache_bytes"]["bf16"])
    run.observe("cache.bytes_formula", formula)
    run.observe("cache.shape", r["cache_shape"])
    run.observe("cache.bytes_over_formula", round(measured / formula, 4))

    run.observe("flops.probe_lengths", r["probes"])
    exponents = {}
    for path in ("cached", "recompute"):
        counted = r[f"{path}_flops"]
        attention = [c["attention"] for c in counted]
        weights = [c["weights"] for c in counted]
        run.observe(f"flops.{path}.attention", attention)
        run.observe(f"flops.{path}.weights", weights)
        run.observe(f"flops.{path}.total", [a + w for a, w in zip(attention, weights, strict=True)])
        exponents[path] = (exponent(attention), exponent(weights))
        run.observe(f"flops.{path}.attention_exponent", exponents[path][0])
        run.observe(f"flops.{path}.weights_exponent", exponents[path][1])
    step, full = r["cached_flops"][-1], r["recompute_flops"][-1]
    cached_total = step["attention"] + step["weights"]
    recompute_total = full["attention"] + full["weights"]
    run.observe("flops.recompute_over_cached", round(recompute_total / cached_total, 2))
    run.observe("intensity.model_bytes", r["model_bytes"])
    run.observe("intensity.decode_step_bytes", step["bytes"])
    decode_intensity = cached_total * batch / step["bytes"]
    full_intensity = recompute_total * batch / full["bytes"]
    run.observe("intensity.decode", round(decode_intensity, 3))
    run.observe("intensity.full_forward", round(full_intensity, 3))
    run.observe("intensity.full_over_decode", round(full_intensity / decode_intensity, 2))

    for path in ("bf16", "fp32"):
        n = sums[f"{path}.count"]
        mean = sums[f"{path}.ratio"] / n
        var = max(sums[f"{path}.ratio_sq"] / n - mean**2, 0.0)
        run.observe(f"serve.{path}.max_abs_logprob_diff", top[f"{path}.abs_diff"])
        run.observe(f"serve.{path}.mean_abs_logprob_diff", sums[f"{path}.abs_diff"] / n)
        run.observe(f"serve.{path}.ratio_min", low[f"{path}.ratio_min"])
        run.observe(f"serve.{path}.ratio_max", top[f"{path}.ratio_max"])
        run.observe(f"serve.{path}.ratio_std", math.sqrt(var))
        run.observe(f"serve.{path}.max_abs_ratio_dev", top[f"{path}.ratio_dev"])
        run.observe(f"serve.{path}.mean_kl", sums[f"{path}.kl"] / n)
        run.observe(f"serve.{path}.argmax_agreement", round(sums[f"{path}.argmax_same"] / n, 4))
        run.observe(f"serve.{path}.tokens", int(n))

    run.check(
        "decode_matches_full_forward",
        logit_diff <= LOGIT_TOLERANCE,
        f"prefill {p['prompt_len']} + decode to {p['seq_len']} tokens, {batch} sequences "
        f"per rank: max abs logit diff vs one full forward {logit_diff:.3g} (tolerance "
        f"{LOGIT_TOLERANCE:g})",
    )
    run.check(
        "cache_holds_every_token",
        cache_diff <= CACHE_TOLERANCE,
        f"first layer's cached keys/values (they depend on the tokens and positions only) vs "
        f"the full forward's, after rotary: max abs diff {cache_diff:.3g} (tolerance "
        f"{CACHE_TOLERANCE:g}); every layer: {top['cache_diff']:.3g}",
    )
    run.check(
        "cache_bytes_match_formula",
        measured == formula,
        f"the cache's tensors hold {measured:,} B (shape per layer {r['cache_shape']}); "
        f"2 x {m['layers']} layers x {m['kv_heads']} kv heads x {m['head_dim']} x "
        f"{p['seq_len']} tokens x "
        f"{batch} x {FP32_BYTES} B = {formula:,} B; bf16: {r['cache_bytes']['bf16']:,} B",
    )
    cached_attn, cached_weights = exponents["cached"]
    recompute_attn, _ = exponents["recompute"]
    run.check(
        "decode_cost_linear",
        abs(cached_attn - 1) <= 0.05 and abs(cached_weights) <= 0.05 and recompute_attn >= 1.9,
        f"attention FLOPs per token from S/2 to S = {p['seq_len']}: x{2**cached_attn:.2f} "
        f"with the cache (exponent {cached_attn}), x{2**recompute_attn:.2f} recomputing "
        f"(exponent {recompute_attn}); weight FLOPs per token exponent {cached_weights} with "
        f"the cache; at S one token costs {recompute_total / cached_total:.1f}x the FLOPs "
        "without the cache",
    )
