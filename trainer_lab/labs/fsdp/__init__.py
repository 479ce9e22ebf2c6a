"""fsdp: FSDP2 fully_shard against DDP on the same model and data. Per-rank bytes of
parameters, gradients and optimizer state are measured from the tensors each rank holds."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="fsdp",
    group="performance",
    summary=(
        "FSDP2 fully_shard vs DDP at world sizes 1, 2 and 4 (those up to the lab's W): the "
        "bytes of parameters, gradients and Adam state each rank holds, measured from its "
        "tensors. FSDP holds about 1/W of DDP. Bytes per parameter with bf16 compute are "
        "reported next to the 16 B/param rule of thumb; FSDP's losses match DDP's."
    ),
    params=(
        ParamSpec(
            "steps", "int", 4, "optimizer steps per mode and world size", minimum=1, maximum=50
        ),
        ParamSpec("hidden", "int", 128, "MLP width", minimum=8, maximum=2048),
        ParamSpec(
            "depth", "int", 8, "hidden layers (each its own FSDP group)", minimum=1, maximum=32
        ),
        ParamSpec("tolerance", "float", 1e-5, "allowed relative loss difference", minimum=0.0),
        ParamSpec(
            "grad_divide",
            "choice",
            "mean",
            "FSDP gradient reduction. mean: average over ranks (correct); debug sum: gradient "
            "divide factor 1 (the shape of the gloo averaging bug), so the gradient check must "
            "fail (Adam is scale-invariant: the losses barely move)",
            choices=("mean", "sum"),
        ),
        ParamSpec(
            "shard",
            "choice",
            "ranks",
            "FSDP mesh. ranks: every parameter sharded over the w ranks; debug replicate: a 2-D "
            "HSDP mesh of w replicas x 1 shard, so every rank keeps a full replica and "
            "fsdp_holds_1_over_w (and the summed mp_bytes_per_param) must fail",
            choices=("ranks", "replicate"),
        ),
        ParamSpec(
            "wrap",
            "choice",
            "layers",
            "FSDP groups. layers: fully_shard every layer, then the root (gathered one layer at "
            "a time); root: the root only, one group: still 1/W at rest, but the whole model is "
            "gathered at once and stays gathered until backward (peak_gathered_over_full ~1, "
            "no overlap of one group's gather with another's compute)",
            choices=("layers", "root"),
        ),
        ParamSpec(
            "master_copy",
            "bool",
            False,
            "debug: the bf16 FSDP run also keeps its own fp32 master copy of the weights for "
            "the optimizer (hand-rolled mixed precision on top of FSDP's fp32 shards): 4 B/param "
            "more, so mp_bytes_per_param must fail",
        ),
    ),
    observations=(
        ObservationSpec("n_params", "model parameters"),
        ObservationSpec("world_sizes", "world sizes measured"),
        ObservationSpec("bytes.w*.*.total", "largest per-rank bytes (params+grads+Adam)", "B"),
        ObservationSpec("bytes.w*.*.params", "largest per-rank parameter bytes", "B"),
        ObservationSpec("bytes.w*.*.grads", "largest per-rank gradient bytes", "B"),
        ObservationSpec("bytes.w*.*.optimizer", "largest per-rank optimizer bytes", "B"),
        ObservationSpec("fsdp_over_ddp.w*", "largest FSDP rank / DDP rank, total bytes"),
        ObservationSpec(
            "peak_gathered_over_full.w*",
            "fp32 FSDP: most all-gathered parameter bytes alive at once in forward / the full "
            "model's parameter bytes (DDP)",
        ),
        ObservationSpec("bytes_per_param.ddp", "per rank, fp32 Adam, DDP", "B"),
        ObservationSpec(
            "bytes_per_param.fsdp_mp_all_ranks", "bf16 compute, summed over ranks", "B"
        ),
        ObservationSpec("bytes_per_param.rule_of_thumb", "mixed-precision Adam rule of thumb", "B"),
        ObservationSpec("max_rel_loss_diff.w*", "FSDP vs DDP global loss, max over steps"),
        ObservationSpec("mp_max_rel_loss_diff.w*", "bf16 FSDP vs fp32 DDP (for scale)"),
        ObservationSpec("max_rel_grad_norm_diff.w*", "FSDP vs DDP full-gradient norm"),
        ObservationSpec("grad_norm_ratio.w*", "FSDP / DDP gradient norm at step 1 (1 = mean)"),
    ),
    checks=(
        CheckSpec("fsdp_holds_1_over_w", "each FSDP rank holds <= 1.15/w of DDP's bytes"),
        CheckSpec("losses_match", "FSDP fp32 losses equal DDP's within tolerance"),
        CheckSpec("grads_match", "FSDP's averaged gradient equals DDP's (norm, every step)"),
        CheckSpec("mp_bytes_per_param", "bf16 FSDP: 15-17.5 B/param summed over ranks"),
    ),
    default_world_size=2,
    min_world_size=1,
    max_world_size=8,
    timeout_s=120.0,
)
