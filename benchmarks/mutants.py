"""Mutation testing of the graders: mutants of each model answer, each run through the real check.

    python benchmarks/mutants.py [--exercise NAME ...] [--coding] [--prompt NAME ...]
                                 [--stretch PHASE ...] [--sample N] [--seed S]
                                 [--jobs N] [--timeout S] [--phases a,b] [--json FILE] [--list]

With no --exercise and no --coding, every exercise is run (not the coding round). Mutants come
from trainer_lab.mutants (an AST mutator: see its docstring for the operators and for why not
mutmut or cosmic-ray). Each mutant is written to a fresh temporary directory, never over the
model answer, and checked the way `drill exercise check` checks a user's file
(trainer_lab.exercises.runner.check_exercise), or, for --coding, graded the way `drill mock
grade` grades a train.py (trainer_lab.grading.grade, on --phases, every phase by default), or,
for --stretch PHASE, that stretch phase's model answer graded on that phase alone. --prompt NAME
(eval, fsdp2, preemption, biotech, ddp; implies --coding, whose default is ddp) mutates that
round prompt's model answer (trainer_lab.grading.prompts) and grades each mutant with that
prompt's own grader on its phases (--phases, every phase of the prompt by default). The grading's
fault plan and data are drawn from --seed, so a run is repeatable.

Verdicts: killed (some check failed: the first failing check is named, with its detail),
survived (every check passed: either an equivalent mutant or a missing check), invalid (does not
compile: not run, not counted as killed). --sample N draws N mutants per target with
random.Random(--seed), in file order; --list prints the mutants without running anything.
Kill rate = killed / (killed + survived). Exit status 1 if a target is under 90 %.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.mutator import Mutant, compile_error, mutants, sample
from trainer_lab.exercises.catalogue import EXERCISES

CODING = "coding-round"  # the ddp prompt's target; another prompt's is CODING + "-" + its id
STRETCH = "stretch-"  # + a stretch phase: its model answer, graded on that phase
TARGET = 0.90


@dataclass
class Verdict:
    target: str
    index: int
    key: str
    line: int
    operator: str
    description: str
    before: str
    after: str
    verdict: str  # killed | survived | invalid | error
    by: list[str] = field(default_factory=list)  # the failing checks, in check order
    detail: str = ""  # the first failing check's detail (or why invalid)
    seconds: float = 0.0


def _verdict(target: str, m: Mutant, verdict: str, **kw) -> Verdict:
    return Verdict(
        target, m.index, m.key, m.line, m.operator, m.description, m.before, m.after, verdict, **kw
    )


def run_exercise(name: str, m: Mutant, timeout_s: float | None) -> Verdict:
    from trainer_lab.exercises.runner import check_exercise

    spec = EXERCISES[name]
    bad = compile_error(m.source, spec.file)
    if bad:
        return _verdict(name, m, "invalid", detail=bad)
    with tempfile.TemporaryDirectory(prefix="mutant-") as tmp:
        path = Path(tmp) / "src" / spec.file
        path.parent.mkdir()
        path.write_text(m.source)
        start = time.monotonic()
        result = check_exercise(spec, path, Path(tmp) / "out", timeout_s=timeout_s)
        seconds = time.monotonic() - start
    return _judge(name, m, result["status"], result["checks"], seconds)


def run_coding(
    m: Mutant,
    phases: tuple[str, ...],
    timeout_s: float | None,
    target: str = CODING,
    prompt: str = "ddp",
    seed: int | None = None,
) -> Verdict:
    """Grade the mutant as `prompt`'s train.py on `phases` (the grading's draws from `seed`)."""
    from trainer_lab.grading.prompts import get_prompt

    options = {"timeout_s": timeout_s} if timeout_s else {}
    bad = compile_error(m.source, "train.py")
    if bad:
        return _verdict(target, m, "invalid", detail=bad)
    with tempfile.TemporaryDirectory(prefix="mutant-") as tmp:
        path = Path(tmp) / "src" / "train.py"
        path.parent.mkdir()
        path.write_text(m.source)
        start = time.monotonic()
        grading = get_prompt(prompt).grade(path, Path(tmp) / "out", phases, seed=seed, **options)
        seconds = time.monotonic() - start
    return _judge(target, m, grading.status, grading.checks, seconds)


def _judge(target: str, m: Mutant, status: str, checks: list, seconds: float) -> Verdict:
    failing = [c for c in checks if not c["passed"]]
    if status == "ok" and not failing:
        return _verdict(target, m, "survived", seconds=seconds)
    if status not in ("ok", "failed") or not failing:
        return _verdict(target, m, "error", detail=f"status {status}", seconds=seconds)
    detail = " ".join(failing[0]["detail"].split())
    return _verdict(
        target, m, "killed", by=[c["name"] for c in failing], detail=detail[:240], seconds=seconds
    )


def prompt_target(prompt: str) -> str:
    return CODING if prompt == "ddp" else f"{CODING}-{prompt}"


def prompt_of(target: str) -> str | None:
    """The round prompt a target mutates (None for an exercise or a stretch phase)."""
    if target == CODING:
        return "ddp"
    return target.removeprefix(CODING + "-") if target.startswith(CODING + "-") else None


def source_of(target: str) -> str:
    prompt = prompt_of(target)
    if prompt is not None:
        from trainer_lab.grading.prompts import get_prompt

        return get_prompt(prompt).model_answer()
    if target.startswith(STRETCH):
        from trainer_lab.grading import stretch_model_answer

        return stretch_model_answer(target.removeprefix(STRETCH))
    return EXERCISES[target].solution_path.read_text()


def show(v: Verdict) -> str:
    head = f"{v.target} #{v.index} line {v.line} [{v.operator}] {v.description}"
    if v.verdict == "killed":
        tail = f"KILLED by {v.by[0]}" + (f" (+{len(v.by) - 1})" if len(v.by) > 1 else "")
        tail += f" in {v.seconds:.1f} s: {v.detail[:120]}"
    elif v.verdict == "survived":
        tail = f"SURVIVED in {v.seconds:.1f} s: {v.before}  =>  {v.after}"
    else:
        tail = f"{v.verdict.upper()}: {v.detail[:120]}"
    return f"{head}: {tail}"


def summary(rows: dict[str, tuple[int, list[Verdict]]]) -> tuple[str, bool]:
    width = max([len(t) for t in rows] + [6])
    out = [f"{'target':<{width}}  total   run  killed  survived  invalid  error  kill rate"]
    all_ok = True
    for target, (total, verdicts) in rows.items():
        n = {
            k: sum(v.verdict == k for v in verdicts)
            for k in ("killed", "survived", "invalid", "error")
        }
        judged = n["killed"] + n["survived"]
        rate = n["killed"] / judged if judged else 1.0
        all_ok &= rate >= TARGET
        out.append(
            f"{target:<{width}}  {total:>5} {len(verdicts):>5} {n['killed']:>7} "
            f"{n['survived']:>9} {n['invalid']:>8} {n['error']:>6}  {rate:>8.0%}"
        )
    return "\n".join(out), all_ok


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exercise", action="append", default=[], metavar="NAME")
    parser.add_argument("--coding", action="store_true", help="the coding round's train.py")
    parser.add_argument(
        "--prompt",
        action="append",
        default=[],
        metavar="NAME",
        help="a round prompt's model answer (ddp, eval, fsdp2, preemption, biotech)",
    )
    parser.add_argument(
        "--stretch",
        action="append",
        default=[],
        metavar="PHASE",
        help="a stretch phase's model answer (accum, amp, fsdp2, throughput)",
    )
    parser.add_argument("--sample", type=int, default=None, help="at most N mutants per target")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="mutants checked at a time")
    parser.add_argument("--timeout", type=float, default=None, help="per run (default: spec's)")
    parser.add_argument(
        "--phases", default="", help="coding round phases (default: all of the prompt's)"
    )
    parser.add_argument("--json", type=Path, default=None, help="append verdicts as JSON lines")
    parser.add_argument("--list", action="store_true", help="list the mutants; run nothing")
    args = parser.parse_args(argv)
    unknown = [n for n in args.exercise if n not in EXERCISES]
    if unknown:
        parser.error(f"unknown exercise(s): {unknown}; known: {sorted(EXERCISES)}")
    from trainer_lab.grading import STRETCH_PHASES
    from trainer_lab.grading.prompts import PROMPT_IDS, get_prompt

    bad_prompts = [p for p in args.prompt if p not in PROMPT_IDS]
    if bad_prompts:
        parser.error(f"unknown prompt(s): {bad_prompts}; known: {list(PROMPT_IDS)}")
    prompts = list(dict.fromkeys(args.prompt)) or (["ddp"] if args.coding else [])
    asked = tuple(p for p in args.phases.split(",") if p)
    for prompt in prompts:
        known = get_prompt(prompt).phases + (STRETCH_PHASES if prompt == "ddp" else ())
        if any(p not in known for p in asked):
            parser.error(f"--phases {args.phases!r}: {prompt}'s phases are {list(known)}")
    wrong = [p for p in args.stretch if p not in STRETCH_PHASES]
    if wrong:
        parser.error(f"unknown stretch phase(s): {wrong}; known: {list(STRETCH_PHASES)}")
    targets = list(args.exercise) or ([] if prompts or args.stretch else sorted(EXERCISES))
    targets += [prompt_target(p) for p in prompts]
    targets += [STRETCH + p for p in args.stretch]

    rows: dict[str, tuple[int, list[Verdict]]] = {}
    for target in targets:
        every = mutants(source_of(target))
        picked = sample(every, args.sample, args.seed)
        print(f"== {target}: {len(picked)} of {len(every)} mutants", flush=True)
        if args.list:
            for m in picked:
                print(f"  {m.describe()}  =>  {m.after}")
            continue

        def one(m: Mutant, target: str = target) -> Verdict:
            prompt = prompt_of(target)
            if prompt is not None:
                phases = asked or get_prompt(prompt).phases
                return run_coding(m, phases, args.timeout, target, prompt, args.seed)
            if target.startswith(STRETCH):
                phase = (target.removeprefix(STRETCH),)
                return run_coding(m, phase, args.timeout, target, seed=args.seed)
            return run_exercise(target, m, args.timeout)

        verdicts: list[Verdict] = []
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for v in pool.map(one, picked):
                print(show(v), flush=True)
                verdicts.append(v)
                if args.json:
                    with args.json.open("a") as f:
                        f.write(json.dumps(asdict(v)) + "\n")
        rows[target] = (len(every), verdicts)
    if args.list:
        return 0
    table, ok = summary(rows)
    print("\n" + table)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
