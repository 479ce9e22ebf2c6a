"""mfu-ladder: one GPT climbed rung by rung (fp32 eager -> bf16 autocast -> SDPA -> compile ->
fused AdamW -> larger batch, plus activation checkpointing's cost), tokens/s and MFU per rung,
with the FLOP formula cross-checked against torch's FLOP counter."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SABOTAGES = (
    "none",
    "forget_backward",
    "no_attention_term",
    "tiny_peak",
    "sdpa_not_causal",
    "no_checkpointing",
    "no_warmup",
)

SPEC = LabSpec(
    name="mfu-ladder",
    group="performance",
    summary=(
        "The same GPT trained rung by rung: fp32 eager, + bf16 autocast, + fused attention "
        "(SDPA, flash on GPU), + torch.compile, + fused AdamW, + a larger batch, and the top "
        "rung with activation checkpointing (what recomputation costs). Tokens/s and MFU per "
        "rung (warm-up steps excluded), 6N + 12*L*H*Q*T FLOPs per token checked against "
        "torch's FLOP counter. On CPU a scaled-down model, steps of all rungs interleaved, "
        "against a measured matmul peak; on a GPU the dense bf16 datasheet peak."
    ),
    params=(
        ParamSpec("d_model", "int", 128, "CPU model width", minimum=16, maximum=1024),
        ParamSpec("n_layer", "int", 2, "CPU model layers", minimum=1, maximum=48),
        ParamSpec("n_head", "int", 4, "CPU model heads", minimum=1, maximum=64),
        ParamSpec("seq_len", "int", 64, "CPU tokens per sequence", minimum=16, maximum=4096),
        ParamSpec("batch", "int", 8, "CPU sequences per step", minimum=1, maximum=256),
        ParamSpec("big_batch_factor", "int", 4, "CPU large_batch rung: batch x this", minimum=2),
        ParamSpec("cpu_compile", "bool", False, "run the torch.compile rungs on CPU (minutes)"),
        ParamSpec("warmup_steps", "int", 2, "steps per rung left out of the timing", minimum=1),
        ParamSpec("timed_steps", "int", 4, "timed steps per rung", minimum=1, maximum=100),
        ParamSpec("gpu_d_model", "int", 4096, "GPU model width", minimum=64, maximum=16384),
        ParamSpec("gpu_n_layer", "int", 8, "GPU model layers", minimum=1, maximum=128),
        ParamSpec("gpu_n_head", "int", 32, "GPU model heads (head size 128)", minimum=1),
        ParamSpec("gpu_seq_len", "int", 2048, "GPU tokens per sequence", minimum=64, maximum=32768),
        ParamSpec(
            "gpu_batch",
            "int",
            2,
            "GPU sequences per step below the top rung (the written-out attention of the first "
            "rungs holds L x B x H x T x T scores)",
            minimum=1,
            maximum=1024,
        ),
        ParamSpec(
            "gpu_big_batch_factor",
            "int",
            8,
            "GPU large_batch rung: batch x this, halved on out-of-memory",
            minimum=2,
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: forget_backward (2N, not 6N), no_attention_term, tiny_peak (4x4 matmul "
            "peak), sdpa_not_causal (SDPA rungs forget is_causal), no_checkpointing (the "
            "checkpointing rung does not checkpoint), no_warmup (warm-up steps are timed)",
            choices=SABOTAGES,
        ),
    ),
    observations=(
        ObservationSpec("device", "where it ran"),
        ObservationSpec("cuda_visible_devices", "CUDA_VISIBLE_DEVICES in the worker (null: unset)"),
        ObservationSpec("ladder", "the rungs measured, bottom to top (plot order)", derived=True),
        ObservationSpec("skipped", "rungs not measured and why (rung -> reason)"),
        ObservationSpec("skipped.*", "why a rung was not measured"),
        ObservationSpec("rungs.*.tokens_per_s", "training tokens/s, median timed step", "tokens/s"),
        ObservationSpec("rungs.*.mfu", "tokens/s x (6N + 12LHQT) / peak"),
        ObservationSpec("rungs.*.step_s", "median timed step", "s"),
        ObservationSpec("rungs.*.first_step_s", "first (warm-up) step: lazy init, compile", "s"),
        ObservationSpec("rungs.*.batch", "sequences per step"),
        ObservationSpec("rungs.*.dtype", "compute dtype"),
        ObservationSpec("rungs.*.change", "what the rung adds"),
        ObservationSpec("rungs.*.speedup_vs_previous", "tokens/s over the rung below"),
        ObservationSpec("rungs.*.speedup_vs_fp32", "tokens/s over fp32_eager"),
        ObservationSpec("rungs.*.logits_rel_diff", "first-step logits vs fp32_eager, relative"),
        ObservationSpec("rungs.*.hfu", "checkpointing rung: counted FLOPs incl. recompute / peak"),
        ObservationSpec("top_rung", "the rung the ladder climbs to", derived=True),
        ObservationSpec("top_mfu", "MFU of the top rung"),
        ObservationSpec("top_tokens_per_s", "tokens/s of the top rung", "tokens/s"),
        ObservationSpec("speedup_total", "top rung tokens/s over fp32_eager"),
        ObservationSpec("checkpointing_cost", "checkpointing rung tokens/s over the top rung's"),
        ObservationSpec("oom_batches", "GPU: large batches that ran out of memory"),
        ObservationSpec("flops_per_token.dense", "6N, N = matmul weights", derived=True),
        ObservationSpec("flops_per_token.attention", "12*L*H*Q*T", derived=True),
        ObservationSpec("flops_per_token.total", "6N + 12*L*H*Q*T", derived=True),
        ObservationSpec("counted.dense", "FLOP counter, mm per token (math attention model)"),
        ObservationSpec("counted.attention", "FLOP counter, bmm per token (math attention)"),
        ObservationSpec("counted.sdpa_attention", "FLOP counter, attention ops of the SDPA model"),
        ObservationSpec(
            "counted.attention_share", "FLOP counter: attention bmm / (mm + bmm), math model"
        ),
        ObservationSpec("dense_formula_vs_counted", "6N / the counter's matmul FLOPs per token"),
        ObservationSpec(
            "attention_formula_vs_counted", "12*L*H*Q*T / the counter's attention bmm FLOPs"
        ),
        ObservationSpec("counted.checkpointing_ratio", "counted FLOPs, checkpointing / none"),
        ObservationSpec("counted.full_recompute_ratio", "the ratio if every block's forward reran"),
        ObservationSpec("params", "model parameters", derived=True),
        ObservationSpec(
            "matmul_params", "N: weights in matmuls (embeddings, LayerNorm excluded)", derived=True
        ),
        ObservationSpec("peak_flops", "peak used for MFU", "FLOP/s"),
        ObservationSpec("peak_source", "measured matmul or datasheet", derived=True),
    ),
    checks=(
        CheckSpec("dense_term_matches_counter", "6N within 2 % of the counted matmul FLOPs"),
        CheckSpec("attention_term_matches_counter", "12LHQT within 2 % of the counted bmm FLOPs"),
        CheckSpec("rungs_compute_the_same_model", "every rung's first logits match fp32_eager's"),
        CheckSpec("checkpointing_recomputes_forward", "the counter sees the forward run again"),
        CheckSpec("warmup_excluded", "every rung times only steps after its warm-up"),
        CheckSpec("mfu_in_range", "0 < MFU <= 1 on every rung"),
    ),
    default_world_size=1,
    min_world_size=1,
    timeout_s=900.0,  # a GPU compiles four rungs of a 2-billion-parameter model
)
