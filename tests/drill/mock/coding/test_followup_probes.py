"""The next follow-up builds on the last answer (issue 37): a design choice the answer names
draws a probe quoting it; the round keeps its number of questions, never drops a failed check's
question, never asks a probe twice; the clock and the notes follow."""

from __future__ import annotations

import pytest

from drill.mock.coding.followup_clock import FollowUpClock, requote
from drill.mock.coding.followup_probes import build_on, probe_for
from drill.mock.coding.pushback import answers, question_block
from tests.support.clocks import FakeClock

FAILED = {"id": "f", "kind": "failed", "question": "Why did it start at 0?", "source_check": "x"}
WHAT_IF = {"id": "w", "kind": "what-if", "question": "What changes at W=3?", "source_check": "y"}
CODE = {"id": "c", "kind": "from-code", "question": "Which phase is slow?", "source_check": "z"}


@pytest.mark.parametrize(
    ("answer", "probe"),
    [
        ("We write a temp file and os.replace it.", "probe-rename"),
        ("the save is atomic", "probe-rename"),
        ("DCP async_save overlaps it", "probe-async-save"),
        ("set_epoch each epoch", "probe-sampler"),
        ("only rank 0 writes it", "probe-rank-zero"),
        ("an all_reduce of the flag", "probe-collective"),
        ("fully_shard per block", "probe-fsdp"),
        ("accumulate 4 micro-batches under no_sync", "probe-accumulation"),
        ("on SIGTERM set a flag", "probe-signal"),
        ("seeded so it is bit for bit", "probe-seed"),
        ("bucket by length, mask the padding", "probe-padding"),
    ],
)
def test_each_design_choice_draws_its_probe(answer: str, probe: str) -> None:
    found = probe_for(answer, set())
    assert found is not None and found["id"] == probe
    assert found["question"].startswith(f'You said: "{answer.rstrip(".")}". ')
    assert found["kind"] == "builds-on" and found["rubric"] and found["cards"]


def test_an_answer_naming_nothing_known_draws_none_and_a_probe_is_not_asked_twice() -> None:
    assert probe_for("from the newest checkpoint, then the global batch", set()) is None
    assert probe_for("", set()) is None
    found = probe_for("rank 0 saves with os.replace", {"probe-rename"})
    assert found is not None and found["id"] == "probe-rank-zero"  # the next choice it names


def test_the_quote_is_the_sentence_around_the_choice_cut_to_ninety_characters() -> None:
    long = "word " * 40
    found = probe_for(f"First point. {long}then os.replace it {long}. Last point.", set())
    assert found is not None
    said = found["evidence"]
    assert "os.replace" in said and len(said) <= 96 and said.startswith("...")
    assert "First point" not in said and "Last point" not in said
    found = probe_for("line one\nwe os.replace\tthe file", set())
    assert found is not None and found["evidence"] == "line one we os.replace the file"


def test_the_probe_takes_the_next_place_and_the_last_unfailed_question_leaves() -> None:
    questions = [FAILED, WHAT_IF, FAILED | {"id": "f2"}, CODE]
    built = build_on(questions, 1, "rank 0 saves it")
    assert built is not None
    assert [q["id"] for q in built] == ["f", "probe-rank-zero", "w", "f2"]  # CODE left out
    assert built[1]["source_check"] == "builds on Q1"
    assert questions[3] is CODE  # the input is not changed


def test_a_failed_checks_question_is_never_dropped() -> None:
    only_failed = [FAILED, FAILED | {"id": "f2"}, FAILED | {"id": "f3"}]
    assert build_on(only_failed, 1, "rank 0 saves it") is None
    after = [WHAT_IF, FAILED, FAILED | {"id": "f2"}]
    assert build_on(after, 1, "rank 0 saves it") is None  # only failed ones come after Q1


def test_the_last_answer_and_an_empty_one_draw_nothing() -> None:
    questions = [FAILED, WHAT_IF, CODE]
    assert build_on(questions, 3, "rank 0 saves it") is None
    assert build_on(questions, 1, "   ") is None


def test_the_clock_asks_the_probe_next_and_says_which_answer_drew_it() -> None:
    asked = FollowUpClock([FAILED, WHAT_IF, CODE], 120, FakeClock())
    asked.start()
    done = asked.submit("we use DistributedSampler")
    assert done is not None and asked.built_on == 1
    assert asked.question.startswith('You said: "we use DistributedSampler". ')
    assert [q["id"] for q in asked.questions] == ["f", "probe-sampler", "w"]
    asked.submit("no idea")
    assert asked.built_on is None and asked.question == WHAT_IF["question"]


def test_requote_replaces_the_heading_and_question_and_keeps_the_answer() -> None:
    questions = [FAILED, WHAT_IF, CODE]
    notes = "my notes\n\n" + question_block(questions)
    notes = notes.replace("> What changes at W=3?\n", "> What changes at W=3?\nan early answer\n")
    probe = build_on(questions, 1, "rank 0 does it")
    assert probe is not None
    changed = requote(notes, 2, probe[1])
    assert '## Q2 (builds on Q1)\n> You said: "rank 0 does it".' in changed
    assert "What changes at W=3?" not in changed
    assert answers(changed, 3)[1] == "an early answer"
    assert requote("no headings", 2, probe[1]) == "no headings"
