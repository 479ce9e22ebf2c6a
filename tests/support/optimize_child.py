"""`drill optimize --yes` as a real process whose fit worker is tests.support.blocking_fit_worker
(the real worker with the fit parked): `python -m tests.support.optimize_child`."""

from __future__ import annotations

import sys

import drill.review.optimize as optimize
from drill.cli.main import main

if __name__ == "__main__":
    optimize.WORKER_MODULE = "tests.support.blocking_fit_worker"
    sys.exit(main(["optimize", "--yes"]))
