"""throughput-mfu: tokens/s and MFU of the transformer option (6N + 12*L*H*Q*T per token)."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="throughput-mfu",
    group="performance",
    summary=(
        "Tokens/s and MFU of the tiny GPT with 6N + 12*L*H*Q*T FLOPs per token. On CPU the "
        "peak is MEASURED by a one-thread fp32 matmul micro-benchmark (not a datasheet "
        "number); on a GPU the run uses bf16 autocast, torch.compile and flash attention "
        "against the device's dense bf16 peak. A FLOP counter cross-checks the 6N term."
    ),
    params=(
        ParamSpec("d_model", "int", 128, "CPU model width", minimum=32, maximum=1024),
        ParamSpec("n_layer", "int", 4, "CPU model layers", minimum=1, maximum=48),
        ParamSpec("n_head", "int", 4, "CPU model heads", minimum=1, maximum=64),
        ParamSpec("seq_len", "int", 128, "CPU tokens per sequence", minimum=16, maximum=4096),
        ParamSpec("batch", "int", 8, "CPU sequences per step", minimum=1, maximum=256),
        ParamSpec("timed_steps", "int", 4, "steps timed after warm-up", minimum=1, maximum=100),
        ParamSpec("gpu_d_model", "int", 2048, "GPU model width", minimum=64, maximum=16384),
        ParamSpec("gpu_n_layer", "int", 16, "GPU model layers", minimum=1, maximum=128),
        ParamSpec("gpu_n_head", "int", 16, "GPU model heads (head size 128 by default)", minimum=1),
        ParamSpec("gpu_seq_len", "int", 2048, "GPU tokens per sequence", minimum=64, maximum=32768),
        ParamSpec("gpu_batch", "int", 8, "GPU sequences per step", minimum=1, maximum=1024),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: forget_backward (2N instead of 6N), no_attention_term (drops 12*L*H*Q*T), "
            "tiny_peak (the peak benchmark uses 16x16 matmuls)",
            choices=("none", "forget_backward", "no_attention_term", "tiny_peak"),
        ),
    ),
    observations=(
        ObservationSpec("device", "where it ran"),
        ObservationSpec("cuda_visible_devices", "CUDA_VISIBLE_DEVICES in the worker (null: unset)"),
        ObservationSpec("tokens_per_s", "training tokens per second (median step)", "tokens/s"),
        ObservationSpec("mfu", "achieved FLOP/s / peak FLOP/s"),
        ObservationSpec("flops_per_token.dense", "6N, N = matmul parameters", derived=True),
        ObservationSpec("flops_per_token.attention", "12*L*H*Q*T", derived=True),
        ObservationSpec("flops_per_token.total", "6N + 12*L*H*Q*T", derived=True),
        ObservationSpec("attention_share", "12*L*H*Q*T / (6N + 12*L*H*Q*T)", derived=True),
        ObservationSpec("counted_flops_per_token", "FLOP counter, one forward + backward"),
        ObservationSpec("achieved_flops", "tokens/s x FLOPs per token", "FLOP/s"),
        ObservationSpec("peak_flops", "peak used for MFU", "FLOP/s"),
        ObservationSpec("peak_source", "measured matmul or datasheet", derived=True),
        ObservationSpec("params", "model parameters", derived=True),
        ObservationSpec(
            "matmul_params", "N: parameters in matmuls (embeddings excluded)", derived=True
        ),
        ObservationSpec("dtype", "compute dtype"),
        ObservationSpec("compiled", "torch.compile used (GPU path)"),
        ObservationSpec("counted_attention_flops_per_token", "FLOP counter, attention ops"),
        ObservationSpec(
            "counted_attention_share", "FLOP counter: attention ops / all ops, one step"
        ),
        ObservationSpec("dense_vs_counted", "6N / counted non-attention FLOPs"),
        ObservationSpec("step_s", "median step time", "s"),
        ObservationSpec("batch", "sequences per step", derived=True),
        ObservationSpec("seq_len", "tokens per sequence", derived=True),
    ),
    checks=(
        CheckSpec("dense_flops_match_counter", "6N within 5 % of the counted non-attention FLOPs"),
        CheckSpec("attention_term_counted", "the estimate includes 12*L*H*Q*T"),
        CheckSpec("mfu_below_one", "0 < MFU <= 1 against the measured peak"),
    ),
    default_world_size=1,
    min_world_size=1,
    timeout_s=120.0,
)
