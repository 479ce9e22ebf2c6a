"""The mutator (benchmarks/mutator.py): its operators, its determinism, that it never writes over
the file it mutates, and (lab tier) that a fixed sample of mutants of the model answers is still
killed by the check that killed it when benchmarks/RESULTS-mutants.md was written."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from benchmarks.mutator import OPERATORS, compile_error, find, mutants, sample, write

SOURCE = '''\
"""A module docstring: never mutated."""

import torch.distributed as dist


def f(a: int, b: int = 3) -> bool:
    """A docstring."""
    total = a + b * 2  # a comment that survives
    total /= 4
    if a < b and not total == 0:
        return True
    dist.all_reduce(total)
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    dist.broadcast(total, src=owner)
    with lock():
        pass
    return total - 1
'''


def descriptions(source: str = SOURCE) -> set[tuple[str, str, str]]:
    return {(m.operator, m.before, m.description) for m in mutants(source)}


@pytest.mark.parametrize(
    ("operator", "line", "description", "after"),
    [
        ("compare", "if a < b and not total == 0:", "< -> <=", "if a <= b and not total == 0:"),
        ("compare", "if a < b and not total == 0:", "== -> !=", "if a < b and not total != 0:"),
        (
            "arith",
            "total = a + b * 2  # a comment that survives",
            "+ -> -",
            "total = a - b * 2  # a comment that survives",
        ),
        (
            "arith",
            "total = a + b * 2  # a comment that survives",
            "* -> /",
            "total = a + b / 2  # a comment that survives",
        ),
        ("arith", "total /= 4", "/= -> *=", "total *= 4"),
        ("boolean", "if a < b and not total == 0:", "and -> or", "if a < b or not total == 0:"),
        ("boolean", "if a < b and not total == 0:", "not x -> x", "if a < b and total == 0:"),
        ("constant", "total /= 4", "4 -> 5", "total /= 5"),
        ("constant", "if a < b and not total == 0:", "0 -> 1", "if a < b and not total == 1:"),
        ("constant", "return True", "True -> False", "return False"),
        ("delete", "total /= 4", "augassign statement -> pass", "pass"),
        ("return_none", "return total - 1", "return x -> return None", "return None"),
        (
            "keyword",
            "dist.all_reduce(total, op=dist.ReduceOp.SUM)",
            "drop op=",
            "dist.all_reduce(total)",
        ),
        (
            "collective",
            "dist.all_reduce(total, op=dist.ReduceOp.SUM)",
            "ReduceOp.SUM -> ReduceOp.MAX",
            "dist.all_reduce(total, op=dist.ReduceOp.MAX)",
        ),
        (
            "collective",
            "dist.all_reduce(total)",
            "all_reduce: op= -> ReduceOp.MAX",
            "dist.all_reduce(total, op=dist.ReduceOp.MAX)",
        ),
        (
            "collective",
            "dist.broadcast(total, src=owner)",
            "broadcast: src= -> 0",
            "dist.broadcast(total, src=0)",
        ),
        (
            "context",
            "with lock():",
            "with cm -> with nullcontext()",
            "with __import__('contextlib').nullcontext():",
        ),
    ],
)
def test_each_operator_makes_its_mutant_in_place_of_one_node(
    operator: str, line: str, description: str, after: str
) -> None:
    found = [m for m in mutants(SOURCE) if (m.operator, m.before, m.description) ==
             (operator, line, description)]  # fmt: skip
    assert len(found) == 1, sorted(descriptions())
    m = found[0]
    assert m.after == after
    # one line changed, the rest (comments, docstrings, layout) exactly as written
    pairs = zip(SOURCE.splitlines(), m.source.splitlines(), strict=True)
    changed = [i for i, (x, y) in enumerate(pairs) if x != y]
    assert [i + 1 for i in changed] == [m.line]
    assert compile_error(m.source) is None


def test_every_operator_is_exercised_by_the_sample_source() -> None:
    assert {m.operator for m in mutants(SOURCE)} == set(OPERATORS)


def test_docstrings_annotations_and_imports_are_left_alone() -> None:
    for m in mutants(SOURCE):
        assert "docstring" not in m.before and not m.before.startswith("import ")
    # a default is behaviour (mutated); an annotation is not
    src = "def g(x: int = 3) -> int:\n    return x\n"
    found = {(m.operator, m.description) for m in mutants(src)}
    assert found == {("constant", "3 -> 4"), ("return_none", "return x -> return None")}


def test_a_return_of_none_and_pass_are_not_mutated_into_themselves() -> None:
    src = "def g(x):\n    if x:\n        return None\n    pass\n"
    found = {(m.before, m.description) for m in mutants(src)}
    assert ("return None", "return statement -> pass") in found  # deleting an early return
    assert all(d != "return x -> return None" for _, d in found)
    assert all(b != "pass" for b, _ in found)


def test_the_enumeration_is_deterministic_and_indexed_in_file_order() -> None:
    first, second = mutants(SOURCE), mutants(SOURCE)
    assert first == second
    assert [m.index for m in first] == list(range(len(first)))
    assert [m.line for m in first] == sorted(m.line for m in first)
    assert len({m.source for m in first}) == len(first)  # no two mutants alike
    for m in first:
        assert m.source != SOURCE
        assert ast.dump(ast.parse(m.source)) != ast.dump(ast.parse(SOURCE))


def test_sample_is_seeded_ordered_and_bounded() -> None:
    every = mutants(SOURCE)
    a, b = sample(every, 5, seed=3), sample(every, 5, seed=3)
    assert a == b and len(a) == 5
    assert [m.index for m in a] == sorted(m.index for m in a)
    assert sample(every, 5, seed=4) != a
    assert sample(every, None) == every == sample(every, len(every) + 10)


def test_find_by_key_survives_edits_elsewhere_and_fails_loudly_when_gone() -> None:
    m = mutants(SOURCE)[7]
    shifted = "# a new first line\n" + SOURCE
    again = find(mutants(shifted), m.key)
    assert (again.line, again.description) == (m.line + 1, m.description)
    with pytest.raises(LookupError, match="pick again"):
        find(mutants("x = 1\n"), m.key)


def test_a_mutant_that_does_not_compile_is_reported_not_raised() -> None:
    assert compile_error("def f(:\n") is not None
    assert compile_error("x = 1\n") is None
    # `nonlocal` with no enclosing binding is a compile-time (not parse-time) error
    assert compile_error("def f():\n    nonlocal y\n") is not None


def test_mutating_never_writes_the_original(tmp_path: Path) -> None:
    original = tmp_path / "solution.py"
    original.write_text(SOURCE)
    before = original.stat().st_mtime_ns
    every = mutants(original.read_text())
    out = write(every[0], tmp_path / "mutant", "solution.py")
    assert out == tmp_path / "mutant" / "solution.py" and out.read_text() == every[0].source
    assert original.read_text() == SOURCE and original.stat().st_mtime_ns == before


def test_every_model_answer_has_mutants_and_all_of_them_compile() -> None:
    from trainer_lab.exercises.catalogue import EXERCISES
    from trainer_lab.grading import model_answer_source

    sources = {n: s.solution_path.read_text() for n, s in EXERCISES.items()}
    sources["coding-round"] = model_answer_source()
    for name, source in sources.items():
        found = mutants(source)
        assert found, name
        assert all(compile_error(m.source) is None for m in found), name


def test_every_round_prompts_model_answer_has_mutants_that_compile() -> None:
    from trainer_lab.grading.prompts import PROMPT_IDS, get_prompt

    for name in PROMPT_IDS:
        found = mutants(get_prompt(name).model_answer())
        assert found, name
        assert all(compile_error(m.source) is None for m in found), name


def test_mutants_script_lists_a_seeded_sample_of_the_chosen_prompts_model_answer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from benchmarks.mutants import main
    from trainer_lab.grading.prompts import get_prompt

    every = mutants(get_prompt("biotech").model_answer())
    assert main(["--prompt", "biotech", "--sample", "3", "--seed", "1", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"== coding-round-biotech: 3 of {len(every)} mutants"
    assert lines[1:] == [f"  {m.describe()}  =>  {m.after}" for m in sample(every, 3, 1)]
    with pytest.raises(SystemExit):
        main(["--prompt", "nope", "--list"])
    with pytest.raises(SystemExit):  # a phase of another prompt
        main(["--prompt", "eval", "--phases", "restart", "--list"])


def test_a_prompts_mutant_is_graded_by_that_prompts_grader_on_its_phases(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from types import SimpleNamespace

    import trainer_lab.grading.prompts as prompts
    from benchmarks.mutants import run_coding

    calls: list[tuple[str, tuple[str, ...], int | None, str]] = []
    failing = {"name": "masks.no_padding_in_loss", "passed": False, "detail": "pad  reached"}

    def fake(name: str) -> SimpleNamespace:
        def grade(script: Path, out_dir: Path, phases: tuple[str, ...], seed=None, **_: object):
            calls.append((name, phases, seed, script.read_text()))
            checks = [failing] if "BAD" in script.read_text() else []
            return SimpleNamespace(status="failed" if checks else "ok", checks=checks)

        return SimpleNamespace(grade=grade)

    monkeypatch.setattr(prompts, "get_prompt", fake)
    good, bad = mutants("x = 1\ny = 'OK'\n"), mutants("x = 1\ny = 'BAD'\n")
    survived = run_coding(good[0], ("masks",), None, "coding-round-biotech", "biotech", 5)
    killed = run_coding(bad[0], ("masks", "split"), None, "coding-round-biotech", "biotech", 5)
    assert [c[:3] for c in calls] == [
        ("biotech", ("masks",), 5),
        ("biotech", ("masks", "split"), 5),
    ]
    assert calls[0][3] == good[0].source  # the mutant, not the model answer, is graded
    assert (survived.verdict, killed.verdict) == ("survived", "killed")
    assert killed.by == ["masks.no_padding_in_loss"] and killed.detail == "pad reached"


# ---- lab tier: a fixed sample of mutants of the model answers, each still killed ---------------

# (exercise, Mutant.key, a check that failed on it in the run recorded in
# benchmarks/RESULTS-mutants.md). One per exercise, each killed by what the check observes (not
# by a crash), picked among the quick ones. A check that stops catching its mutant fails here.
STILL_KILLED = [
    ("activation-checkpointing",
     "return_none: return checkpoint(self.block, x, use_reentrant=False) :: "
     "return x -> return None",
     "same_gradients"),
    ("atomic-checkpoint", "delete: os.replace(tmp, final) :: expr statement -> pass", "roundtrip"),
    ("bucketed-allreduce",
     "boolean: if self.bucket and self.size + nbytes > self.bucket_bytes: :: and -> or",
     "bucket_count"),
    ("ddp-by-hand", "arith: p.grad /= world :: /= -> *=", "matches_reference"),
    ("first-nan", "delete: h.remove() :: expr statement -> pass", "hooks_removed"),
    ("fix-hang", "collective: dist.all_reduce(total) :: all_reduce: op= -> ReduceOp.MAX",
     "uses_the_mean"),
    ("fsdp-per-block", "delete: fully_shard(block, mesh=mesh) :: expr statement -> pass",
     "one_block_at_a_time"),
    ("full-state-checkpoint",
     'delete: random.setstate(state["python_rng"]) :: expr statement -> pass', "losses_match"),
    ("grad-accum-no-sync",
     "context: with contextlib.nullcontext() if last else ddp_model.no_sync(): :: "
     "with cm -> with nullcontext()", "one_allreduce_per_step"),
    ("grad-scaler",
     'context: with torch.autocast("cpu", dtype=torch.float16): :: with cm -> with nullcontext()',
     "skips_overflow"),
    ("phase-timing", "delete: torch.cuda.synchronize(self.device) :: expr statement -> pass",
     "waits_for_the_device"),
    ("rank0-logging",
     'arith: print(f"step {step} loss {total.item() / dist.get_world_size():.4f}") :: / -> *',
     "mean_over_ranks"),
    ("resumable-sampler", "constant: self.consumed = 0 :: 0 -> 1", "no_skip"),
    ("sampler-partition",
     'delete: loader_state["sampler"].set_epoch(epoch) :: expr statement -> pass', "new_order"),
    ("uneven-join", "context: with Join([ddp_model]): :: with cm -> with nullcontext()", "no_hang"),
    ("zero1-sharded-optimizer",
     "collective: dist.broadcast(p.data, src=owner) :: broadcast: src= -> 0", "matches_adam"),
]  # fmt: skip


def test_the_lab_sample_covers_every_exercise_and_names_real_checks() -> None:
    from trainer_lab.exercises.catalogue import EXERCISES

    assert {name for name, _, _ in STILL_KILLED} == set(EXERCISES)
    for name, key, check in STILL_KILLED:
        spec = EXERCISES[name]
        assert check in spec.check_names(), (name, check)
        find(mutants(spec.solution_path.read_text()), key)  # the model answer still has it


@pytest.mark.lab
@pytest.mark.parametrize(
    ("name", "key", "check"), STILL_KILLED, ids=[n for n, _, _ in STILL_KILLED]
)
def test_a_sampled_mutant_of_the_model_answer_is_still_killed(
    name: str, key: str, check: str, tmp_path: Path
) -> None:
    from trainer_lab.exercises.catalogue import EXERCISES
    from trainer_lab.exercises.runner import check_exercise

    spec = EXERCISES[name]
    original = spec.solution_path.read_text()
    mutant = find(mutants(original), key)
    path = write(mutant, tmp_path / "mutant", spec.file)
    result = check_exercise(spec, path, tmp_path / "out")
    details = {c["name"]: c["detail"] for c in result["checks"]}
    failing = {c["name"] for c in result["checks"] if not c["passed"]}
    assert result["status"] == "failed", f"{mutant.describe()} survived: {details}"
    assert check in failing, f"{mutant.describe()}: {check} no longer fails: {details}"
    assert spec.solution_path.read_text() == original  # mutated in a copy, never in place
