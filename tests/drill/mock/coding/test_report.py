"""The coding round's report from hand-built grading results (no torchrun): checks per phase with
their evidence, the latest verdict wins, time per phase, the code, Markdown, and the failed
checks' cards rated Again once."""

from __future__ import annotations

import re
from pathlib import Path

from drill.cli.main import main
from drill.mock.coding.report import CHECK_CARDS, build_report, cards_for, feed_back, to_markdown
from drill.mock.coding.session import CodingSession, default_rounds_dir
from tests.support.clocks import FakeClock
from trainer_lab.grading import CHECK_NAMES, LAB
from trainer_lab.result import new_result, write_result

DECKS = Path(__file__).resolve().parents[4] / "decks"


def write_grade(session: CodingSession, number: int, checks: list[tuple[str, bool, str]]) -> None:
    result = new_result(LAB, {}, 1, session.folder / "grades" / str(number))
    result["status"] = "ok" if all(p for _, p, _ in checks) else "failed"
    result["checks"] = [{"name": n, "passed": p, "detail": d} for n, p, d in checks]
    write_result(session.folder / "grades" / str(number), result)


def played_round(rounds: Path) -> CodingSession:
    clock = FakeClock()
    session = CodingSession.create(rounds, now=clock)
    session.clock.start()
    clock.advance(200)  # clarify: 3:20
    session.clock.advance()
    clock.advance(400)  # skeleton: 6:40
    session.clock.tick()
    session.clock.advance()
    clock.advance(61)  # distributed: 1:01
    session.clock.tick()
    session.clock.finish()
    session.save(code="import torch\nprint('mine')\n")
    write_grade(session, 1, [("skeleton.exits", False, "exit 1: NameError"),
                             ("skeleton.loss_falls", False, "not run")])  # fmt: skip
    write_grade(session, 2, [
        ("skeleton.exits", True, "exit 0 on 1 rank"),
        ("skeleton.loss_falls", True, "loss 2.30 -> 1.10"),
        ("distributed.exactly_once", False, "sample 17 seen twice in epoch 0"),
        ("restart.resumes_at_checkpoint", False, "restarted at step 0, checkpoint was step 40"),
    ])  # fmt: skip
    return session


def test_report_shows_per_phase_checks_with_evidence_time_and_code(tmp_path):
    report = build_report(played_round(tmp_path / "rounds"))
    titles = [p.title for p in report.phases]
    assert titles[1] == "Config, dataset, single-process skeleton"
    skeleton, distributed, restart = report.phases[1], report.phases[2], report.phases[3]
    assert [(c["name"], c["passed"]) for c in skeleton.checks] == [
        ("skeleton.exits", True),  # the later grading wins
        ("skeleton.loss_falls", True),
    ]
    assert distributed.checks[0]["detail"] == "sample 17 seen twice in epoch 0"
    assert restart.checks[0]["name"] == "restart.resumes_at_checkpoint"
    assert [round(p.used_s) for p in report.phases] == [200, 400, 61, 0, 0]
    assert report.finish_reason == "ended" and report.grades == 2
    assert report.code == "import torch\nprint('mine')\n"

    md = to_markdown(report)
    assert "## Config, dataset, single-process skeleton (6:40 of 10:00)" in md
    assert "- [x] `skeleton.loss_falls`: loss 2.30 -> 1.10" in md
    assert "- [ ] `distributed.exactly_once`: sample 17 seen twice in epoch 0" in md
    assert "- Checks held: 2/4 (from 2 grading runs)" in md
    assert "```python\nimport torch\nprint('mine')\n```" in md
    assert "- map-sampler-state-correctness" in md  # fed back to review


def test_failed_checks_rate_their_linked_cards_again_once(tmp_path):
    session = played_round(tmp_path / "rounds")
    report = build_report(session)
    rated: list[tuple[str, str, int]] = []
    decks = {"map-sampler-state-correctness": "interview-map", "llm-resume-after-crash": "llm"}

    def deck_of(card_id: str) -> str:
        return decks[card_id]  # KeyError for the others: skipped

    assert feed_back(session, report, lambda *a: rated.append(a), deck_of) == list(decks)
    assert rated == [
        ("map-sampler-state-correctness", "interview-map", 1),
        ("llm-resume-after-crash", "llm", 1),
    ]
    assert feed_back(session, report, lambda *a: rated.append(a), deck_of) == []  # once only
    assert len(rated) == 2


def test_every_check_links_to_cards_that_exist_in_the_bundled_decks():
    ids = set(re.findall(r"^\s*- id: (\S+)", "\n".join(p.read_text() for p in DECKS.glob("*.yaml")),
                         flags=re.M))  # fmt: skip
    names = [n for phase in CHECK_NAMES.values() for n in phase]
    assert set(names) <= set(CHECK_CARDS)
    for name in names:
        assert cards_for(name) and set(cards_for(name)) <= ids, name
    assert cards_for("distributed.something_new") == ("map-sampler-state-correctness",)


def test_cli_report_coding_prints_markdown(drill_home, capsys):
    session = played_round(default_rounds_dir())
    assert main(["mock", "report", "coding", str(session.round_id), "--md"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# Coding round {session.round_id}\n")
    assert main(["mock", "report", "coding", str(session.round_id)]) == 0
    out = capsys.readouterr().out
    assert "FAIL  distributed.exactly_once" in out
    assert main(["mock", "report", "coding", "99"]) == 2


def test_the_notes_are_read_against_the_talk_track_rubric_and_pushback_cards_are_rated(tmp_path):
    session = played_round(tmp_path / "rounds")
    session.pushback = [
        {"card_id": "hard-x", "deck_id": "staff-hard", "text": "Why  not FSDP?",
         "rubric": ["sharding memory savings", "all-gather communication cost"]},
    ]  # fmt: skip
    session.save(notes="Ask about GPU availability. Use DistributedSampler with set_epoch.")
    report = build_report(session)
    clarify, distributed, pushback = report.phases[0], report.phases[2], report.phases[4]
    assert report.notes.startswith("Ask about GPU availability")
    assert ("GPU availability or CPU-safe design", "covered") in clarify.rubric[0].bullets
    assert ("DistributedSampler with set_epoch", "covered") in distributed.rubric[0].bullets
    card = pushback.rubric[-1]
    assert (card.text, card.card_id, card.deck_id) == ("Why not FSDP?", "hard-x", "staff-hard")
    assert [status for _, status in card.bullets] == ["missed", "missed"]
    assert report.pushback_ratings() == [("hard-x", "staff-hard", 1)]

    md = to_markdown(report)
    assert "Notes rubric: The interviewer says:" in md
    assert "- [x] DistributedSampler with set_epoch" in md
    assert "Notes rubric (card hard-x): Why not FSDP?\n\n- [ ] sharding memory savings" in md
    assert "- hard-x (Again, pushback)" in md
    assert "## Notes as submitted\n\n```text\nAsk about GPU availability." in md

    rated: list[tuple[str, str, int]] = []
    decks = {"map-sampler-state-correctness": "interview-map"}
    assert feed_back(session, report, lambda *a: rated.append(a), decks.__getitem__) == [
        "map-sampler-state-correctness",
        "hard-x",
    ]
    assert rated[-1] == ("hard-x", "staff-hard", 1)


def test_code_with_a_fence_inside_stays_inside_its_block(tmp_path):
    session = played_round(tmp_path / "rounds")
    session.save(code='DOC = """\n````\n"""\n')
    md = to_markdown(build_report(session))
    assert '`````python\nDOC = """\n````\n"""\n`````' in md
