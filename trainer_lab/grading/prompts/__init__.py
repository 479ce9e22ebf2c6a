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

import importlib
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


def _catalogued(
    prompt_id: str, module_name: str, grader: str, title: str, prompt: str
) -> Callable[[], Prompt]:
    """The builder of a catalogue prompt whose module keeps the usual names (CONTRACT, PHASES,
    CHECK_NAMES, GRADED, LAB, given_file and its grading function `grader`): imported only
    when the entry is built, so listing the catalogue stays light."""

    def build() -> Prompt:
        module = importlib.import_module(f"{__name__}.{module_name}")
        grading = getattr(module, grader)

        def grade(script: Path, out_dir: Path, phases: Any = module.PHASES, **options: Any) -> Any:
            return grading(script, out_dir, phases, **options)

        def given(name: str) -> Callable[[], str]:
            return lambda: module.given_file(name)

        return Prompt(
            id=prompt_id,
            title=title,
            minutes=45,
            prompt=prompt,
            contract=module.CONTRACT,
            phases=module.PHASES,
            check_names=module.CHECK_NAMES,
            graded=graded_rows(module.GRADED),
            starter=given("starter.py"),
            model_answer=given("train.py"),
            second_answer=given("second_answer.py"),
            dataset=given("drill_data.py"),
            grade=grade,
            lab=module.LAB,
        )

    return build


_eval = _catalogued(
    "eval", "evaluation", "grade_evaluation", "Distributed evaluation",
    "Your eval numbers differ across world sizes: make them exact, evaluate during "
    "training, and keep the best checkpoint across restarts.",
)  # fmt: skip
_fsdp2 = _catalogued(
    "fsdp2", "fsdp2", "grade_fsdp2", "FSDP2 first",
    "Train this model with FSDP2 from the start: shard it per block, checkpoint it "
    "sharded, and resume on another number of ranks without changing the training.",
)  # fmt: skip
_preempt = _catalogued(
    "preemption", "preemption", "grade_preemption", "Survive preemption",
    "Your jobs run on preemptible capacity: make this trainer take the scheduler's "
    "SIGTERM on every rank, save and exit in the grace period, and continue bit for bit "
    "when it is requeued.",
)  # fmt: skip
_biotech = _catalogued(
    "biotech", "biotech", "grade_biotech", "Biotech data pipeline",
    "Build the data pipeline for protein sequences: batch variable lengths with correct "
    "masks, split train and validation by sequence cluster, and read every sequence "
    "once per epoch across ranks, also across a restart mid-epoch.",
)  # fmt: skip


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
