"""moe-all-to-all: expert parallelism at toy size, tokens dispatched and combined by all-to-all."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SABOTAGES = (
    "none",
    "wrong_order",
    "no_gate",
    "uncounted_drops",
    "all_gather",
    "reduce_expert_grads",
)

SPEC = LabSpec(
    name="moe-all-to-all",
    group="correctness",
    summary=(
        "One MoE layer with experts_per_rank x W experts sharded across W ranks (expert "
        "parallelism). Each rank routes its own tokens (softmax router, top-k, a capacity of "
        "ceil(capacity_factor x tokens x k / experts) per expert and rank; first choices "
        "before second ones), exchanges per-expert counts with an all_to_all_single, then "
        "sends each kept (token, expert) row to the expert's rank with an all_to_all_single "
        "using those split sizes, runs its experts, returns the rows with a second "
        "all_to_all_single, undoes the sort and adds them weighted by the router "
        "probabilities. Backward runs both all-to-alls again. Output and gradients are "
        "compared with one process running every expert on every token; rows and bytes are "
        "counted from the split sizes each collective was given, and the same layer is run "
        "the all-gather way (every rank gathers all tokens, partial outputs reduce-scattered) "
        "to compare the bytes. float64 throughout."
    ),
    params=(
        ParamSpec("tokens_per_rank", "int", 32, "tokens each rank routes", minimum=4, maximum=4096),
        ParamSpec("experts_per_rank", "int", 2, "experts each rank holds", minimum=1, maximum=16),
        ParamSpec("top_k", "int", 1, "experts per token (1 or 2)", minimum=1, maximum=2),
        ParamSpec(
            "capacity_factor",
            "float",
            1.25,
            "slots per expert and rank = ceil(factor x tokens x k / experts)",
            minimum=0.1,
            maximum=16.0,
        ),
        ParamSpec(
            "hot_bias",
            "float",
            1.0,
            "added to expert 0's router logit for every token (a popular expert)",
            minimum=0.0,
            maximum=10.0,
        ),
        ParamSpec("seed", "int", 0, "data and weight seed", minimum=0),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: wrong_order adds the returned rows in the order they were sent (no "
            "inverse permutation); no_gate adds expert outputs without the router "
            "probabilities; uncounted_drops drops rows over capacity without counting them; "
            "all_gather dispatches by gathering every token on every rank (and reduce-"
            "scatters the outputs); reduce_expert_grads averages the expert gradients over "
            "the ranks as if the experts were replicated",
            choices=SABOTAGES,
        ),
    ),
    observations=(
        ObservationSpec("experts", "experts in the layer (experts_per_rank x W)", derived=True),
        ObservationSpec("capacity", "slots per expert for each source rank", derived=True),
        ObservationSpec(
            "assignments", "(token, expert) pairs routed: W x tokens x k", derived=True
        ),
        ObservationSpec("output.max_abs_diff", "layer output vs one process running all experts"),
        ObservationSpec("grads.input_max_abs_diff", "input gradients vs one process"),
        ObservationSpec(
            "grads.expert_max_abs_diff",
            "each rank's expert gradients, not reduced across ranks, vs one process",
        ),
        ObservationSpec(
            "grads.router_local_max_abs_diff",
            "one rank's router gradient (its own tokens only) vs one process",
        ),
        ObservationSpec(
            "grads.router_summed_max_abs_diff", "router gradients summed over ranks vs one process"
        ),
        ObservationSpec("tokens.dropped", "rows over capacity the layer reported dropped"),
        ObservationSpec("tokens.dropped_reference", "rows over capacity, one process's routing"),
        ObservationSpec("tokens.processed", "rows the experts ran, counted at the experts"),
        ObservationSpec("tokens.drop_rate", "dropped_reference / assignments"),
        ObservationSpec("load.routed", "rows the router sent to each expert, before capacity"),
        ObservationSpec("load.processed", "rows each expert ran (from the exchanged counts)"),
        ObservationSpec("load.imbalance", "max / mean of load.routed"),
        ObservationSpec("load.processed_imbalance", "max / mean of load.processed"),
        ObservationSpec("load.rank_rows", "rows each rank's experts ran"),
        ObservationSpec("load.rank_imbalance", "max / mean of load.rank_rows"),
        ObservationSpec(
            "collectives.*.*", "payload collectives per phase (forward, backward) and kind"
        ),
        ObservationSpec("collectives.count_exchanges", "all-to-alls of per-expert counts"),
        ObservationSpec("collectives.count_bytes", "bytes those count exchanges sent", "B"),
        ObservationSpec(
            "dispatch.sent_bytes", "per rank: forward dispatch bytes to other ranks", "B"
        ),
        ObservationSpec(
            "dispatch.received_bytes", "per rank: forward dispatch bytes from other ranks", "B"
        ),
        ObservationSpec(
            "dispatch.expected_received_bytes",
            "per rank: rows one process's routing sends there from other ranks x row bytes",
            "B",
        ),
        ObservationSpec("dispatch.self_rows", "per rank: rows routed to its own experts"),
        ObservationSpec("dispatch.messages", "per rank: other ranks it sent at least one row"),
        ObservationSpec(
            "dispatch.mean_message_bytes", "dispatch bytes between ranks / messages", "B"
        ),
        ObservationSpec("dispatch.receive_imbalance", "max / mean of dispatch.received_bytes"),
        ObservationSpec("combine.*", "forward combine per rank: bytes sent / received", "B"),
        ObservationSpec(
            "bytes.layer_forward", "bytes between ranks in forward, all ranks (payload)", "B"
        ),
        ObservationSpec("bytes.layer_backward", "bytes between ranks in backward, all ranks", "B"),
        ObservationSpec(
            "bytes.all_gather_design_forward",
            "bytes between ranks in forward when every token is gathered to every rank",
            "B",
        ),
        ObservationSpec("bytes.all_gather_over_layer", "all_gather_design_forward / layer_forward"),
        ObservationSpec(
            "all_gather_design.max_abs_diff", "the all-gather design's output vs one process"
        ),
    ),
    checks=(
        CheckSpec("output_matches_reference", "layer output equals one process's (float64)"),
        CheckSpec(
            "gradients_match_reference",
            "input, expert (unreduced) and summed router gradients equal one process's",
        ),
        CheckSpec(
            "drops_counted",
            "reported drops equal one process's, and processed + dropped = assignments",
        ),
        CheckSpec(
            "dispatch_moves_only_routed_tokens",
            "each rank receives exactly the rows routed to its experts from other ranks",
        ),
    ),
    min_world_size=2,
    max_world_size=8,
    timeout_s=120.0,
)
