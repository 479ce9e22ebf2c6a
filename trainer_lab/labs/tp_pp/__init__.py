"""tp-pp: tensor parallel (DTensor parallelize_module) and pipeline parallel
(torch.distributed.pipelining) at toy size, with their communication counted."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="tp-pp",
    group="correctness",
    summary=(
        "Tensor parallel: an MLP's up projection ColwiseParallel and its down projection "
        "RowwiseParallel (parallelize_module over a 1-D mesh of all ranks); collectives in "
        "forward and backward are counted with CommDebugMode and the output and gradients "
        "compared with the same MLP on one process. Pipeline parallel: one Linear per rank "
        "as a PipelineStage, ScheduleGPipe over micro-batches; the point-to-point sends are "
        "counted and the loss and gradients compared with the whole model on one process."
    ),
    params=(
        ParamSpec(
            "microbatches", "int", 4, "pipeline micro-batches per step", minimum=1, maximum=16
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: gather_between makes both projections colwise with a replicated output "
            "(all-gathers instead of one all-reduce); rowwise_partial leaves the down "
            "projection's partial sums unreduced; forward_only runs the pipeline without a "
            "loss (no backward)",
            choices=("none", "gather_between", "rowwise_partial", "forward_only"),
        ),
    ),
    observations=(
        ObservationSpec("tp.forward_all_reduces", "all-reduces in forward"),
        ObservationSpec("tp.backward_all_reduces", "all-reduces in backward"),
        ObservationSpec("tp.all_gathers", "all-gathers in forward and backward"),
        ObservationSpec("tp.max_abs_diff", "output vs one process"),
        ObservationSpec("tp.grad_max_abs_diff", "weight gradients vs one process"),
        ObservationSpec(
            "tp.local_up_shape", "the up projection's local weight shape", derived=True
        ),
        ObservationSpec("pp.sends", "point-to-point sends over all ranks in one step"),
        ObservationSpec("pp.sends_per_boundary_per_microbatch", "sends / ((W-1) x micro-batches)"),
        ObservationSpec("pp.loss_abs_diff", "mean micro-batch loss vs one process's loss"),
        ObservationSpec("pp.grads_match", "every stage's gradients == one process's (bool)"),
    ),
    checks=(
        CheckSpec(
            "tp_one_all_reduce_each_way",
            "colwise then rowwise: 1 all-reduce forward, 1 backward, no all-gather",
        ),
        CheckSpec("tp_matches_one_process", "output and gradients match one process"),
        CheckSpec("pp_matches_one_process", "loss and every stage's gradients match"),
        CheckSpec(
            "pp_two_sends_per_boundary",
            "per boundary and micro-batch: activation forward, gradient back",
        ),
    ),
    timeout_s=120.0,
)
