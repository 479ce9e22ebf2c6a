"""`python -m trainer_lab._torchrun ARGS` is `python -m torch.distributed.run ARGS` that dies
with its parent (PR_SET_PDEATHSIG), so a killed lab driver never leaves torchrun behind."""

from __future__ import annotations

import os
import runpy

from trainer_lab.procs import PARENT_ENV, die_with_parent

if __name__ == "__main__":
    expected = os.environ.get(PARENT_ENV)
    die_with_parent(int(expected) if expected else None)
    os.environ[PARENT_ENV] = str(os.getpid())  # the workers' expected parent
    runpy.run_module("torch.distributed.run", run_name="__main__", alter_sys=True)
