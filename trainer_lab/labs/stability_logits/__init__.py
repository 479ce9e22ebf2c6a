"""stability-logits: attention-logit growth and QK-norm, log Z drift and z-loss, at toy size."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

ARMS = ("baseline", "qk_norm", "z_loss", "stabilised")
WITH_QK_NORM = ("qk_norm", "stabilised")  # the arms meant to normalise queries and keys
WITH_Z_LOSS = ("z_loss", "stabilised")  # the arms meant to add z-loss

SPEC = LabSpec(
    name="stability-logits",
    group="correctness",
    summary=(
        "A tiny decoder (2 layers, d_model 32, 2 heads of 16) trained data-parallel on W ranks "
        "(gradients all-reduced every step) at a high AdamW learning rate on an induction task, "
        "four times from the same seed and batches: baseline, QK-norm (queries and keys "
        "RMS-normalised per head), z-loss (coef * log Z^2 on the output softmax), and both "
        "('stabilised'). Observed per step: the largest attention logit q.k/sqrt(d), the "
        "attention entropy, log Z = logsumexp of the output logits, the loss; loss spikes "
        "(non-finite, or above k x the running median) are counted per arm. Without QK-norm the "
        "attention logits grow a hundredfold and the attention rows collapse onto single keys; "
        "with it they stay under sqrt(d_head). Without z-loss log Z drifts up from log V; with "
        "it log Z is pulled to ~0. At this size neither arm spikes: the failure the baseline "
        "shows is a collapsed attention that learns the task late or not at all."
    ),
    params=(
        ParamSpec("steps", "int", 150, "optimizer steps per arm", minimum=20, maximum=400),
        ParamSpec("lr", "float", 0.05, "AdamW peak LR (constant)", minimum=1e-4, maximum=1.0),
        ParamSpec(
            "z_loss",
            "float",
            1e-2,
            "z-loss coefficient of the z_loss and stabilised arms (PaLM's 1e-4 only slows "
            "the drift in a toy run: log Z 7.3 instead of 10.8 after 150 steps; 1e-2 pulls "
            "it to ~0)",
            minimum=0.0,
            maximum=1.0,
        ),
        ParamSpec("batch_per_rank", "int", 16, "sequences per rank per step", minimum=1),
        ParamSpec("seed", "int", 0, "model and data seed", minimum=0),
        ParamSpec(
            "spike_factor",
            "float",
            1.5,
            "a step spikes when its loss > this x the median of the previous 20",
            minimum=1.01,
            maximum=100.0,
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: no_qk_norm builds the stabilised arm without QK-norm; no_z_loss gives it "
            "z-loss coefficient 0; no_grad_sync skips the gradient all-reduce (replicas drift)",
            choices=("none", "no_qk_norm", "no_z_loss", "no_grad_sync"),
        ),
    ),
    observations=(
        ObservationSpec("arms.*.qk_norm", "the arm normalises queries and keys", derived=True),
        ObservationSpec("arms.*.z_coef", "the arm's z-loss coefficient", derived=True),
        ObservationSpec("arms.*.peak_attn_logit", "largest q.k/sqrt(d) seen over training"),
        ObservationSpec("arms.*.final_attn_logit", "largest attention logit, last 10 steps"),
        ObservationSpec(
            "arms.*.final_attn_entropy",
            "mean attention entropy (nats; the lowest layer), mean of the last 10 steps",
        ),
        ObservationSpec("arms.*.initial_log_z", "mean log Z over the first step's tokens"),
        ObservationSpec("arms.*.final_log_z", "mean log Z over the tokens, last 10 steps"),
        ObservationSpec("arms.*.final_abs_log_z", "|final_log_z|"),
        ObservationSpec("arms.*.peak_abs_log_z", "largest |log Z| of any token, any step"),
        ObservationSpec("arms.*.final_loss", "cross-entropy (global), mean of the last 10 steps"),
        ObservationSpec("arms.*.excess_loss", "final_loss - the task's optimum"),
        ObservationSpec("arms.*.spikes", "steps whose loss is non-finite or > k x running median"),
        ObservationSpec("arms.*.nonfinite_steps", "steps whose loss is not finite"),
        ObservationSpec("arms.*.curve.*", "loss, max_logit, log_z every 10th step"),
        ObservationSpec(
            "attn_logit_bound", "sqrt(d_head): what QK-norm without a gain allows", derived=True
        ),
        ObservationSpec(
            "optimal_loss", "the task's best loss: half the tokens are random", derived=True
        ),
        ObservationSpec(
            "ratios.attn_logit_baseline_over_qk_norm", "peak attention logit, baseline / qk_norm"
        ),
        ObservationSpec(
            "ratios.attn_entropy_qk_norm_over_baseline", "final attention entropy, qk / baseline"
        ),
        ObservationSpec(
            "ratios.abs_log_z_qk_norm_over_stabilised",
            "final |log Z|: qk_norm (no z-loss) / stabilised",
        ),
        ObservationSpec("replicas.*", "per arm: ranks whose final weights digest differs"),
        ObservationSpec("total_spikes", "spikes summed over the arms"),
    ),
    checks=(
        CheckSpec(
            "qk_norm_bounds_attention_logits",
            "arms with QK-norm stay under sqrt(d_head); the baseline grows 10x past that",
        ),
        CheckSpec(
            "z_loss_anchors_log_z",
            "arms with z-loss end with |log Z| <= 1; the QK-norm arm without it 5x higher",
        ),
        CheckSpec("replicas_in_sync", "every rank ends every arm with the same weights"),
    ),
    timeout_s=120.0,
    max_world_size=8,
)
