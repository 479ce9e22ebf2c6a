"""Helpers for the coding round's report tests (the report, the confirm, `drill mock rate`): a
played round with hand-built gradings and follow-up answers written into its notes."""

from __future__ import annotations

from pathlib import Path

from drill.mock.coding.pushback import question_block
from drill.mock.coding.session import CodingSession
from tests.support.clocks import FakeClock
from trainer_lab.grading import LAB
from trainer_lab.result import new_result, write_result


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


QUESTIONS = [
    {"id": "q-a", "kind": "failed", "question": "Why did your run start at step 0?",
     "rubric": ["saved optimizer state", "resume from the newest checkpoint"],
     "cards": ["card-a", "card-shared"], "source_check": "restart.resumes_at_checkpoint",
     "evidence": "restarted at step 0"},
    {"id": "q-b", "kind": "what-if", "question": "What if W=3 on restart?",
     "rubric": ["sampler position", "global batch changes", "learning rate"],
     "cards": ["card-b", "card-shared"], "source_check": "distributed.exactly_once",
     "evidence": ""},
    {"id": "q-c", "kind": "what-if", "question": "Which phase shows a straggler?",
     "rubric": ["backward phase"], "cards": ["card-c"], "source_check": "monitoring.x",
     "evidence": ""},
]  # fmt: skip


def with_answers(session: CodingSession, first: str, second: str) -> None:
    session.pushback = session.pushback or [dict(q) for q in QUESTIONS]
    block = question_block(session.pushback)
    block = block.replace("step 0?\n\n", f"step 0?\n{first}\n", 1)
    block = block.replace("W=3 on restart?\n\n", f"W=3 on restart?\n{second}\n", 1)
    session.save(notes="Ask about GPU availability. Use DistributedSampler with set_epoch.\n\n"
                 + block)  # fmt: skip
