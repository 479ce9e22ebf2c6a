"""`drill verify --strength`: which sabotage breaks which card, and cards that test nothing."""

from pathlib import Path
from typing import Any

import pytest

from drill.decks.models import Card
from drill.labs.strength import (
    echo_claims,
    run_strength,
    sabotage_settings,
    sabotaged_jobs,
    world_size_problems,
)
from drill.labs.verify import LabJob, LinkedCard, ResultCache
from tests.support.run_log import cache_db
from trainer_lab.catalogue_types import LabSpec, ParamSpec
from trainer_lab.result import LabResult, Status, new_result


def linked(card_id: str, lab: dict[str, Any]) -> LinkedCard:
    data = {"id": card_id, "level": "easy", "front": "q", "back": "a", "lab": lab}
    return LinkedCard("deck", Card.model_validate(data))


def result(status: Status, **observations: Any) -> LabResult:
    made = new_result("lab", {}, 2, Path("run"))
    made["status"], made["observations"] = status, observations
    return made


def test_settings_are_sabotage_choices_and_documented_debug_values() -> None:
    spec = LabSpec(
        name="x",
        summary="",
        params=(
            ParamSpec("sabotage", "str", "none", "debug: a breaks it; b too", ("none", "a", "b")),
            ParamSpec("reduce", "str", "mean", "mean: right; debug sum: too big", ("mean", "sum")),
            ParamSpec("restarts", "int", 2, "restarts; debug 0: no restart"),
            ParamSpec("named", "bool", True, "debug: false uses a plain barrier"),
            ParamSpec("timeout", "int", 0, "debug: the timeout the ranks get, when not 0"),
            ParamSpec("steps", "int", 12, "how many steps"),
        ),
    )
    assert sabotage_settings(spec) == [
        ("sabotage", "a"),
        ("sabotage", "b"),
        ("reduce", "sum"),
        ("restarts", 0),
        ("named", False),
    ]


def test_card_params_that_fix_a_setting_are_not_overridden() -> None:
    free = linked("c", {"run": "ddp-baseline", "params": {"steps": 4}})
    assert [job for *_, job in sabotaged_jobs(free)] == [
        LabJob("ddp-baseline", (("sabotage", "no_grad_sync"), ("steps", 4)), None)
    ]
    fixed = linked("c", {"run": "ddp-baseline", "params": {"sabotage": "none"}})
    assert sabotaged_jobs(fixed) == []


def _runner(observations_by_sabotage: dict[str, LabResult]) -> Any:
    def run_job(job: LabJob, out_dir: Path, progress: Any, cancel: Any) -> LabResult:
        return observations_by_sabotage[dict(job.params)["sabotage"]]

    return run_job


def test_a_claim_the_sabotage_breaks_is_strong_one_it_never_touches_tests_nothing(
    tmp_path: Path,
) -> None:
    strong = linked("strong", {"run": "ddp-baseline", "expect": ["grad_mismatch_steps == 0"]})
    weak = linked("weak", {"run": "ddp-baseline", "expect": ["steps > 0"]})
    # the sabotaged lab fails its own checks, but its observations are still read
    broken = result("failed", grad_mismatch_steps=12, steps=12)
    report = run_strength(
        [strong, weak],
        _runner({"no_grad_sync": broken}),
        ResultCache(cache_db(tmp_path / "cache"), "v"),
        tmp_path / "runs",
        budget=2,
    )
    assert len(report.jobs) == 1  # both cards share the one sabotaged run
    by_id = {card.card_id: card for card in report.cards}
    assert by_id["strong"].breakers == ["sabotage=no_grad_sync"]
    assert not by_id["strong"].tests_nothing
    assert by_id["weak"].broken_by == {"sabotage=no_grad_sync": []}
    assert [card.card_id for card in report.weak] == ["weak"]


def test_a_sabotaged_run_without_observations_breaks_nothing(tmp_path: Path) -> None:
    card = linked("c", {"run": "ddp-baseline", "expect": ["grad_mismatch_steps == 0"]})
    report = run_strength(
        [card],
        _runner({"no_grad_sync": result("timeout")}),
        ResultCache(cache_db(tmp_path / "cache"), "v"),
        tmp_path / "runs",
    )
    assert report.cards[0].broken_by == {"sabotage=no_grad_sync": None}
    assert report.cards[0].tests_nothing


def _printed(report: Any) -> tuple[int, str]:
    """What `drill verify --strength` prints for `report`, and its exit code."""
    from io import StringIO

    from rich.console import Console

    from drill.cli.verify import _print_strength

    out = StringIO()
    code = _print_strength(Console(file=out, width=250), report, "1 lab run(s)", 0.0, 0)
    return code, out.getvalue()


def test_a_card_left_no_sabotage_is_listed_apart(tmp_path: Path) -> None:
    # its params fix the lab's only sabotage setting: nothing is left to rerun it under
    card = linked(
        "c", {"run": "ddp-baseline", "params": {"sabotage": "none"}, "expect": ["x == 1"]}
    )
    report = run_strength(
        [card], _runner({}), ResultCache(cache_db(tmp_path / "cache"), "v"), tmp_path / "runs"
    )
    assert report.jobs == [] and report.weak == []
    [card_strength] = report.cards
    assert card_strength.broken_by == {} and not card_strength.skipped_for_device
    code, out = _printed(report)
    assert code == 0 and "no sabotage in its lab" in out


def _echoes(run: str, expect: list[str], params: dict[str, Any] | None = None) -> list[str]:
    card = linked("c", {"run": run, "params": params or {}, "expect": expect}).card
    return echo_claims(card)


def test_a_claim_restating_a_param_is_an_echo_an_observed_one_is_not() -> None:
    assert _echoes("resume", ["resume_step == 8"], {"resume_step": 8}) == [
        "resume_step == 8: restates the param resume_step=8"
    ]
    # the param's default counts as what the run got
    assert _echoes("hang", ["collective_timeout_s == 3.0"])
    assert _echoes("resume", ["modes.full.bit_identical == true"], {"resume_step": 8}) == []
    assert _echoes("resume", ["modes.weights_only.first_diff_step == 9"], {"resume_step": 8}) == []


def test_a_claim_over_an_observation_the_lab_computes_from_its_inputs_is_an_echo() -> None:
    # finfo is a dtype constant, trainable_fraction arithmetic over the model's shape,
    # victim is W - 1: the SPECs declare them derived
    assert _echoes("precision", ["finfo.float16.max == 65504"])
    assert _echoes("lora", ["trainable_fraction <= 0.1"]) == [
        "trainable_fraction <= 0.1: trainable_fraction is computed from the lab's inputs, "
        "not observed"
    ]
    assert _echoes("hang", ["victim == 1"])
    mixed = "overflow.bf16.nonfinite_loss_steps == 0 and finfo.bfloat16.max > 1e38"
    assert _echoes("precision", [mixed])  # one derived comparison spoils the claim
    assert _echoes("precision", ["overflow.fp16.nonfinite_loss_steps > 0"]) == []
    assert _echoes("lora", ["grad_bytes_ratio <= 0.1"]) == []


def test_a_trivial_range_is_an_echo_a_bound_that_can_fail_is_not() -> None:
    assert _echoes("throughput-mfu", ["mfu > 0 and mfu <= 1"])
    assert _echoes("throughput-mfu", ["tokens_per_s > 0"])
    assert _echoes("throughput-mfu", ["mfu > 0.3 and mfu <= 1"]) == []
    assert _echoes("sampler", ["no_sampler_state.duplicated > 0"]) == []


def test_predict_conditions_are_read_too_and_echoes_reach_the_report(tmp_path: Path) -> None:
    data = {
        "id": "c",
        "level": "easy",
        "front": "q",
        "back": "a",
        "lab": {"run": "ddp-baseline", "expect": ["grad_mismatch_steps == 0"]},
        "predict": {
            "ask": "?",
            "choices": [
                {"text": "a", "when": "steps == 12"},
                {"text": "b", "when": "steps != 12"},
            ],
        },
    }
    card = LinkedCard("deck", Card.model_validate(data))
    assert echo_claims(card.card) == ["steps == 12: restates the param steps=12"]
    broken = result("failed", grad_mismatch_steps=12, steps=12)
    report = run_strength(
        [card],
        _runner({"no_grad_sync": broken}),
        ResultCache(cache_db(tmp_path / "cache"), "v"),
        tmp_path / "runs",
    )
    assert [c.card_id for c in report.echoing] == ["c"]
    assert report.weak == []  # the sabotage broke its expect claim: echoing is its own verdict


def test_a_card_whose_where_fails_here_is_skipped_for_device_a_weak_cpu_card_still_fails(
    tmp_path: Path,
) -> None:
    from io import StringIO

    from rich.console import Console

    from drill.cli.verify import _print_strength

    # a GPU-only card: on a CPU its claims are never held against the sabotaged run
    gpu = linked(
        "gpu",
        {"run": "ddp-baseline", "where": "device == cuda", "expect": ["grad_mismatch_steps > 0"]},
    )
    weak = linked("weak", {"run": "ddp-baseline", "expect": ["steps > 0"]})
    on_cpu = result("failed", device="cpu", grad_mismatch_steps=0, steps=12)

    def strength(cards: list[LinkedCard], name: str) -> Any:
        cache = ResultCache(cache_db(tmp_path / name), "v")
        return run_strength(cards, _runner({"no_grad_sync": on_cpu}), cache, tmp_path / name)

    def printed(report: Any) -> tuple[int, str]:
        out = StringIO()
        code = _print_strength(Console(file=out, width=250), report, "1 lab run(s)", 0.0, 0)
        return code, out.getvalue()

    alone = strength([gpu], "alone")
    card = alone.cards[0]
    assert card.skipped_for_device and not card.tests_nothing and card.broken_by == {}
    assert card.skipped == {"sabotage=no_grad_sync": "not where device == cuda (device=cpu)"}
    assert alone.weak == [] and alone.device_skipped == [card]
    code, out = printed(alone)
    assert code == 0, out
    assert "skipped on this device" in out and "TESTS NOTHING" not in out
    assert "1 skipped: their card's `where:` does not hold on this device" in out

    both = strength([gpu, weak], "both")
    assert [c.card_id for c in both.weak] == ["weak"]
    code, out = printed(both)
    assert code == 1, out
    assert "1 card(s) test nothing: weak" in out


def test_a_where_that_holds_puts_the_card_to_the_test(tmp_path: Path) -> None:
    card = linked(
        "gpu",
        {"run": "ddp-baseline", "where": "device == cuda", "expect": ["grad_mismatch_steps == 0"]},
    )
    on_gpu = result("failed", device="cuda", grad_mismatch_steps=3)
    report = run_strength(
        [card],
        _runner({"no_grad_sync": on_gpu}),
        ResultCache(cache_db(tmp_path / "cache"), "v"),
        tmp_path / "runs",
    )
    assert report.cards[0].breakers == ["sabotage=no_grad_sync"]
    assert report.cards[0].skipped == {} and report.device_skipped == []


def _world(run: str, expect: list[str], world_size: int | None = None) -> list[str]:
    lab: dict[str, Any] = {"run": run, "expect": expect}
    if world_size is not None:
        lab["world_size"] = world_size
    return world_size_problems(linked("c", lab).card)


def test_a_claim_naming_a_rank_by_number_holds_at_one_world_size_only() -> None:
    # the victim, the straggler, the last rank: which number they carry depends on W
    assert _world("hang", ["root_cause.rank == 1"]) == [
        "root_cause.rank == 1: root_cause.rank == 1 names a rank by number"
    ]
    assert _world("hang", ["torchrun_root_cause_rank == 0"])
    assert _world("step-phases", ["straggler.ranks.1.forward_ms >= 30"]) == [
        "straggler.ranks.1.forward_ms >= 30: straggler.ranks.1.forward_ms reaches into rank 1 "
        "by number"
    ]
    # a relation that holds at any W, and rank 0 (there at every size), are fine
    assert _world("hang", ["root_cause_is_victim == true"]) == []
    assert _world("step-phases", ["straggler.grad_sync_growth_ms.0 >= 15"]) == []
    # a depth is not a rank, and a card that pins its world size may name ranks
    assert _world("activation-checkpointing", ["depths.8.none.block_forwards.backward == 0"]) == []
    assert _world("hang", ["root_cause.rank == 1"], world_size=2) == []


def test_a_card_that_pins_no_world_size_needs_a_lab_that_runs_at_two_and_three() -> None:
    assert _world("oom-debug", ["device == 'cuda'"]) == [
        "pins no world_size, but lab oom-debug runs only at 1..1 ranks (not 2)",
        "pins no world_size, but lab oom-debug runs only at 1..1 ranks (not 3)",
    ]
    assert _world("oom-debug", ["device == 'cuda'"], world_size=1) == []
    assert _world("sparse-rows", ["read_amplification <= 1.01"]) == []


def test_strength_reports_a_world_specific_card_and_fails(tmp_path: Path) -> None:
    from io import StringIO

    from rich.console import Console

    from drill.cli.verify import _print_strength

    card = linked("c", {"run": "ddp-baseline", "expect": ["grad_mismatch_steps == 0"]})
    ranked = linked("r", {"run": "hang", "params": {"scenario": "skip"},
                          "expect": ["root_cause.rank == 1"]})  # fmt: skip
    broken = result("failed", grad_mismatch_steps=3, root_cause={"rank": 0})
    report = run_strength(
        [card, ranked],
        lambda job, *_: broken,
        ResultCache(cache_db(tmp_path / "cache"), "v"),
        tmp_path / "runs",
    )
    assert [c.card_id for c in report.world_specific] == ["r"]
    out = StringIO()
    assert _print_strength(Console(file=out, width=250), report, "runs", 0.0, 0) == 1
    assert "r: holds at one world size only: root_cause.rank == 1" in out.getvalue()
    assert "1 card(s) that hold at one world size only" in out.getvalue()


def test_world_size_stands_in_only_where_the_card_pins_none() -> None:
    free = linked("f", {"run": "ddp-baseline", "params": {"steps": 4}})
    pinned = linked("p", {"run": "ddp-baseline", "params": {"steps": 4}, "world_size": 2})
    assert [job.world_size for *_, job in sabotaged_jobs(free, 3)] == [3]
    assert [job.world_size for *_, job in sabotaged_jobs(pinned, 3)] == [2]
    assert [job.world_size for *_, job in sabotaged_jobs(free)] == [None]


@pytest.mark.lab
def test_strength_cli_on_ddp_baseline(
    drill_home: Path, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    from drill.cli.main import main

    decks = tmp_path / "decks"
    decks.mkdir()
    (decks / "d.yaml").write_text(
        "deck: d\ntitle: D\ncards:\n"
        "  - id: real\n    level: easy\n    front: q\n    back: a\n"
        "    lab: {run: ddp-baseline, params: {steps: 4},"
        " expect: ['weights_identical_across_ranks == true']}\n"
        "  - id: hollow\n    level: easy\n    front: q\n    back: a\n"
        "    lab: {run: ddp-baseline, params: {steps: 4}, expect: ['steps > 0']}\n"
        "  - id: echo\n    level: easy\n    front: q\n    back: a\n"
        "    lab: {run: ddp-baseline, params: {steps: 4},"
        " expect: ['weights_identical_across_ranks == true and steps == 4']}\n"
    )
    monkeypatch.setenv("COLUMNS", "250")
    code = main(["--decks", str(decks), "verify", "--deck", "d", "--strength"])
    out = capsys.readouterr().out
    assert code == 1, out
    lines = {line.split()[1]: line for line in out.splitlines() if line.startswith("│ ")}
    assert "sabotage=no_grad_sync" in lines["real"] and "strong" in lines["real"]
    assert "TESTS NOTHING" in lines["hollow"]
    assert "1 card(s) test nothing: hollow" in out
    # the sabotage breaks `echo`, but half its claim only restates a param: flagged anyway
    assert "strong" in lines["echo"]
    assert "echo: claim echoes its inputs:" in out and "restates the param steps=4" in out
    assert "1 card(s) with a claim that echoes its inputs" in out
    # the sabotaged run is cached like verify's: a second sweep runs nothing
    assert main(["--decks", str(decks), "verify", "--deck", "d", "--strength"]) == 1
    assert "1 lab run(s) (1 cached)" in capsys.readouterr().out


# Bundled cards whose labs are quick: their sabotaged runs really break a claim of each card.
# The full sweep over every lab-linked card is `drill verify --strength` (see the README).
STRENGTH_SUBSET = ("split-leakage", "masked-loss", "map-step-phases", "llm-low-gpu-util-phases")


@pytest.mark.lab
def test_bundled_cards_of_quick_labs_are_each_broken_by_some_sabotage(tmp_path: Path) -> None:
    from drill.cli.verify import _run_job
    from drill.decks import links
    from drill.decks.loader import load_decks
    from drill.labs.verify import linked_cards

    cards = [
        linked
        for linked in linked_cards(load_decks(None, link_checks=links.LAB_LINK_CHECKS))
        if linked.card.lab is not None
        and (linked.card.lab.run in STRENGTH_SUBSET or linked.card.id in STRENGTH_SUBSET)
    ]
    assert len(cards) >= 6

    def run_job(job: LabJob, out_dir: Path, progress: Any, cancel: Any) -> LabResult:
        return _run_job(job, out_dir, lambda raw: None, cancel)

    report = run_strength(
        cards, run_job, ResultCache(cache_db(tmp_path / "cache"), "v"), tmp_path / "runs", budget=2
    )
    assert {c.card_id: c.breakers for c in report.cards if not c.breakers} == {}
    # the two step-phases cards share one sabotaged run (same lab and params)
    assert len(report.jobs) == len({job for *_, job in _all_variants(cards)})


def _all_variants(cards: list[LinkedCard]) -> list[tuple[str, Any, LabJob]]:
    return [variant for linked in cards for variant in sabotaged_jobs(linked)]
