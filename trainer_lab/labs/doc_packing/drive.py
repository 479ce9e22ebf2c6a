"""doc-packing lab: the driver (torch-free): one launch, then observations and checks."""

from __future__ import annotations

from trainer_lab.context import LabContext, LabError

LOGIT_TOLERANCE = 1e-4  # fp32: packed vs alone differ by reduction order only (~1e-6)
LOSS_TOLERANCE = 1e-5


def drive(run: LabContext) -> None:
    p = run.params
    if p["min_len"] > min(p["max_len"], p["seq_len"]):
        raise LabError(f"min_len {p['min_len']} is above min(max_len, seq_len)")
    run.plan(1)
    run.launch("trainer_lab.labs.doc_packing.worker:main", {**p, "collective_timeout_s": 60})
    r = run.report("doc_packing")
    sums, top = r["sums"], r["maxima"]
    real, slots = sums["real_tokens"], sums["slots"]
    padded_slots = r["docs"] * top["max_doc_len"]
    run.observe("docs", r["docs"])
    for name in ("rows", "multi_document_rows", "slots", "real_tokens"):
        run.observe(name, int(sums[name]))
    run.observe("max_doc_len", int(top["max_doc_len"]))
    run.observe("per_rank.rows", r["per_rank_rows"])
    run.observe("per_rank.real_tokens", r["per_rank_real_tokens"])
    packed_eff, padded_eff = real / slots, real / padded_slots
    run.observe("efficiency.packed", round(packed_eff, 4))
    run.observe("efficiency.padded", round(padded_eff, 4))
    run.observe("efficiency.gain", round(packed_eff / padded_eff, 3))

    fields = {
        "max_abs_logit_diff": "logit",
        "max_abs_doc_loss_diff": "doc_loss",
        "cross_doc_influence": "influence",
    }
    run.observe("pipeline.mask", r["pipeline"]["mask"])
    run.observe("pipeline.positions", r["pipeline"]["positions"])
    for field, key in fields.items():
        run.observe(f"pipeline.{field}", top[f"pipeline.{key}"])
        for variant in ("document_mask", "causal_mask", "no_position_reset"):
            run.observe(f"contrast.{variant}.{field}", top[f"{variant}.{key}"])
    for variant in ("rope_reset", "rope_no_position_reset"):
        run.observe(f"contrast.{variant}.max_abs_logit_diff", top[f"{variant}.logit"])

    counted, real_targets = int(sums["counted_targets"]), int(sums["real_targets"])
    boundary, padding = int(sums["boundary_targets_counted"]), int(sums["padding_targets_counted"])
    packed_loss = sums["packed_loss_sum"] / counted
    alone_loss = sums["alone_loss_sum"] / real_targets
    run.observe("loss.counted_targets", counted)
    run.observe("loss.real_targets", real_targets)
    run.observe("loss.boundary_targets_counted", boundary)
    run.observe("loss.padding_targets_counted", padding)
    run.observe("loss.packed", round(packed_loss, 6))
    run.observe("loss.alone", round(alone_loss, 6))
    run.observe("loss.abs_diff", abs(packed_loss - alone_loss))

    logit_diff, loss_diff = top["pipeline.logit"], top["pipeline.doc_loss"]
    run.check(
        "packed_matches_alone",
        logit_diff <= LOGIT_TOLERANCE and loss_diff <= LOSS_TOLERANCE,
        f"{r['docs']} documents in {int(sums['rows'])} rows ({r['pipeline']['mask']} mask, "
        f"positions {r['pipeline']['positions']}): max abs logit diff vs each document alone "
        f"{logit_diff:.3g} (tolerance {LOGIT_TOLERANCE:g}), per-document loss diff "
        f"{loss_diff:.3g} (tolerance {LOSS_TOLERANCE:g})",
    )
    influence = top["pipeline.influence"]
    run.check(
        "no_cross_document_influence",
        influence == 0,
        f"the first document of each of {int(sums['multi_document_rows'])} multi-document rows "
        f"got other tokens: the later documents' logits moved by up to {influence:.3g} "
        f"(a plain causal mask: {top['causal_mask.influence']:.3g})",
    )
    run.check(
        "no_target_crosses_boundary",
        boundary == 0,
        f"{boundary} counted targets have a document's last token predicting the next "
        f"document's first token",
    )
    run.check(
        "loss_counts_only_real_tokens",
        counted == real_targets and padding == 0,
        f"the loss counts {counted} targets; the documents have {real_targets} in-document "
        f"targets (sum of length - 1); {padding} counted targets touch padding, {boundary} "
        f"cross a boundary; loss {packed_loss:.6f} vs documents alone {alone_loss:.6f}",
    )
