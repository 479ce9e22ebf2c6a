"""Which collectives a rank issues between its forward and its optimizer step (torch).

Observed at the process-group level, through torch's flight recorder (c10d keeps a ring of the
collectives every backend was asked for: DDP's reducer, FSDP2, functional collectives,
`dist.all_reduce` however it is bound), never by replacing an attribute the script may have
bound before. A gradient exchange happens after the forward (in the backward: DDP, FSDP2; or
after it: a hand-written all-reduce); samples gathered before the forward are not one.
"""

from __future__ import annotations

import os
import pickle
import time
from math import prod
from typing import Any

import torch

from trainer_lab.usercode.protocol import FR_BUFFER

# The flight recorder's ring (entries): read by c10d when a process group is made, so it is set
# before the script runs. Small: each optimizer step reads the whole ring (a dump of 100 entries
# took 15 ms on a loaded 2-core machine, of 1000 94 ms); a step whose window fills it is not
# judged (its oldest collectives may be gone).
FR_BUFFER_ENV = "TORCH_FR_BUFFER_SIZE"
MAX_REDUCES = 64  # reducing collectives listed per step


def _elements(sizes: Any) -> int:
    return sum(prod(size) for size in sizes or () if isinstance(size, list | tuple))


def _reduces(name: object) -> bool:
    """A collective that sums a tensor over the ranks: FSDP2's gradient reduce-scatter (an
    all_reduce of the padded flat gradient on gloo, which has no reduce-scatter of its own)."""
    return isinstance(name, str) and ("all_reduce" in name or "reduce_scatter" in name)


def collectives(since_ns: int, reduces: list[int] | None = None) -> tuple[int, int] | None:
    """(collectives, elements sent) created after `since_ns` (time.time_ns) in this process:
    the elements of each collective's inputs (a reduce-scatter's whole input); elements -1 when
    the window filled the ring (too many collectives to tell what they sent). None: torch has no
    flight recorder to ask. (The pickle is torch's own, made in this process by the call.)
    `reduces`, when given, gets the input elements of each reducing collective (all_reduce,
    reduce_scatter), in order, at most MAX_REDUCES."""
    try:
        from torch._C._distributed_c10d import _dump_fr_trace

        trace = pickle.loads(_dump_fr_trace(True, False, False))
    except Exception:
        return None
    entries = trace.get("entries") or []
    count = elements = 0
    for entry in entries:
        if int(entry.get("time_created_ns", 0)) <= since_ns:
            continue
        count += 1
        elements += _elements(entry.get("input_sizes"))
        if (
            reduces is not None
            and len(reduces) < MAX_REDUCES
            and _reduces(entry.get("profiling_name"))
        ):
            reduces.append(_elements(entry.get("input_sizes")))
    if count >= int(os.environ.get(FR_BUFFER_ENV) or FR_BUFFER):
        return count, -1  # the whole ring is this step's: older collectives of it may be gone
    return count, elements


def _rows(args: Any, kwargs: Any) -> int:
    """The leading size of a forward's first tensor argument (the samples it runs on)."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            return int(value.shape[0]) if value.dim() else 1
    return 0


class CommWatch:
    """The end of this rank's last forward (a module's forward outside a backward: an
    activation checkpoint's recompute is not one), and the collectives issued since; and the
    samples this rank's outermost forwards ran on since its last optimizer step (a module with
    parameters, called by no other module, with autograd on: a rank that trains on its own
    shard runs its model on BATCH_SIZE samples a step, one that trains on the gathered global
    batch on W x as many, whatever collectives it issues)."""

    def __init__(self) -> None:
        self.forward_end_ns = time.time_ns()
        self._depth = 0  # module forwards under way in this thread
        self._rows = 0

    def install(self) -> None:
        """Turn the flight recorder on (before the script makes a process group) and watch the
        forwards."""
        os.environ.setdefault(FR_BUFFER_ENV, str(FR_BUFFER))
        torch.nn.modules.module.register_module_forward_pre_hook(self._on_forward_start)
        torch.nn.modules.module.register_module_forward_hook(self._on_forward, always_call=True)

    def _on_forward_start(self, module: Any, args: Any) -> None:
        outermost = self._depth == 0
        self._depth += 1
        if (
            outermost
            and torch.is_grad_enabled()
            and torch._C._current_graph_task_id() == -1
            and next(module.parameters(), None) is not None
        ):
            self._rows += _rows(args, {})

    def _on_forward(self, module: Any, args: Any, output: Any) -> None:
        self._depth = max(0, self._depth - 1)
        if torch._C._current_graph_task_id() == -1:  # not inside a backward
            self.forward_end_ns = time.time_ns()

    def since_forward(self) -> dict[str, Any] | None:
        """{"ops", "elements", "rows"}: the collectives issued since the last forward ended, and
        the samples forwarded since the last call (None: collectives unknown); "reduces": the
        input elements of each all_reduce / reduce_scatter among them, when there were any (a
        per-block FSDP2 backward reduces each block's gradient on its own)."""
        rows, self._rows = self._rows, 0
        reduces: list[int] = []
        seen = collectives(self.forward_end_ns, reduces)
        if seen is None:
            return None
        found: dict[str, Any] = {"ops": seen[0], "elements": seen[1], "rows": rows}
        if reduces:
            found["reduces"] = reduces
        return found
