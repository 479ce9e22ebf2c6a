"""ddp-baseline: DDP at world size W equals single-process training on the global batch."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="ddp-baseline",
    group="correctness",
    summary=(
        "DDP on W ranks matches one process trained on the concatenated global batch "
        "(losses and final weights within a tolerance); gradients are identical on every "
        "rank after the all-reduce. grad_sync=stale applies the previous step's gradient: the "
        "ranks agree, the optimizer is another one."
    ),
    params=(
        ParamSpec("steps", "int", 12, "optimizer steps", minimum=1, maximum=200),
        ParamSpec(
            "grad_sync",
            "choice",
            "ddp",
            "ddp: DistributedDataParallel (all-reduce overlaps backward); explicit: one "
            "flattened all-reduce after backward; stale: every rank applies the averaged "
            "gradient of the step before (one-step-stale, as an asynchronous pipeline would): "
            "the ranks still agree, but the run is no longer synchronous SGD",
            choices=("ddp", "explicit", "stale"),
        ),
        ParamSpec("tolerance", "float", 1e-5, "allowed loss/weight difference", minimum=0.0),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: no_grad_sync skips the gradient all-reduce, so the checks must fail",
            choices=("none", "no_grad_sync"),
        ),
    ),
    observations=(
        ObservationSpec("max_loss_diff", "max |global DDP loss - single-process loss| over steps"),
        ObservationSpec("max_rel_loss_diff", "the same, relative to the single-process loss"),
        ObservationSpec("max_weight_diff", "max |DDP weight - single-process weight| at the end"),
        ObservationSpec("grad_mismatch_steps", "steps where ranks' gradients differ", "steps"),
        ObservationSpec("weights_identical_across_ranks", "final weights bit-identical (bool)"),
        ObservationSpec("steps", "steps compared", "steps"),
        ObservationSpec("first_loss", "single-process loss at step 1"),
        ObservationSpec("last_loss", "single-process loss at the last step"),
    ),
    checks=(
        CheckSpec("losses_match", "per-step loss within tolerance of single-process"),
        CheckSpec("weights_match", "final weights within tolerance of single-process"),
        CheckSpec("grads_identical_across_ranks", "every step, every rank, same gradient bits"),
        CheckSpec("weights_identical_across_ranks", "final weights bit-identical on all ranks"),
        CheckSpec(
            "stale_changes_the_trajectory",
            "grad_sync=stale (instead of the two tolerance checks): the losses leave the "
            "single-process run's by more than the tolerance",
        ),
    ),
    timeout_s=90.0,
)
