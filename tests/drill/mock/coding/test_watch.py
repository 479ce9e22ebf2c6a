"""drill.mock.coding.watch: a coding round's clock without a screen, on a fake clock and a fake
grader (the real grader is trainer_lab's; here it records what it was asked to grade and the code it
would have run)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest

from drill.mock.clock import Status
from drill.mock.coding.session import CODING_PHASES, CodingSession
from drill.mock.coding.watch import RoundWatch, verdict_lines
from tests.support.clocks import FakeClock
from tests.support.coding_grader import broken_replay_facts


class FakeGrader:
    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[tuple[str, ...], str, Path]] = []
        self.fail = fail

    def __call__(self, script: Path, out_dir: Path, phases: tuple[str, ...]) -> dict:
        self.calls.append((phases, script.read_text(), out_dir))
        if self.fail:
            raise RuntimeError("the harness broke")
        checks = [{"name": f"{p}.ok", "passed": p != "distributed", "detail": f"{p} ran"}
                  for p in phases]  # fmt: skip
        return {"checks": checks}


def touch(path: Path, text: str, tick: int) -> None:
    """Write and give the file a new modification time (filesystems keep coarse times)."""
    path.write_text(text)
    stamp = 1_700_000_000 + tick
    os.utime(path, (stamp, stamp))


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def new_watch(tmp_path, clock, *, notebook=False, grader=None, fed=None):
    session = CodingSession.create(tmp_path / "rounds", notebook=notebook, now=clock)
    grader = grader or FakeGrader()
    watch = RoundWatch(
        session, grade=grader, feed_back=(lambda s: fed.append(s.round_id) or ["card-a"])
        if fed is not None else None,
    )  # fmt: skip
    return watch, grader


def test_the_clock_starts_and_the_status_line_says_phase_and_time_left(tmp_path, clock):
    watch, _ = new_watch(tmp_path, clock)
    lines = watch.start()
    assert lines[0] == f"Started coding round 1: {tmp_path / 'rounds' / '1'}"
    assert "ctrl+c pauses the clock" in lines[1]
    assert watch.status_line() == ("Phase 1/5 Clarify assumptions · 5:00 left · total 55:00 left")
    clock.advance(75)
    assert watch.step() == []
    assert watch.status_line() == "Phase 1/5 Clarify assumptions · 3:45 left · total 53:45 left"
    assert watch.status_line(seconds=False) == (
        "Phase 1/5 Clarify assumptions · 3 min left · total 53 min left"
    )


def test_each_save_is_seen_and_a_phase_end_grades_that_phase(tmp_path, clock):
    watch, grader = new_watch(tmp_path, clock)
    watch.start()
    touch(watch.session.script, "print('v1')\n", 1)
    assert watch.step() == ["Saved: train.py (1 lines)"]
    assert watch.step() == []  # no new save, no new line

    clock.advance(5 * 60)  # clarify is over: nothing of it is graded
    assert watch.step() == ["Phase 1 ended: Clarify assumptions"]
    assert grader.calls == []

    touch(watch.session.script, "print('v2')\nprint('skeleton')\n", 2)
    clock.advance(10 * 60)  # the skeleton phase's time is up
    lines = watch.step()
    assert lines[0] == "Saved: train.py (2 lines)"
    assert lines[1:4] == [
        "Phase 2 ended: Config, dataset, single-process skeleton",
        "Grading skeleton ...",
        "  PASS  skeleton.ok  skeleton ran",
    ]
    assert lines[-1] == "  1/1 checks hold"
    ((phases, code, out_dir),) = grader.calls
    assert phases == CODING_PHASES[1].grades == ("skeleton",)
    assert code == "print('v2')\nprint('skeleton')\n"  # the code as saved when the phase ended
    assert out_dir == watch.session.folder / "grades" / "1"
    assert watch.session.phase_code("skeleton") == code  # kept for the report
    assert watch.status_line().startswith("Phase 3/5 Distributed lift · 15:00 left")


def test_the_round_end_grades_everything_once_and_feeds_back(tmp_path, clock):
    fed: list[int] = []
    watch, grader = new_watch(tmp_path, clock, fed=fed)
    watch.start()
    clock.advance(3600)  # a laptop asleep past the end: every phase ends at once
    lines = watch.step()
    assert [line for line in lines if line.startswith("Phase ")] == [
        f"Phase {i + 1} ended: {p.title}" for i, p in enumerate(CODING_PHASES)
    ]
    assert "Time is up: the round is over: all checks run now." in lines
    assert [call[0] for call in grader.calls] == [CODING_PHASES[-1].grades]  # one grading
    assert "  FAIL  distributed.ok  distributed ran" in lines
    assert lines[-2:] == ["Fed back to review:", "  card-a"] and fed == [1]
    assert watch.finished and watch.status_line() == "Round over (time)"


def test_pause_saves_the_clock_for_a_later_watch(tmp_path, clock):
    watch, _ = new_watch(tmp_path, clock)
    watch.start()
    clock.advance(90)
    watch.step()
    watch.pause()
    clock.advance(1000)  # paused: not charged
    again = CodingSession(watch.session.folder, now=clock)
    assert again.clock.status is Status.PAUSED
    assert again.clock.total_used_s() == 90
    resumed = RoundWatch(again, grade=FakeGrader())
    assert resumed.start()[0].startswith("Resumed coding round 1")
    assert resumed.status_line().startswith("Phase 1/5 Clarify assumptions · 3:30 left")


def test_a_notebook_round_reads_each_save_of_the_notebook(tmp_path, clock):
    watch, grader = new_watch(tmp_path, clock, notebook=True)
    notebook_path = watch.session.notebook_path
    assert watch.watched == notebook_path
    watch.start()
    notebook = nbformat.read(notebook_path, as_version=4)
    cell = next(c for c in notebook.cells if c.source.startswith("%%writefile train.py"))
    cell.source = "%%writefile train.py\nprint('from the notebook')"
    nbformat.write(notebook, notebook_path)
    os.utime(notebook_path, (1_700_000_100, 1_700_000_100))
    assert watch.step() == ["Saved: round.ipynb -> train.py (1 lines)"]
    assert watch.session.code() == "print('from the notebook')\n"

    notebook_path.write_text("{not json")
    os.utime(notebook_path, (1_700_000_200, 1_700_000_200))
    (line,) = watch.step()
    assert line.startswith("Saved: round.ipynb, but not read:") and "not JSON" in line
    clock.advance(15 * 60)  # the skeleton phase ends: the last train.py read is graded
    lines = watch.step()
    assert any(line.startswith("Notebook not read:") for line in lines)
    assert grader.calls[0][1] == "print('from the notebook')\n"


def test_a_grader_failure_is_a_line_and_the_clock_goes_on(tmp_path, clock):
    watch, _ = new_watch(tmp_path, clock, grader=FakeGrader(fail=True))
    watch.start()
    clock.advance(15 * 60)
    lines = watch.step()
    assert lines[-1] == "Grading failed: RuntimeError: the harness broke"
    assert watch.session.clock.phase == 2 and not watch.finished


def test_verdict_lines_show_text_never_control_bytes():
    result = {"checks": [{"name": "x.ok", "passed": False, "detail": "rank 1 said \x1b[2J hi"}]}
    lines = verdict_lines(result)
    assert "\x1b" not in "".join(lines)
    assert lines[-1] == "  0/1 checks hold"


FIXTURES = Path(__file__).resolve().parent / "fixtures"


class SavedGrader:
    """grade() writing a grading saved from a real one (its checks of the phases asked for) where
    the grader writes it, with the workspace copy of the script it ran."""

    def __init__(self, name: str = "sampler-position-not-saved") -> None:
        self.name = name
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, script: Path, out_dir: Path, phases: tuple[str, ...]) -> dict:
        self.calls.append(tuple(phases))
        result = json.loads((FIXTURES / f"followups-{self.name}.json").read_text())
        result["checks"] = [c for c in result["checks"] if c["name"].split(".")[0] in phases]
        (out_dir / "workspace").mkdir(parents=True)
        (out_dir / "workspace" / "train.py").write_text(script.read_text())
        (out_dir / "result.json").write_text(json.dumps(result))
        return result


PUSHBACK_AT_S = sum(p.minutes for p in CODING_PHASES[:-1]) * 60 + 1
ALL = CODING_PHASES[-1].grades


def test_pushback_grades_everything_and_asks_follow_ups_in_the_notes(tmp_path, clock):
    grader = SavedGrader()
    watch, _ = new_watch(tmp_path, clock, grader=grader)
    watch.start()
    watch.session.save(notes="clarify: 2 GPUs")
    clock.advance(PUSHBACK_AT_S)
    lines = watch.step()
    assert "Pushback: grading everything; the follow-up questions come from it." in lines
    assert grader.calls == [ALL]  # one grading, of every phase
    assert ("The interviewer asks (from your grading's evidence), one question at a time, "
            "3:00 each:") in lines  # fmt: skip
    asked = [line for line in lines if line.startswith("Q")]
    assert len(asked) == 1 and asked[0].startswith("Q1. ")  # issue 37: one at a time
    assert 3 <= len(watch.session.pushback) <= 5
    fetched, step, _ = broken_replay_facts()
    assert f"fetched {fetched} for step {step}" in asked[0]  # its evidence
    notes = watch.session.notes()
    assert notes.startswith("clarify: 2 GPUs\n\n## Q1 (")
    assert notes.count("## Q") == len(watch.session.pushback)  # every heading, to answer under
    assert lines[-1] == f"Answer each under its ## Q heading in {watch.session.notes_path}"
    assert watch.status_line().endswith(" · Q1 3:00 left")

    # an answer saved under Q1's heading: Q2 is asked, on a fresh clock; the answer names a
    # design choice, so Q2 builds on it (followup_probes), kept in the round and in notes.md
    clock.advance(100)
    count = len(watch.session.pushback)
    answer = "We resume the sampler at its offset"
    watch.session.save(notes=watch.session.notes().replace("\n\n## Q2", f"\n{answer}\n\n## Q2"))
    lines = watch.step()
    assert lines[0] == "Answer to Q1 saved. Q2 builds on that answer."
    assert lines[1].startswith(f'Q2. You said: "{answer}". What does DistributedSampler do')
    assert watch.session.pushback[1]["id"] == "probe-sampler"
    assert len(watch.session.pushback) == count  # the last question not about a failure left
    again = CodingSession(watch.session.folder, now=clock)  # a resume asks the same
    assert [q["id"] for q in again.pushback] == [q["id"] for q in watch.session.pushback]
    notes = watch.session.notes()
    assert f'## Q2 (builds on Q1)\n> You said: "{answer}".' in notes
    assert "## Q1 (" in notes and answer in notes  # the answer to Q1 is as it was written
    assert watch.status_line().endswith(" · Q2 3:00 left")
    clock.advance(180)  # nothing written in time: the next question, and no probe
    lines = watch.step()
    assert lines[0] == "Time is up for Q2." and lines[1].startswith("Q3. ")
    assert not lines[1].startswith("Q3. You said")


def test_a_notebook_rounds_follow_ups_are_a_cell_of_the_notebook_alone(tmp_path, clock):
    watch, _ = new_watch(tmp_path, clock, notebook=True, grader=SavedGrader())
    start = watch.start()
    clock.advance(PUSHBACK_AT_S)
    lines = watch.step()
    path = watch.session.notebook_path
    cell = nbformat.read(path, as_version=4).cells[-1]
    assert cell.cell_type == "markdown"
    assert cell.source.count("\n## Q") == len(watch.session.pushback) >= 3
    assert watch.session.notes_file() == ""  # notes.md is not a second place
    assert lines[-1] == (
        f"Answer each under its ## Q heading in the notebook's Follow-up questions cell "
        f"(its last): {path}"
    )
    assert not any("notes.md" in line for line in start + lines)
    assert "## Q1 (" in watch.session.notes()  # the answers are read from there


def test_the_end_reuses_the_pushback_grading_when_train_py_is_unchanged(tmp_path, clock):
    grader = SavedGrader()
    watch, _ = new_watch(tmp_path, clock, grader=grader)
    watch.start()
    clock.advance(PUSHBACK_AT_S)
    watch.step()
    clock.advance(15 * 60)  # the round's end, train.py as the pushback grading ran it
    lines = watch.step()
    assert grader.calls == [ALL]  # not run again
    assert "train.py is unchanged since grading 1: its verdicts stand." in lines
    # issue 34: the end does not claim that all checks run beside "its verdicts stand"
    over = "Time is up: the round is over: train.py is unchanged since grading 1, so its"
    assert f"{over} verdicts stand." in lines
    assert not any("all checks run now" in line for line in lines)
    assert any(line.startswith("  FAIL  restart.no_replay_or_skip") for line in lines)
    assert watch.finished


def test_the_end_grades_again_when_train_py_changed_since_the_pushback(tmp_path, clock):
    grader = SavedGrader()
    watch, _ = new_watch(tmp_path, clock, grader=grader)
    watch.start()
    clock.advance(PUSHBACK_AT_S)
    watch.step()
    touch(watch.session.script, watch.session.code() + "# fixed the sampler\n", 5)
    clock.advance(15 * 60)
    lines = watch.step()
    assert grader.calls == [ALL, ALL]
    assert not any("unchanged since" in line for line in lines)


def test_a_stretch_phase_saved_mid_way_runs_on_in_the_watch(tmp_path, clock):
    from drill.mock.coding.stretch import Stretch

    session = CodingSession.create(tmp_path / "rounds", now=clock, minutes=55)
    session.clock.start()
    session.clock.finish()
    stretch = Stretch.start(session, "accum")
    clock.advance(60)
    stretch.clock.pause()
    stretch.save()  # left mid-way: 9 minutes to go

    again = CodingSession.latest_unfinished(tmp_path / "rounds", now=clock)
    grader = FakeGrader()
    watch = RoundWatch(again, grade=grader)
    assert not watch.finished
    assert watch.start()[0].startswith("Resumed stretch phase Gradient accumulation")
    assert watch.status_line() == "Stretch: Gradient accumulation with no_sync · 9:00 left"
    clock.advance(9 * 60 + 1)
    lines = watch.step()
    assert lines[:2] == [
        "Stretch phase over: Gradient accumulation with no_sync",
        "Grading accum ...",
    ]
    assert [call[0] for call in grader.calls] == [("accum",)]
    assert watch.finished
    assert not CodingSession(again.folder).in_stretch


def test_stretch_phases_chosen_up_front_run_after_the_round_in_their_order(tmp_path, clock):
    from drill.mock.coding.stretch import choose

    watch, grader = new_watch(tmp_path, clock)
    choose(watch.session, ["throughput", "accum"])
    watch.session.save()
    watch.start()
    clock.advance(55 * 60 + 1)  # the round's time is up
    lines = watch.step()
    assert "Time is up: the round is over: all checks run now." in lines
    assert any(line.startswith("Stretch phase (chosen up front): A throughput") for line in lines)
    assert not watch.finished and watch.status_line().startswith("Stretch: A throughput target")
    clock.advance(10 * 60 + 1)
    lines = watch.step()
    assert lines[0] == "Stretch phase over: A throughput target in samples/s"
    assert any(line.startswith("Stretch phase (chosen up front): Gradient accum") for line in lines)
    clock.advance(10 * 60 + 1)
    watch.step()
    assert watch.finished
    assert [c[0] for c in grader.calls][-2:] == [("throughput",), ("accum",)]


def test_verdict_lines_give_a_shared_reason_once_then_the_checks_it_affects():
    from tests.support.coding import HANG, hung_grading

    lines = verdict_lines(hung_grading())
    assert sum(HANG in line for line in lines) == 1
    assert lines[:2] == [
        f"  reason 1: run w2: {HANG}",
        "    affects 3 checks: distributed.exactly_once, distributed.new_order, "
        "monitoring.named_phases",
    ]
    assert "  FAIL  distributed.new_order     W=2: reason 1" in lines
    assert lines[-1] == "  1/4 checks hold"
