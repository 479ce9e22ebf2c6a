"""rl-weight-sync: RL post-training's loop at toy size. Generator ranks sample rollouts tagged
with their weight version and ship them to the learner; the learner takes a PPO-clip step and
broadcasts the new weights to the generators in flat buckets over a group built once."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

RUNS = ("on_policy", "one_step_off")
SABOTAGES = ("none", "first_bucket", "no_reload", "bf16_copy", "early_stop")

SPEC = LabSpec(
    name="rl-weight-sync",
    group="correctness",
    summary=(
        "Ranks 0..L-1 are learners, the rest generators. Each iteration every generator decodes "
        "a static batch of rollouts (prompts x samples, until EOS or the length cap) with a small "
        "policy, records each rollout's log-prob and the weight version it used, and sends the "
        "batch to a learner (send/recv). The learner recomputes the log-probs, takes a PPO-clip "
        "step (learners average gradients), and learner 0 broadcasts the new weights in flat "
        "buckets over a learner+generators group built once. Two runs: on_policy (the generators "
        "wait for the new weights) and one_step_off (they receive them in the background while "
        "generating the next batch with the previous weights). After every sync each generator "
        "sends its weights back for an audit (bitwise against the version just sent). Observed: "
        "the lag of every rollout consumed, bytes and elements moved per sync against the "
        "model, recorded log-probs against the learner's recompute (same decode shapes, and "
        "teacher-forced in one forward), importance-ratio spread and clip fraction, and the "
        "decode slots a static batch spends waiting for its longest rollout."
    ),
    params=(
        ParamSpec(
            "iterations", "int", 6, "learner steps (= weight syncs) per run", minimum=2, maximum=100
        ),
        ParamSpec(
            "learners",
            "int",
            1,
            "learner ranks L (at most the generator count)",
            minimum=1,
            maximum=8,
        ),
        ParamSpec("prompts", "int", 8, "fixed prompts per generator batch", minimum=1, maximum=64),
        ParamSpec(
            "samples", "int", 4, "samples per prompt (the advantage's group)", minimum=2, maximum=32
        ),
        ParamSpec("max_len", "int", 24, "decode length cap", minimum=2, maximum=128),
        ParamSpec("bucket_bytes", "int", 2048, "flat broadcast bucket size", minimum=64),
        ParamSpec("lr", "float", 0.02, "learner Adam learning rate", minimum=0.0, maximum=1.0),
        ParamSpec("clip", "float", 0.2, "PPO ratio clip epsilon", minimum=0.0, maximum=1.0),
        ParamSpec("seed", "int", 0, "init and sampling seed", minimum=0),
        ParamSpec(
            "tolerance",
            "float",
            0.0,
            "allowed |recorded - recomputed| log-prob (same decode shapes) for a rollout "
            "checked against the weights of the version it is tagged with",
            minimum=0.0,
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: first_bucket broadcasts only the first bucket (the rest stay stale); "
            "no_reload: the generators receive the weights but never load them; bf16_copy: the "
            "generators hold a bf16 copy and get bf16 weights; early_stop: decoding stops once "
            "3/4 of the batch has finished, truncating the rest",
            choices=SABOTAGES,
        ),
    ),
    observations=(
        ObservationSpec("learners", "learner ranks", derived=True),
        ObservationSpec("generators", "generator ranks", derived=True),
        ObservationSpec("model_elements", "parameter elements of the policy", derived=True),
        ObservationSpec(
            "model_bytes", "parameter bytes of the learner's fp32 policy", "B", derived=True
        ),
        ObservationSpec("*.rollouts", "rollouts the learners consumed"),
        ObservationSpec("*.lag.max", "largest learner version - rollout version at consumption"),
        ObservationSpec("*.lag.min", "smallest version lag"),
        ObservationSpec("*.lag.counts", "rollout batches per lag (key: lag)"),
        ObservationSpec("*.lag.first_batch", "lag of the first batch consumed (warm-up)"),
        ObservationSpec("*.sync.count", "weight syncs received per generator"),
        ObservationSpec("*.sync.buckets", "bucket broadcasts per sync"),
        ObservationSpec("*.sync.bytes_per_sync", "bytes a generator received per sync", "B"),
        ObservationSpec("*.sync.elements_per_sync", "parameter elements received per sync"),
        ObservationSpec("*.sync.bytes_over_model", "bytes per sync / model_bytes"),
        ObservationSpec("*.weights.audits", "generator weight audits after syncs"),
        ObservationSpec(
            "*.weights.max_abs_diff",
            "generator vs learner weights of the version just sent, max over audits",
        ),
        ObservationSpec("*.weights.digest_mismatches", "audits whose sha256 differed"),
        ObservationSpec("*.weights.version_claimed_max", "highest version a generator reported"),
        ObservationSpec(
            "*.logprob.tagged_max_abs_diff",
            "recorded vs the learner's recompute with the rollout's tagged version, decode shapes",
        ),
        ObservationSpec(
            "*.logprob.current_max_abs_diff",
            "recorded vs the learner's recompute with its current weights, decode shapes",
        ),
        ObservationSpec(
            "*.logprob.teacher_forced_max_abs_diff",
            "the learner's own log-probs: "
            "decode shapes vs one teacher-forced forward, same weights",
        ),
        ObservationSpec("*.ratio.max_abs_dev", "max |pi_new / pi_old - 1| over rollouts"),
        ObservationSpec("*.ratio.clip_fraction", "share of rollouts whose ratio was clipped"),
        ObservationSpec("*.reward.first", "mean reward of the first iteration"),
        ObservationSpec("*.reward.last", "mean reward of the last iteration"),
        ObservationSpec("decode.batches", "generator batches decoded (both runs)"),
        ObservationSpec("decode.rollouts", "rollouts decoded"),
        ObservationSpec("decode.steps", "decode steps (forwards over the whole static batch)"),
        ObservationSpec("decode.tokens", "tokens the rollouts kept"),
        ObservationSpec("decode.slot_utilisation", "tokens / (steps x batch size)"),
        ObservationSpec("decode.longest_over_mean", "mean over batches of longest / mean length"),
        ObservationSpec("decode.truncated", "rollouts cut before EOS or the cap"),
    ),
    checks=(
        CheckSpec(
            "weights_equal_after_sync",
            "every audit: generator weights bitwise = the version just sent",
        ),
        CheckSpec("sync_moves_every_parameter", "each sync delivers every parameter element"),
        CheckSpec("rollout_lag_as_expected", "lag 0 on-policy; 1 one-step-off (after warm-up)"),
        CheckSpec(
            "recorded_logprobs_match_their_version",
            "recorded log-probs = the tagged version's, recomputed in the same shapes",
        ),
        CheckSpec("no_rollout_truncated", "every rollout decoded to EOS or the length cap"),
    ),
    timeout_s=120.0,
)
