"""kv-cache: cached decode against the training forward; cache bytes, FLOPs, bf16 log-probs."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SABOTAGES = (
    "none",
    "position_off_by_one",
    "stale_cache",
    "gqa_mis_repeat",
    "expand_before_cache",
    "reprefill",
)

SPEC = LabSpec(
    name="kv-cache",
    group="correctness",
    summary=(
        "A tiny causal LM (rotary positions, grouped-query attention: 4 query heads share 2 "
        "key/value heads) trained a few DDP steps on W ranks. Each rank rolls out its prompts "
        "with the inference path (prefill into a KV cache, then one token per step) and "
        "compares every position's logits and the cached keys/values with one full training "
        "forward over the sequence (fp32). The cache's bytes are measured from its tensors "
        "against 2 x layers x kv_heads x head_dim x seq x batch x bytes. FLOPs per generated "
        "token are counted (FlopCounterMode) with the cache and recomputing the prefix: "
        "attention grows as S with the cache, S^2 without. Then the train/serve gap: the same "
        "tokens scored by a bf16 copy on the cached path against the fp32 full forward "
        "(per-token log-prob differences, importance ratios exp(lp_train - lp_infer), KL), "
        "as RL post-training meets it. bf16 numbers are what this machine's kernels give."
    ),
    params=(
        ParamSpec(
            "seq_len", "int", 64, "tokens per sequence (multiple of 4)", minimum=16, maximum=512
        ),
        ParamSpec(
            "prompt_len", "int", 8, "prompt tokens (below seq_len / 4)", minimum=1, maximum=127
        ),
        ParamSpec("batch", "int", 4, "sequences per rank", minimum=1, maximum=64),
        ParamSpec("train_steps", "int", 40, "DDP steps before decoding", minimum=0, maximum=1000),
        ParamSpec("seed", "int", 0, "weights, data and sampling seed", minimum=0),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug (the inference path only): position_off_by_one rotates each decoded token "
            "at position + 1; stale_cache never writes decoded tokens' keys/values; "
            "gqa_mis_repeat tiles the key/value heads instead of interleaving them; "
            "expand_before_cache caches every query head; reprefill recomputes the whole "
            "prefix at every step",
            choices=SABOTAGES,
        ),
    ),
    observations=(
        ObservationSpec("decode.max_abs_logit_diff", "cached decode vs full forward, fp32"),
        ObservationSpec(
            "decode.max_abs_cache_diff_first_layer",
            "first layer's cached K/V vs the full forward's (inputs: tokens and positions only)",
        ),
        ObservationSpec(
            "decode.max_abs_cache_diff", "every layer's cached K/V vs the full forward's"
        ),
        ObservationSpec("cache.bytes", "bytes the fp32 cache's tensors hold (measured)", "B"),
        ObservationSpec("cache.bytes_bf16", "bytes the bf16 cache's tensors hold", "B"),
        ObservationSpec(
            "cache.bytes_formula",
            "2 x layers x kv_heads x head_dim x seq x batch x 4",
            "B",
            derived=True,
        ),
        ObservationSpec("cache.shape", "one layer's key tensor: batch, heads, seq, head_dim"),
        ObservationSpec("cache.bytes_over_formula", "measured / formula"),
        ObservationSpec("flops.probe_lengths", "cache lengths the FLOPs were counted at"),
        ObservationSpec(
            "flops.*.*",
            "flops.<cached|recompute>.<attention|weights|total>: per generated token and "
            "sequence at each probe length",
        ),
        ObservationSpec(
            "flops.*.attention_exponent",
            "log2(attention FLOPs at S / at S/2): 1 = linear, 2 = quadratic",
        ),
        ObservationSpec("flops.*.weights_exponent", "the same for the weight matmuls"),
        ObservationSpec(
            "flops.recompute_over_cached", "FLOPs per token at the full length: recompute/cached"
        ),
        ObservationSpec("intensity.model_bytes", "bytes of the model's parameters", "B"),
        ObservationSpec(
            "intensity.decode_step_bytes",
            "bytes of the operands one decode step's matmuls read (weights, cached K/V)",
            "B",
        ),
        ObservationSpec(
            "intensity.decode", "FLOPs per operand byte of one decode step at full length"
        ),
        ObservationSpec(
            "intensity.full_forward", "FLOPs per operand byte of the training forward (B x S)"
        ),
        ObservationSpec("intensity.full_over_decode", "full-forward / decode FLOPs per byte"),
        ObservationSpec(
            "serve.*.max_abs_logprob_diff",
            "serve.<bf16|fp32>: the path teacher-forced on the same tokens vs fp32 full forward",
        ),
        ObservationSpec("serve.*.mean_abs_logprob_diff", "mean |lp_train - lp_infer|"),
        ObservationSpec("serve.*.ratio_min", "smallest exp(lp_train - lp_infer)"),
        ObservationSpec("serve.*.ratio_max", "largest exp(lp_train - lp_infer)"),
        ObservationSpec("serve.*.ratio_std", "standard deviation of the ratio"),
        ObservationSpec("serve.*.max_abs_ratio_dev", "largest |ratio - 1|"),
        ObservationSpec("serve.*.mean_kl", "mean KL(train || infer) per token", "nats"),
        ObservationSpec("serve.*.argmax_agreement", "share of tokens with the same argmax"),
        ObservationSpec("serve.*.tokens", "generated tokens scored (all ranks)"),
    ),
    checks=(
        CheckSpec("decode_matches_full_forward", "cached decode logits = full forward (fp32)"),
        CheckSpec("cache_holds_every_token", "each token's K/V sit in its slot (first layer)"),
        CheckSpec("cache_bytes_match_formula", "cache bytes = 2 L kv_heads hd S B bytes"),
        CheckSpec("decode_cost_linear", "with the cache, attention FLOPs per token grow as S"),
    ),
    default_world_size=2,
    min_world_size=1,
    max_world_size=8,
    timeout_s=120.0,
)
