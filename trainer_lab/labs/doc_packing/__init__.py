"""doc-packing: documents packed into fixed-length rows; a document mask and reset positions."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SABOTAGES = ("none", "plain_causal", "no_position_reset", "boundary_targets", "pad_in_loss")

SPEC = LabSpec(
    name="doc-packing",
    group="correctness",
    summary=(
        "Variable-length documents (log-uniform lengths) packed first-fit into rows of seq_len "
        "slots for a tiny causal transformer, on W ranks each packing its share; counts and "
        "loss sums are all_reduced. Each document's logits and loss in the packed rows are "
        "compared with the document run alone: a block-diagonal causal (document) mask and "
        "position ids reset per document give the same numbers; a plain causal mask lets a "
        "document's logits change when the document before it changes (cross-document "
        "influence), and positions not reset change them too (unless positions are rotary: "
        "then the offset cancels). The loss counts only in-document targets: no document's "
        "last token predicts the next one's first, no padding. Packing efficiency (real "
        "tokens / slots) against padding every document to the longest."
    ),
    params=(
        ParamSpec("seq_len", "int", 64, "slots per packed row", minimum=16, maximum=1024),
        ParamSpec("docs_per_rank", "int", 24, "documents per rank", minimum=2, maximum=2000),
        ParamSpec("min_len", "int", 4, "shortest document (tokens)", minimum=2, maximum=1024),
        ParamSpec(
            "max_len", "int", 64, "longest document (capped at seq_len)", minimum=2, maximum=1024
        ),
        ParamSpec("seed", "int", 0, "documents and weights seed", minimum=0),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: plain_causal packs with a causal mask only; no_position_reset keeps "
            "positions running across the row; boundary_targets lets each document's last "
            "token predict the next document's first; pad_in_loss counts targets on padding",
            choices=SABOTAGES,
        ),
    ),
    observations=(
        ObservationSpec("docs", "documents in the whole job", derived=True),
        ObservationSpec("rows", "packed rows over all ranks"),
        ObservationSpec("multi_document_rows", "rows holding two documents or more"),
        ObservationSpec("slots", "rows x seq_len over all ranks", "tokens"),
        ObservationSpec(
            "real_tokens", "document tokens placed in the rows (all_reduced)", "tokens"
        ),
        ObservationSpec("max_doc_len", "the longest document", "tokens"),
        ObservationSpec("per_rank.*", "rows and real_tokens of each rank (all_gathered)"),
        ObservationSpec("efficiency.packed", "real tokens / slots of the packed rows"),
        ObservationSpec(
            "efficiency.padded", "real tokens / slots, every document padded to the longest"
        ),
        ObservationSpec("efficiency.gain", "packed / padded efficiency"),
        ObservationSpec("pipeline.mask", "the mask the lab's pipeline used: document or causal"),
        ObservationSpec("pipeline.positions", "the pipeline's positions: reset or running"),
        ObservationSpec(
            "pipeline.max_abs_logit_diff", "the pipeline's packed logits vs each document alone"
        ),
        ObservationSpec(
            "pipeline.max_abs_doc_loss_diff", "a document's packed loss vs its loss alone"
        ),
        ObservationSpec(
            "pipeline.cross_doc_influence",
            "largest logit change of later documents when a row's first document changes",
        ),
        ObservationSpec(
            "contrast.*.*",
            "contrast.<document_mask|causal_mask|no_position_reset>.<max_abs_logit_diff|"
            "max_abs_doc_loss_diff|cross_doc_influence>, whatever the sabotage; "
            "contrast.<rope_reset|rope_no_position_reset>.max_abs_logit_diff: rotary positions",
        ),
        ObservationSpec("loss.counted_targets", "targets the loss counts (all_reduced)"),
        ObservationSpec(
            "loss.real_targets", "in-document targets: sum of (length - 1) over the documents"
        ),
        ObservationSpec(
            "loss.boundary_targets_counted",
            "counted targets where a document's last token predicts the next one's first",
        ),
        ObservationSpec("loss.padding_targets_counted", "counted targets touching padding"),
        ObservationSpec("loss.packed", "the packed batch's loss (mean over counted targets)"),
        ObservationSpec("loss.alone", "token-weighted mean loss of the documents run alone"),
        ObservationSpec("loss.abs_diff", "|loss.packed - loss.alone|"),
    ),
    checks=(
        CheckSpec("packed_matches_alone", "each document's packed logits and loss = alone"),
        CheckSpec("no_cross_document_influence", "changing one document leaves the others' logits"),
        CheckSpec("no_target_crosses_boundary", "no last token predicts the next document"),
        CheckSpec("loss_counts_only_real_tokens", "the loss counts in-document targets only"),
    ),
    default_world_size=2,
    min_world_size=1,
    max_world_size=8,
    timeout_s=120.0,
)
