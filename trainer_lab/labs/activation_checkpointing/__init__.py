"""activation-checkpointing: saved-activation bytes and recompute cost, across depths."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="activation-checkpointing",
    group="performance",
    summary=(
        "Bytes of activations saved for backward (summed through saved-tensor hooks) and the "
        "recompute cost (FLOPs and block forward calls; step time reported), without and with "
        "per-block checkpointing (use_reentrant=False), across depths of the tiny GPT; and "
        "how attention's saved bytes grow with the sequence, math attention against SDPA."
    ),
    params=(
        ParamSpec(
            "max_depth",
            "int",
            8,
            "deepest model (depths: max/4, max/2, max)",
            minimum=4,
            maximum=32,
        ),
        ParamSpec("d_model", "int", 64, "model width", minimum=16, maximum=512),
        ParamSpec("seq_len", "int", 64, "tokens per sequence", minimum=8, maximum=512),
        ParamSpec("batch", "int", 8, "sequences per step", minimum=1, maximum=64),
        ParamSpec("timed_steps", "int", 5, "steps timed per measurement", minimum=1, maximum=50),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: no_checkpoint (the checkpointed run does not checkpoint); flat_memory (the "
            "baseline wraps the whole model in one checkpoint); sdpa_is_math (the fused-attention "
            "measurement runs math attention)",
            choices=("none", "no_checkpoint", "flat_memory", "sdpa_is_math"),
        ),
    ),
    observations=(
        ObservationSpec(
            "depths", "per depth and mode: saved_bytes, flops, block_forwards, step_ms"
        ),
        ObservationSpec(
            "bytes_per_block.none", "saved bytes added per block, no checkpointing", "B"
        ),
        ObservationSpec("depths.*.*.*", "depths.<depth>.<none|per_block>.<field>"),
        ObservationSpec("depths.*.*.block_forwards.*", "block forward calls in forward/backward"),
        ObservationSpec("bytes_per_block.per_block", "the same with per-block checkpointing", "B"),
        ObservationSpec("saved_ratio", "at max depth: checkpointed / plain saved bytes"),
        ObservationSpec("flops_ratio", "at max depth: checkpointed / plain FLOPs"),
        ObservationSpec("step_time_ratio", "at max depth: checkpointed / plain median step time"),
        ObservationSpec(
            "attention.*.saved_bytes", "one attention call: bytes saved per seq_len", "B"
        ),
        ObservationSpec(
            "attention.*.growth_at_2x_seq",
            "attention.<math|sdpa>: saved bytes at 2 x seq_len / at seq_len (4: quadratic)",
        ),
    ),
    checks=(
        CheckSpec("memory_grows_with_depth", "plain: saved bytes grow linearly with depth"),
        CheckSpec("checkpointing_cuts_saved_bytes", "at max depth: <= 1/3 of the plain bytes"),
        CheckSpec(
            "fused_attention_saves_linear_memory",
            "doubling the sequence: math attention saves >= 3.5x, SDPA <= 2.5x",
        ),
        CheckSpec("recompute_costs_a_forward", "each block runs forward twice; FLOPs +15..34 %"),
    ),
    default_world_size=1,
    min_world_size=1,
    timeout_s=90.0,
)
