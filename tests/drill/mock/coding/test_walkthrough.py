"""The model answer split by the round's phases (its `# phase:` comments) with a walk-through
per phase, for the coding round's report."""

from __future__ import annotations

from drill.mock.coding import model_answer_source
from drill.mock.coding.session import CODING_PHASES
from drill.mock.coding.walkthrough import ELISION, WALKTHROUGH, model_part, split_by_phase


def test_every_line_of_the_model_answer_is_in_exactly_one_phase_part():
    source = model_answer_source()
    parts = split_by_phase(source)
    assert set(parts) == {"skeleton", "distributed", "restart"}
    shown = [line for part in parts.values() for line in part.splitlines()
             if line.strip() and line.strip() != ELISION]  # fmt: skip
    start = source.index("# phase:")
    code = [line for line in source[start:].splitlines()
            if line.strip() and not line.lstrip().startswith("# phase:")]  # fmt: skip
    assert sorted(shown) == sorted(code)


def test_each_phase_part_holds_what_that_phase_builds():
    skeleton, distributed, restart = (model_part(p).code for p in ("skeleton", "distributed",
                                                                     "restart"))  # fmt: skip
    assert "loss.backward()" in skeleton and "def parse_args" in skeleton
    assert "DistributedSampler(" in distributed and "init_process_group" in distributed
    assert "DistributedDataParallel(model)" in distributed
    assert "os.replace(tmp, final)" in restart and "def load_latest_checkpoint" in restart
    assert '"phases": phases' in restart  # monitoring is the restart phase's too
    assert "DistributedSampler(" not in skeleton and "torch.save" not in distributed


def test_parts_not_adjacent_in_the_file_are_elided_and_every_phase_has_a_walkthrough():
    text = "# phase: a\nx = 1\n# phase: b\ny = 2\n# phase: a\n    z = 3\n"
    assert split_by_phase(text) == {"a": "x = 1\n    ...\n    z = 3\n", "b": "y = 2\n"}
    for phase in CODING_PHASES:
        assert len(WALKTHROUGH[phase.id]) > 80, phase.id
    assert model_part("clarify").code == "" and model_part("clarify").walkthrough
