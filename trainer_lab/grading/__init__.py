"""The coding round's grader: a user's train.py graded by what it does (torch-free here).

    from trainer_lab.grading import grade
    grading = grade(Path("train.py"), run_dir, phases=("skeleton", "restart"))
    grading.ok, grading.failed, grading.likely_causes, dict(grading)   # = run_dir/result.json

`grade` is the one entry point; the rest of this namespace is the contract the app shows (text,
phases, check names, given files). The stretch phases (STRETCH_PHASES: accum, amp, fsdp2,
throughput; stretch.py) are graded by the same `grade` when named in `phases`, but are not in
PHASES, so the round's own grading is unchanged. Modules: contract.py (the contract, the given
files in files/, the launches), grader.py (run and judge), checks_run.py / checks_restart.py /
checks_stretch.py (the checks; stretch_<phase>.py per stretch phase), stretch.py (the
stretch phases), outcome.py (Grading), variants.py (the model
answers' known-broken variants, for tests).
User code runs through trainer_lab.usercode, the harness the exercises share.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from trainer_lab.grading.contract import (
    BATCH_SIZE,
    CHECK_NAMES,
    CKPT_EVERY,
    CONTRACT,
    DATASET_MODULE_FILE,
    DATASET_SIZE,
    DEFAULT_TIMEOUT_S,
    FILES,
    LAB,
    PHASES,
    RESTART_KILLED_AFTER,
    SCRIPT_NAME,
    TEAR_AFTER,
    dataset_source,
    model_answer_source,
    starter_source,
)
from trainer_lab.grading.outcome import Grading
from trainer_lab.grading.prompts import DEFAULT_PROMPT, PROMPT_IDS, get_prompt
from trainer_lab.grading.stretch import (
    STRETCH_CHECK_NAMES,
    STRETCH_PHASES,
    stretch_contract,
    stretch_model_answer,
)
from trainer_lab.usercode.source import ScriptError

__all__ = [
    "BATCH_SIZE",
    "CHECK_NAMES",
    "CKPT_EVERY",
    "CONTRACT",
    "DATASET_MODULE_FILE",
    "DATASET_SIZE",
    "DEFAULT_PROMPT",
    "DEFAULT_TIMEOUT_S",
    "FILES",
    "LAB",
    "PHASES",
    "PROMPT_IDS",
    "RESTART_KILLED_AFTER",
    "SCRIPT_NAME",
    "STRETCH_CHECK_NAMES",
    "STRETCH_PHASES",
    "TEAR_AFTER",
    "Grading",
    "ScriptError",
    "dataset_source",
    "get_prompt",
    "grade",
    "model_answer_source",
    "starter_source",
    "stretch_contract",
    "stretch_model_answer",
]


def grade(
    script: Path,
    out_dir: Path,
    phases: Iterable[str] | None = None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    parallel: int = 2,
    on_progress: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    seed: int | None = None,
    prompt: str = "ddp",
) -> Grading:
    """Run `script` as the contract's train.py for the launches `phases` need (in PHASES order,
    then STRETCH_PHASES order,
    shared runs once, up to `parallel` at a time, each under `timeout_s`), judge what it did,
    write out_dir/result.json and return it. `on_progress` gets a line per launch started and
    ended; setting `cancel` kills the running launches (the grading is then `cancelled`).
    `seed` draws the fault plan (which rank is killed after which step, which rank's save is
    torn alone) and the samples: the same seed, the same plan; None draws a fresh seed, and
    the seed used is `Grading.seed` (result.json's "seed").
    Raises ScriptError when the file cannot be read; a file that does not compile is not run
    and fails every check. `prompt` names the round's prompt in the catalogue
    (trainer_lab.grading.prompts: "ddp", today's round, or another prompt graded its own way;
    KeyError for an unknown one). `phases`: None grades every phase of the prompt (for "ddp"
    the contract's PHASES, not the stretch phases)."""
    if prompt != DEFAULT_PROMPT:
        entry = get_prompt(prompt)
        return entry.grade(
            script,
            out_dir,
            entry.phases if phases is None else phases,
            parallel=parallel,
            on_progress=on_progress,
            cancel=cancel,
            seed=seed,
            timeout_s=timeout_s,
        )
    from trainer_lab.grading.grader import grade_script  # the harness loads when a grading runs

    return grade_script(
        script,
        out_dir,
        PHASES if phases is None else phases,
        timeout_s=timeout_s,
        parallel=parallel,
        on_progress=on_progress,
        cancel=cancel,
        seed=seed,
    )
