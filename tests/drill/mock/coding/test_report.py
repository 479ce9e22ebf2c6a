"""The coding round's report from hand-built grading results (no torchrun): checks per phase with
their evidence, the latest verdict wins, time per phase, the code, Markdown, and the failed
checks' cards rated Again once."""

from __future__ import annotations

import json
import re
from pathlib import Path

from drill.cli.main import main
from drill.mock.coding.confirm import coding_checklist, settle
from drill.mock.coding.report import CHECK_CARDS, build_report, cards_for, to_markdown
from drill.mock.coding.session import CodingSession, default_rounds_dir
from drill.review.outside import LOGGED, NEW, RESCHEDULED, CardChange
from tests.support.clocks import FakeClock
from tests.support.coding_reports import played_round, with_answers, write_grade
from tests.support.rating_checklists import recording
from trainer_lab.grading import CHECK_NAMES, LAB
from trainer_lab.result import new_result, write_result

DECKS = Path(__file__).resolve().parents[4] / "decks"


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
    assert "- Ended early (F10)\n" in md and "Ended: ended" not in md  # issue 34
    assert "```python\nimport torch\nprint('mine')\n```" in md
    assert "- map-sampler-state-correctness" in md  # fed back to review


def feed_back(session, report, rate, deck_of) -> list[str]:  # type: ignore[no-untyped-def]
    """The round's checklist confirmed as the matcher proposed it (issue 37: only a confirm
    rates); [] once settled."""
    checklist = coding_checklist(session, report, rate, deck_of)
    return [] if checklist is None else settle(session, checklist.confirm())


def test_failed_checks_rate_their_linked_cards_again_once(tmp_path):
    session = played_round(tmp_path / "rounds")
    report = build_report(session)
    rated: list[tuple[str, str, int]] = []
    decks = {"map-sampler-state-correctness": "interview-map", "llm-resume-after-crash": "llm"}

    def deck_of(card_id: str) -> str:
        return decks[card_id]  # KeyError for the others: skipped

    assert feed_back(session, report, recording(rated), deck_of) == [
        f"{card}: Again (a failed check)" for card in decks
    ]
    assert rated == [
        ("map-sampler-state-correctness", "interview-map", 1),
        ("llm-resume-after-crash", "llm", 1),
    ]
    assert feed_back(session, report, recording(rated), deck_of) == []  # once only
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


def test_the_notes_are_read_against_the_talk_track_rubric(tmp_path):
    session = played_round(tmp_path / "rounds")
    with_answers(session, "", "")
    report = build_report(session)
    clarify, distributed = report.phases[0], report.phases[2]
    assert report.notes.startswith("Ask about GPU availability")
    assert ("GPU availability or CPU-safe design", "covered") in clarify.rubric[0].bullets
    assert ("DistributedSampler with set_epoch", "covered") in distributed.rubric[0].bullets
    # the quoted questions are the interviewer's words: no credit for them
    session.pushback[0]["question"] = "What about config identity to reject incompatible restores?"
    with_answers(session, "", "")
    skeleton = build_report(session).phases[1].rubric[0].bullets
    assert ("config identity to reject incompatible restores", "missed") in skeleton
    md = to_markdown(report)
    assert "Notes rubric: The interviewer says:" in md
    assert "- [x] DistributedSampler with set_epoch" in md
    assert "## Notes as submitted\n\n```text\nAsk about GPU availability." in md


def test_each_follow_up_is_graded_by_its_rubric_and_rates_exactly_its_cards(tmp_path):
    session = played_round(tmp_path / "rounds")
    # Q1 fully covered (rates nothing), Q2 one of three (Again), Q3 not answered (nothing)
    with_answers(session, "I saved optimizer state and resume from the newest checkpoint.",
                 "The sampler position moves.")  # fmt: skip
    report = build_report(session)
    q1, q2, q3 = report.phases[4].followups
    assert q1.answer.startswith("I saved optimizer") and q1.rating() is None
    assert [s for _, s in q2.bullets] == ["covered", "missed", "missed"] and q2.rating() == 1
    assert not q3.answered and q3.rating() is None
    assert report.followup_ratings() == [("card-b", 1), ("card-shared", 1)]

    rated: list[tuple[str, str, int]] = []
    decks = {"map-sampler-state-correctness": "m", "llm-resume-after-crash": "l",
             "card-a": "x", "card-b": "x", "card-c": "x", "card-shared": "x"}  # fmt: skip
    feed_back(session, report, recording(rated), decks.__getitem__)
    by_card = {card: rating for card, _deck, rating in rated}
    assert by_card["card-b"] == 1 and by_card["card-shared"] == 1
    assert "card-a" not in by_card  # its question was answered in full
    assert "card-c" not in by_card  # its question was not answered: not examined

    md = to_markdown(report)
    assert "### Follow-up Q1 (failed)\n\nWhy did your run start at step 0?" in md
    assert "Evidence: restarted at step 0" in md
    assert "Verdict: all covered (cards: card-a, card-shared)" in md
    assert "Verdict: Again (cards: card-b, card-shared)" in md
    assert "### Follow-up Q3 (what-if)\n\nWhich phase shows a straggler?\n\nNot answered" in md


def test_whether_a_check_ran_is_read_from_its_facts_not_its_wording(tmp_path):
    session = played_round(tmp_path / "rounds")
    folder = session.folder / "grades" / "3"
    result = new_result(LAB, {}, 1, folder)
    result["status"] = "failed"
    result["checks"] = [
        {"name": "monitoring.named_phases", "passed": False, "detail": "skipped",
         "facts": {"not_run": True}},
        {"name": "restart.matches_uninterrupted", "passed": False, "detail": "not run: reworded",
         "facts": {"not_run": False}},
    ]  # fmt: skip
    write_result(folder, result)
    cards = build_report(session).failed_cards()
    assert "hard-resume-bitwise-drift" in cards  # it ran and failed, whatever its detail says
    assert not set(cards_for("monitoring.named_phases")) & set(cards)  # it was not run


def test_a_round_rates_only_what_it_examined_and_says_what_each_card_did(tmp_path):
    session = played_round(tmp_path / "rounds")
    write_grade(session, 3, [("torn.finishes", False, "not run: the file does not compile")])
    with_answers(session, "", "")  # no question answered
    report = build_report(session)
    assert "hard-checkpoint-atomicity" not in report.failed_cards()  # its check never ran
    assert report.followup_ratings() == []
    assert "- llm-checkpoint-contents: Again when fed back (a failed check)" in to_markdown(report)

    decks = dict.fromkeys(["map-sampler-state-correctness", "llm-resume-after-crash",
                           "hard-resume-correctness", "llm-checkpoint-contents"], "d")  # fmt: skip
    kinds = {"hard-resume-correctness": NEW, "llm-checkpoint-contents": LOGGED}

    def rate(card_id: str, deck_id: str, rating: int) -> CardChange:  # the rule's outcomes
        return CardChange(card_id, rating, kinds.get(card_id, RESCHEDULED))

    lines = feed_back(session, report, rate, decks.__getitem__)
    assert lines == [
        "map-sampler-state-correctness: Again (a failed check)",
        "llm-resume-after-crash: Again (a failed check)",
        "hard-resume-correctness: new, not rated (a failed check)",
        "llm-checkpoint-contents: not due, logged only (a failed check)",
    ]
    marker = json.loads((session.folder / "feedback.json").read_text())
    assert marker["not_seen"] == ["hard-resume-correctness"]
    # issue 34: the report says per card what changed, not "(Again, ...)" on every card
    md = to_markdown(build_report(session))
    section = md[md.index("## Linked review cards") : md.index("## Notes as submitted")]
    assert [line[2:] for line in section.splitlines() if line.startswith("- ")] == lines
    assert "when fed back" not in md


def test_the_report_shows_each_phases_code_and_the_model_answers_part(tmp_path):
    clock = FakeClock()
    session = CodingSession.create(tmp_path / "rounds", now=clock)
    session.clock.start()
    session.snapshot(0)
    session.clock.advance()
    session.save(code="import torch\n# skeleton\n")
    session.snapshot(1)
    session.clock.advance()
    session.snapshot(2)  # nothing changed in the distributed phase
    session.clock.finish()
    md = to_markdown(build_report(session))
    skeleton = md.split("## Config, dataset, single-process skeleton")[1].split("\n## ")[0]
    assert "Your code when the phase ended:\n\n```python\nimport torch\n# skeleton\n```" in skeleton
    assert "The model answer's part:" in skeleton and "optimizer.step()" in skeleton
    distributed = md.split("## Distributed lift")[1].split("\n## ")[0]
    assert "- (unchanged since the previous phase)" in distributed
    assert "DistributedSampler(" in distributed and "set_epoch" in distributed
    restart = md.split("## Monitoring and restart")[1].split("\n## ")[0]
    assert "- (the phase did not end)" in restart
    assert "os.replace(tmp, final)" in restart
    assert "# phase:" not in md  # the markers are not part of what is shown


def test_code_with_a_fence_inside_stays_inside_its_block(tmp_path):
    session = played_round(tmp_path / "rounds")
    session.save(code='DOC = """\n````\n"""\n')
    md = to_markdown(build_report(session))
    assert '`````python\nDOC = """\n````\n"""\n`````' in md


def test_the_clarify_rubric_says_notebook_only_in_a_notebook_round(tmp_path):
    """issue 34: the in-app round's clarify rubric said "in a notebook"."""
    in_app = CodingSession.create(tmp_path / "app")
    notebook = CodingSession.create(tmp_path / "nb", notebook=True)
    said = 'The interviewer says: "Build a distributed training pipeline{}."'
    assert said.format("") in to_markdown(build_report(in_app))
    assert "in a notebook" not in to_markdown(build_report(in_app))
    assert said.format(" in a notebook") in to_markdown(build_report(notebook))
