"""context-parallel: ring attention over a sequence sharded across ranks, causal work balanced."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SABOTAGES = ("none", "no_cross_block_mask", "no_rescale", "contiguous")

SPEC = LabSpec(
    name="context-parallel",
    group="correctness",
    summary=(
        "Causal attention over one sequence of S = 2 x W x chunk tokens, the sequence cut in "
        "2W chunks and sharded across W ranks (context parallelism). Each rank keeps the "
        "queries, keys and values of its two chunks; K/V blocks travel round a ring "
        "(batch_isend_irecv to the next rank while this block is computed) and each rank "
        "folds every block into its output with an online softmax (running max and sum). "
        "Query-key chunk pairs wholly in the future are skipped, the diagonal ones masked; "
        "the unmasked pairs each rank computes are counted. Two layouts: contiguous (rank r "
        "holds chunks 2r, 2r+1) and zigzag (chunks r and 2W-1-r); and the zigzag layout "
        "again with K/V all-gathered instead of passed round the ring. Outputs are compared "
        "with full attention on one process; a second pass with the future half of K/V "
        "changed must leave earlier outputs untouched. The ring is then run at 2S and 4S to "
        "count how the work per token grows with context. float64 throughout."
    ),
    params=(
        ParamSpec(
            "chunk", "int", 8, "tokens per chunk (S = 2 x W x chunk)", minimum=1, maximum=512
        ),
        ParamSpec("heads", "int", 2, "attention heads", minimum=1, maximum=16),
        ParamSpec("head_dim", "int", 8, "dimension of each head", minimum=1, maximum=128),
        ParamSpec("seed", "int", 0, "data seed", minimum=0),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: no_cross_block_mask masks only a chunk against its own keys (future "
            "chunks are attended); no_rescale normalises each block's softmax on its own "
            "and adds the blocks by their sums without the running-max correction; "
            "contiguous hands out contiguous chunks where the zigzag layout is expected",
            choices=SABOTAGES,
        ),
    ),
    observations=(
        ObservationSpec("seq_len", "tokens in the sequence: 2 x W x chunk", derived=True),
        ObservationSpec("*.chunks", "chunk ids each rank holds", derived=True),
        ObservationSpec("*.max_abs_diff", "output vs full causal attention on one process"),
        ObservationSpec("*.pairs_per_rank", "unmasked query-key pairs each rank computed"),
        ObservationSpec("*.work_imbalance", "max / min of pairs_per_rank"),
        ObservationSpec("*.kv_bytes_received", "K/V bytes each rank received", "B"),
        ObservationSpec(
            "*.kv_peak_bytes", "most K/V bytes one rank held at once (own + received)", "B"
        ),
        ObservationSpec(
            "zigzag.future_leak",
            "max change of outputs before position S/2 when K/V from S/2 on are changed",
        ),
        ObservationSpec("kv_fraction_received", "ring K/V bytes received per rank / whole K/V"),
        ObservationSpec(
            "causal_fraction", "pairs computed over all ranks / S x S (causal: about half)"
        ),
        ObservationSpec("scaling.seq_lens", "sequence lengths of the scaling runs", derived=True),
        ObservationSpec("scaling.pairs_per_token", "pairs computed / S at each length"),
        ObservationSpec("scaling.kv_bytes_per_rank", "K/V bytes rank 0 received at each length"),
        ObservationSpec(
            "scaling.per_token_growth_4x", "pairs per token at 4S / at S (attention per token)"
        ),
    ),
    checks=(
        CheckSpec(
            "matches_full_attention",
            "ring (both layouts) and all-gather outputs equal full causal attention (float64)",
        ),
        CheckSpec("no_future_leak", "changing later K/V leaves every earlier output unchanged"),
        CheckSpec(
            "zigzag_balances_causal_work",
            "zigzag: every rank computes the same number of unmasked pairs",
        ),
    ),
    min_world_size=2,
    max_world_size=8,
    timeout_s=120.0,
)
