"""The app's prompt catalogue (drill.mock.coding.catalogue) and `--prompt` on the command line:
today's round keeps its table and time; the eval prompt's follow-ups cover its checks and link
real cards; an unknown prompt is one line and exit 2; --help lists the prompts."""

from __future__ import annotations

import string

import pytest
import yaml

from decks import bundled_deck_paths
from drill.cli.main import main
from drill.mock.coding import followup_table
from drill.mock.coding.catalogue import catalogue, round_prompt
from drill.mock.coding.phases import CODING_PHASES
from drill.mock.errors import MockError
from trainer_lab.grading import CONTRACT, PHASES


def exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exited:
        return int(exited.code or 0)


def test_todays_round_is_first_with_its_follow_up_table_and_time_table():
    first = catalogue()[0]
    assert first.id == "ddp" and first.phases == PHASES and first.contract == CONTRACT
    assert first.followups.failed is followup_table.FAILED
    assert first.followups.what_if is followup_table.WHAT_IF
    assert first.minutes == sum(p.minutes for p in CODING_PHASES)


def test_the_eval_prompts_follow_ups_cover_its_checks_and_link_bundled_cards():
    entry = round_prompt("eval")
    cards = set()
    for path in bundled_deck_paths():
        cards.update(card["id"] for card in yaml.safe_load(path.read_text())["cards"])
    table = entry.followups
    assert set(table.failed) == {n for names in entry.check_names.values() for n in names}
    assert set(table.what_if) == set(table.what_if_order) <= set(entry.phases)
    for phase, t in table.what_if.items():
        assert t.check in entry.check_names[phase]
    for t in (*table.failed.values(), *table.what_if.values()):
        fields = {f for _, f, _, _ in string.Formatter().parse(t.text) if f}
        assert fields <= {"evidence"}, t.id
        assert 3 <= len(t.rubric) <= 5 and set(t.cards) <= cards, t.id
    assert "whatever" in table.failed["best.survives_restart"].text.format(evidence="whatever")


def test_an_unknown_prompt_or_phase_is_a_mock_error_naming_the_known_ones():
    with pytest.raises(MockError, match="unknown prompt 'fsdp9'; prompts: ddp, eval"):
        round_prompt("fsdp9")
    with pytest.raises(MockError, match="phases: exact, during, best"):
        round_prompt("eval").grader_phases(["skeleton"])
    assert round_prompt("eval").grader_phases(None) == ["exact", "during", "best"]


def test_grade_with_an_unknown_prompt_is_one_line_and_exit_2(capsys, tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print(1)\n")
    for argv, message in [
        (["mock", "grade", str(script), "--prompt", "fsdp9"], "unknown prompt 'fsdp9'"),
        (["mock", "grade", str(script), "--prompt", "eval", "--phase", "torn"], "phases: exact"),
        (["mock", "contract", "--prompt", "nope"], "prompts: ddp, eval"),
    ]:
        assert exit_code(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err


def test_help_lists_the_prompts_and_contract_prints_the_chosen_one(capsys):
    assert exit_code(["mock", "grade", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "eval: Distributed evaluation (45 min)" in out and "ddp: DDP training" in out
    assert exit_code(["mock", "contract", "--prompt", "eval"]) == 0
    out = capsys.readouterr().out
    assert "exact distributed evaluation" in out and "class EvalSet" in out
    assert exit_code(["mock", "contract"]) == 0
    assert capsys.readouterr().out.startswith(CONTRACT)


def test_grade_passes_the_prompt_and_its_phases_to_the_grader(monkeypatch, tmp_path, capsys):
    from drill.cli import mock_grade

    seen: dict = {}

    def fake(script, out_dir, phases, **options):
        seen.update(phases=list(phases), prompt=options.get("prompt"))
        raise mock_grade.MockError("stop here")  # the call is what this test looks at

    monkeypatch.setattr(mock_grade, "grade_script", fake)
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "home"))
    script = tmp_path / "train.py"
    script.write_text("print(1)\n")
    assert exit_code(["mock", "grade", str(script), "--prompt", "eval", "--phase", "best"]) == 2
    assert seen == {"phases": ["best"], "prompt": "eval"}
    assert exit_code(["mock", "grade", str(script)]) == 2
    assert seen == {"phases": list(PHASES), "prompt": None}  # today's call, unchanged
    assert "stop here" in capsys.readouterr().err
