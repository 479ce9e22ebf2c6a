"""The real fit worker (drill.review.optimize_worker.main, its tie to the parent included) with
the fit itself parked: it reports "fit parked" as progress and waits, so a test can signal
`drill optimize` while the worker certainly runs. Run as the worker module (see
tests/support/optimize_child.py)."""

from __future__ import annotations

import signal
import sys
from typing import Any

import drill.review.optimize as optimize
from drill.review import optimize_worker

PARKED = "fit parked"


def _parked_fit(_reviews: Any, **kwargs: Any) -> Any:
    kwargs["progress"](PARKED)
    while True:
        signal.pause()


if __name__ == "__main__":
    optimize.fit_parameters = _parked_fit  # type: ignore[assignment]
    sys.exit(optimize_worker.main())
