"""rendezvous: start-up failures (a rank that never joins, a wrong address, a port in use)."""

from __future__ import annotations

from trainer_lab.catalogue_types import CheckSpec, LabSpec, ObservationSpec, ParamSpec

SCENARIOS = ("missing", "wrong_address", "port_in_use")

SPEC = LabSpec(
    name="rendezvous",
    group="failures",
    summary=(
        "The c10d TCPStore rendezvous that init_process_group (env://) and torchrun's static "
        "rendezvous build, opened again inside a running job with a short timeout, three ways: "
        "the last rank never joins (the master waits, then reports how many joined), the last "
        "rank dials a port nobody listens on (it retries until its own timeout), and a second "
        "master binds a port already held (it fails at once with EADDRINUSE). Each rank's error, "
        "message and time to fail are recorded."
    ),
    params=(
        ParamSpec("rdzv_timeout_s", "float", 1.0, "the store's timeout", minimum=0.5, maximum=10.0),
        ParamSpec(
            "sabotage",
            "choice",
            "none",
            "debug: victim_joins lets the last rank join; right_address gives it the right "
            "port; free_port gives the second master a port of its own",
            choices=("none", "victim_joins", "right_address", "free_port"),
        ),
    ),
    observations=(
        ObservationSpec("missing.master_error", "timeout | address_in_use | other | none"),
        ObservationSpec("missing.master_seconds", "time until the master gave up", "s"),
        ObservationSpec("missing.waited_over_timeout", "master's wait / the store timeout"),
        ObservationSpec("missing.message", "what the master reported"),
        ObservationSpec("missing.message_counts_joined", "message's k/n = ranks that joined / W"),
        ObservationSpec("missing.joined_ranks_error", "worst error among the ranks that joined"),
        ObservationSpec("wrong_address.victim_error", "the rank that dialled the wrong port"),
        ObservationSpec("wrong_address.victim_seconds", "its time until it gave up", "s"),
        ObservationSpec("wrong_address.victim_waited_over_timeout", "its wait / the timeout"),
        ObservationSpec("wrong_address.victim_message", "what it reported"),
        ObservationSpec("wrong_address.master_error", "the master waiting for it"),
        ObservationSpec("port_in_use.error", "the second master on a held port"),
        ObservationSpec("port_in_use.seconds", "its time to fail", "s"),
        ObservationSpec("port_in_use.fails_before_timeout", "failed in under half the timeout"),
        ObservationSpec("port_in_use.message", "what it reported"),
    ),
    checks=(
        CheckSpec(
            "missing_rank_waits_then_counts",
            "master times out after >= 0.9 x timeout, naming how many ranks joined",
        ),
        CheckSpec("wrong_address_retries_until_timeout", "the misdirected rank times out"),
        CheckSpec("port_in_use_fails_fast", "EADDRINUSE well before the timeout"),
    ),
    timeout_s=90.0,
)
