"""Known work the grader adds to the round's launches (torch-free).

Under the grader every sample read (`dataset[i]`, or each id of `dataset.__getitems__`) first
waits READ_WAIT_S, as slow storage would, and every optimizer step (in the recorder's pre-step
hook, inside optimizer.step()) waits STEP_WAIT_S: the data phase and the optimizer phase are then
large, known shares of a step, so a step timer that leaves either out misses far more than the
monitoring check's 10 % margin (a read costs well under a millisecond otherwise, and with the
reads slowed the optimizer's own share would shrink toward the margin). A wait, not busy work:
it costs no CPU, and a loaded machine can only lengthen it. The printed contract states both
(contract.CONTRACT, monitoring).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

READ_WAIT_S = 0.005  # seconds each sample read waits in the round's launches
# seconds each optimizer step waits (in the recorder's pre-step hook, inside optimizer.step()):
# with the reads a large share, the optimizer's own share would shrink toward the margin
STEP_WAIT_S = 0.01
# the monitoring check: the step times, and one phase each, hold at least this share of the
# reads' and the optimizer steps' waits
COVER = 0.8


def slow_reads(read: Callable[[int], Any], wait_s: float) -> Callable[[int], Any]:
    """`read`, each call waiting `wait_s` seconds first (itself when `wait_s` is 0)."""
    if wait_s <= 0:
        return read

    def waiting_read(index: int) -> Any:
        time.sleep(wait_s)
        return read(index)

    return waiting_read


def wait(seconds: float) -> None:
    """The known work of one optimizer step: a wait of `seconds` (none when 0)."""
    if seconds > 0:
        time.sleep(seconds)
