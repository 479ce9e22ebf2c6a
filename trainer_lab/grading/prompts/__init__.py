"""The catalogue of coding-round prompts, as data (torch-free, light: the app lists them).

    from trainer_lab.grading.prompts import PROMPTS, get_prompt
    entry = get_prompt("eval"); entry.contract, entry.phases, entry.check_names["exact"]
    grading = entry.grade(Path("train.py"), run_dir, entry.phases, seed=7)

Each entry: id, title, minutes (the round's length), prompt (what the interviewer says),
contract text, phases, the checks per phase, and the starter, model answer and second correct
answer as source text. "ddp" is today's round (trainer_lab.grading.contract, graded by
grader.py); "eval" is distributed evaluation (evaluation.py, graded through grader.py's
launcher); "fsdp2" is FSDP2 first (fsdp2.py, graded the same way); "preemption" is SIGTERM on
every rank, agreement and a bit-for-bit requeue (preemption.py, the same way, with the harness's
SIGTERM fault); "biotech" is a protein-sequence data pipeline (biotech.py: masks, a split by
cluster, exact epochs across ranks and a resume). Follow-up tables live on the drill side
(drill.mock.coding.catalogue).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer_lab.grading.graded_table import graded_rows

DEFAULT_PROMPT = "ddp"


@dataclass(frozen=True)
class Prompt:
    id: str
    title: str
    minutes: int
    prompt: str
    contract: str
    phases: tuple[str, ...]
    check_names: Mapping[str, tuple[str, ...]]
    graded: Mapping[str, str]  # phase -> its row of the contract's "How it is graded" table
    starter: Callable[[], str]
    model_answer: Callable[[], str]
    second_answer: Callable[[], str]
    dataset: Callable[[], str]  # the given dataset module, drill_data.py
    grade: Callable[..., Any]  # (script, out_dir, phases, **options) -> Grading
    lab: str = "mock-coding"


def _ddp() -> Prompt:
    from trainer_lab.grading import contract

    def grade(script: Path, out_dir: Path, phases: Any = contract.PHASES, **options: Any) -> Any:
        from trainer_lab.grading.grader import grade_script

        return grade_script(script, out_dir, phases, **options)

    return Prompt(
        id="ddp",
        title="DDP training pipeline",
        minutes=55,  # drill's coding round time table (drill/mock/coding/phases.py)
        prompt="Build a distributed training pipeline that survives a killed rank.",
        contract=contract.CONTRACT,
        phases=contract.PHASES,
        check_names=contract.CHECK_NAMES,
        graded=graded_rows(contract.GRADED),
        starter=contract.starter_source,
        model_answer=contract.model_answer_source,
        second_answer=SECOND_DDP_ANSWER.read_text,
        dataset=contract.dataset_source,
        grade=grade,
        lab=contract.LAB,
    )


# today's round's second answer in another style: a hand all_reduce with SGD (also a test fixture)
SECOND_DDP_ANSWER = Path(__file__).parent / "ddp_files" / "second_answer.py"


def _eval() -> Prompt:
    from trainer_lab.grading.prompts import evaluation

    def grade(script: Path, out_dir: Path, phases: Any = evaluation.PHASES, **options: Any) -> Any:
        return evaluation.grade_evaluation(script, out_dir, phases, **options)

    return Prompt(
        id="eval",
        title="Distributed evaluation",
        minutes=45,
        prompt=(
            "Your eval numbers differ across world sizes: make them exact, evaluate during "
            "training, and keep the best checkpoint across restarts."
        ),
        contract=evaluation.CONTRACT,
        phases=evaluation.PHASES,
        check_names=evaluation.CHECK_NAMES,
        graded=graded_rows(evaluation.GRADED),
        starter=lambda: evaluation.given_file("starter.py"),
        model_answer=lambda: evaluation.given_file("train.py"),
        second_answer=lambda: evaluation.given_file("second_answer.py"),
        dataset=lambda: evaluation.given_file("drill_data.py"),
        grade=grade,
        lab=evaluation.LAB,
    )


def _fsdp2() -> Prompt:
    from trainer_lab.grading.prompts import fsdp2

    def grade(script: Path, out_dir: Path, phases: Any = fsdp2.PHASES, **options: Any) -> Any:
        return fsdp2.grade_fsdp2(script, out_dir, phases, **options)

    return Prompt(
        id="fsdp2",
        title="FSDP2 first",
        minutes=45,
        prompt=(
            "Train this model with FSDP2 from the start: shard it per block, checkpoint it "
            "sharded, and resume on another number of ranks without changing the training."
        ),
        contract=fsdp2.CONTRACT,
        phases=fsdp2.PHASES,
        check_names=fsdp2.CHECK_NAMES,
        graded=graded_rows(fsdp2.GRADED),
        starter=lambda: fsdp2.given_file("starter.py"),
        model_answer=lambda: fsdp2.given_file("train.py"),
        second_answer=lambda: fsdp2.given_file("second_answer.py"),
        dataset=lambda: fsdp2.given_file("drill_data.py"),
        grade=grade,
        lab=fsdp2.LAB,
    )


def _preempt() -> Prompt:
    from trainer_lab.grading.prompts import preemption

    def grade(script: Path, out_dir: Path, phases: Any = preemption.PHASES, **options: Any) -> Any:
        return preemption.grade_preemption(script, out_dir, phases, **options)

    return Prompt(
        id="preemption",
        title="Survive preemption",
        minutes=45,
        prompt=(
            "Your jobs run on preemptible capacity: make this trainer take the scheduler's "
            "SIGTERM on every rank, save and exit in the grace period, and continue bit for bit "
            "when it is requeued."
        ),
        contract=preemption.CONTRACT,
        phases=preemption.PHASES,
        check_names=preemption.CHECK_NAMES,
        graded=graded_rows(preemption.GRADED),
        starter=lambda: preemption.given_file("starter.py"),
        model_answer=lambda: preemption.given_file("train.py"),
        second_answer=lambda: preemption.given_file("second_answer.py"),
        dataset=lambda: preemption.given_file("drill_data.py"),
        grade=grade,
        lab=preemption.LAB,
    )


def _biotech() -> Prompt:
    from trainer_lab.grading.prompts import biotech

    def grade(script: Path, out_dir: Path, phases: Any = biotech.PHASES, **options: Any) -> Any:
        return biotech.grade_biotech(script, out_dir, phases, **options)

    return Prompt(
        id="biotech",
        title="Biotech data pipeline",
        minutes=45,
        prompt=(
            "Build the data pipeline for protein sequences: batch variable lengths with correct "
            "masks, split train and validation by sequence cluster, and read every sequence "
            "once per epoch across ranks, also across a restart mid-epoch."
        ),
        contract=biotech.CONTRACT,
        phases=biotech.PHASES,
        check_names=biotech.CHECK_NAMES,
        graded=graded_rows(biotech.GRADED),
        starter=lambda: biotech.given_file("starter.py"),
        model_answer=lambda: biotech.given_file("train.py"),
        second_answer=lambda: biotech.given_file("second_answer.py"),
        dataset=lambda: biotech.given_file("drill_data.py"),
        grade=grade,
        lab=biotech.LAB,
    )


_BUILDERS: dict[str, Callable[[], Prompt]] = {
    "ddp": _ddp,
    "eval": _eval,
    "fsdp2": _fsdp2,
    "preemption": _preempt,
    "biotech": _biotech,
}
PROMPT_IDS: tuple[str, ...] = tuple(_BUILDERS)


def get_prompt(name: str) -> Prompt:
    """The catalogue's entry `name`; KeyError naming the known ids when there is none."""
    if name not in _BUILDERS:
        raise KeyError(f"unknown prompt {name!r}; prompts: {', '.join(PROMPT_IDS)}")
    return _BUILDERS[name]()
