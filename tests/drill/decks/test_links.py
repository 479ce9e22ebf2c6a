"""Link checks in `drill decks check`: one case per error kind, with the exact file:line."""

from pathlib import Path

import pytest

from drill.cli.main import main
from tests.support.decks import write_deck

HEADER = "deck: links\ntitle: Link checks\ncards:\n"


def card(card_id: str, lab: str) -> str:
    return f"  - id: {card_id}\n    level: easy\n    front: q\n    back: a\n{lab}"


def check(tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str) -> tuple[int, list[str]]:
    path = write_deck(tmp_path / "decks", HEADER + body)
    code = main(["decks", "check", str(path)])
    return code, [line for line in capsys.readouterr().out.splitlines() if line]


def test_valid_link_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lab = (
        "    lab:\n      run: ddp-baseline\n      params: {steps: 4}\n"
        "      expect: ['max_loss_diff <= 1e-5']\n"
    )
    code, lines = check(tmp_path, capsys, card("ok-card", lab))
    assert code == 0, lines
    assert lines[-1].startswith("ok: 1 deck(s), 1 card(s)")


def test_unknown_lab(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = check(tmp_path, capsys, card("c1", "    lab:\n      run: no-such-lab\n"))
    assert code == 1
    assert len(lines) == 1
    assert lines[0].startswith(f"{tmp_path / 'decks' / 'links.yaml'}:8: card c1: unknown lab")
    assert "ddp-baseline" in lines[0]  # the valid choices are listed


def test_unknown_and_mistyped_params(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lab = "    lab:\n      run: ddp-baseline\n      params: {steps: many, stepz: 3}\n"
    code, lines = check(tmp_path, capsys, card("c2", lab))
    assert code == 1
    assert any(
        line.endswith("card c2: param steps: 'many' is not a valid int in [1, 200]")
        for line in lines
    ), lines
    assert any(":8: card c2: lab ddp-baseline has no param 'stepz'" in line for line in lines)


def test_claim_naming_unreported_observation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lab = "    lab:\n      run: ddp-baseline\n      expect: ['loss_jump_ratio >= 2']\n"
    code, lines = check(tmp_path, capsys, card("c3", lab))
    assert code == 1
    assert ":8: card c3: expect 'loss_jump_ratio >= 2': lab ddp-baseline reports no " in lines[0]


def test_malformed_claim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lab = "    lab:\n      run: ddp-baseline\n      expect: ['max_loss_diff <=']\n"
    code, lines = check(tmp_path, capsys, card("c4", lab))
    assert code == 1
    assert ":8: card c4: expect 'max_loss_diff <=': " in lines[0]


def test_predict_choices_that_can_both_hold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = card(
        "c5",
        "    lab:\n      run: ddp-baseline\n"
        "    predict:\n      ask: How far apart?\n      choices:\n"
        "        - {text: close, when: 'max_loss_diff < 1'}\n"
        "        - {text: far, when: 'max_loss_diff > 0.5'}\n",
    )
    code, lines = check(tmp_path, capsys, body)
    assert code == 1
    assert lines[0].endswith(":10: card c5: choices 'close' and 'far' can both hold")


def test_predict_without_lab(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = card(
        "c6",
        "    predict:\n      ask: Which?\n      choices:\n"
        "        - {text: a, when: 'x < 1'}\n        - {text: b, when: 'x >= 1'}\n",
    )
    code, lines = check(tmp_path, capsys, body)
    assert code == 1
    assert lines[0].endswith(":8: card c6: a predict block needs a lab block")


def test_comparing_two_observations_is_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lab = "    lab:\n      run: ddp-baseline\n      expect: ['last_loss < first_loss']\n"
    code, lines = check(tmp_path, capsys, card("c7", lab))
    assert code == 1
    expected = ":8: card c7: expect 'last_loss < first_loss': 'first_loss' is an observation"
    assert expected in lines[0]


def test_where_must_name_an_observation_of_the_lab(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lab = "    lab:\n      run: throughput-mfu\n      where: gpu_kind == h100\n"
    code, lines = check(tmp_path, capsys, card("c1", lab))
    assert code == 1
    assert (
        "where 'gpu_kind == h100': lab throughput-mfu reports no observation 'gpu_kind'"
        in (lines[0])
    )
    good = "    lab:\n      run: throughput-mfu\n      where: device == cpu\n"
    code, lines = check(tmp_path / "ok", capsys, card("c2", good))
    assert code == 0, lines


@pytest.mark.parametrize(("lab", "world"), [("fsdp", 12), ("ddp-baseline", 1), ("fsdp", 64)])
def test_a_world_size_the_lab_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lab: str, world: int
) -> None:
    """The lab's own range (trainer_lab.catalogue.check_world_size), not only its minimum:
    fsdp runs at 1..8 ranks, so a card asking for 12 would fail only when run (issue 25)."""
    from trainer_lab.catalogue import CATALOGUE

    spec = CATALOGUE[lab]
    code, lines = check(
        tmp_path, capsys, card("c9", f"    lab:\n      run: {lab}\n      world_size: {world}\n")
    )
    assert code == 1
    assert lines[0].endswith(
        f"card c9: lab {lab}: world size {world} is out of range "
        f"[{spec.min_world_size}, {spec.max_world_size}]"
    ), lines


def test_a_world_size_at_the_labs_maximum_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from trainer_lab.catalogue import CATALOGUE

    top = CATALOGUE["fsdp"].max_world_size
    code, lines = check(
        tmp_path, capsys, card("c10", f"    lab:\n      run: fsdp\n      world_size: {top}\n")
    )
    assert code == 0, lines
