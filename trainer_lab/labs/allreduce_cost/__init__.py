"""allreduce-cost: all-reduce time against message size on gloo, the alpha-beta fit, ring volume."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SPEC = LabSpec(
    name="allreduce-cost",
    group="performance",
    summary=(
        "Times dist.all_reduce over message sizes from 4 KiB to 16 MiB (fastest of a few "
        "repetitions, slowest rank) and fits t = alpha + beta * bytes by least squares. Then a "
        "ring all-reduce written with send/recv (reduce-scatter, then all-gather) counts the "
        "bytes each rank really sends, against 2(n-1)/n * S, and its result against "
        "dist.all_reduce's."
    ),
    params=(
        ParamSpec(
            "max_exp", "int", 22, "largest message is 2**max_exp floats", minimum=14, maximum=24
        ),
        ParamSpec(
            "reps",
            "int",
            5,
            "timed repetitions per size (the fastest counts)",
            minimum=3,
            maximum=50,
        ),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: fixed_size times the smallest tensor at every size; naive replaces the "
            "ring with every rank sending its whole tensor to every other rank; wrong_chunk "
            "starts the ring's all-gather one chunk off",
            choices=("none", "fixed_size", "naive", "wrong_chunk"),
        ),
    ),
    observations=(
        ObservationSpec("sizes_bytes", "message sizes timed", "B", derived=True),
        ObservationSpec("seconds", "fastest all-reduce time per size, slowest rank", "s"),
        ObservationSpec(
            "fit.alpha_us", "fitted intercept (noisy: the fit follows large messages)", "us"
        ),
        ObservationSpec(
            "latency_us", "fastest of the three smallest messages: the alpha term", "us"
        ),
        ObservationSpec("fit.beta_ns_per_byte", "fitted per-byte term", "ns/B"),
        ObservationSpec("fit.r2", "coefficient of determination of the linear fit"),
        ObservationSpec("fit.bandwidth_gb_s", "1 / beta", "GB/s"),
        ObservationSpec(
            "time_ratio", "time of the largest message / the fastest of the three smallest"
        ),
        ObservationSpec("size_ratio", "bytes of the largest message / the smallest", derived=True),
        ObservationSpec("bus_bandwidth_gb_s", "2(n-1)/n * S / t at the largest size", "GB/s"),
        ObservationSpec("ring.bytes_over_size", "bytes one rank sent / tensor bytes (max rank)"),
        ObservationSpec("ring.formula", "2(n-1)/n", derived=True),
        ObservationSpec("ring.volume_vs_formula", "bytes_over_size / 2(n-1)/n"),
        ObservationSpec("ring.matches_all_reduce", "hand ring result == dist.all_reduce (bool)"),
        ObservationSpec("ring.messages_per_rank", "send calls per rank"),
    ),
    checks=(
        CheckSpec("time_grows_with_size", "the largest message takes >= 10x the smallest"),
        CheckSpec("alpha_beta_fits", "the linear model explains the times (r2 >= 0.8)"),
        CheckSpec("ring_volume_is_2_n_minus_1_over_n", "bytes sent per rank = 2(n-1)/n * S"),
        CheckSpec("ring_equals_all_reduce", "the hand ring computes what dist.all_reduce does"),
    ),
    timeout_s=90.0,
)
