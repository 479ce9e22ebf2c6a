"""Checks of the stretch phases (stretch.py), from what the runs did (torch-free).

The evidence: the recorder's optimizer steps and fetches, rank 0's step lines, and for some runs
the harness's probes (usercode/probes.py): the gradients' digest and norm after every backward
pass and as it began, the forward outputs' dtypes and the parameters' dtypes per optimizer step.
Each phase's checks are in its module (stretch_accum, stretch_amp, stretch_fsdp2,
stretch_throughput); what they share is in stretch_evidence.
"""

from __future__ import annotations

from trainer_lab.grading.stretch_accum import accum_checks
from trainer_lab.grading.stretch_amp import amp_checks
from trainer_lab.grading.stretch_fsdp2 import fsdp2_checks
from trainer_lab.grading.stretch_throughput import throughput_checks
from trainer_lab.result import Check
from trainer_lab.usercode.harness import ScriptRun


def stretch_checks(phase: str, runs: dict[str, ScriptRun]) -> list[Check]:
    if phase == "accum":
        return accum_checks(runs)
    if phase == "fsdp2":
        return fsdp2_checks(runs)
    if phase == "amp":
        return amp_checks(runs)
    return throughput_checks(runs)
