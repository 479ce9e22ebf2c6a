"""Extra observation a grading asks for by environment (protocol.PROBES_ENV), beside recorder.py
(torch). The coding round's stretch phases read these records; a plain grading installs none.

- every backward pass (torch.autograd.backward, which Tensor.backward calls): the optimizer steps
  done before it and a summary (digest, norm) of the gradients of every optimizer's parameters
  right after it, with their digest as it began (what happened between two backward passes).
  DDP's all-reduce (and FSDP2's reduce-scatter) runs inside the backward call, so gradients
  equal across ranks after a backward mean it communicated; a backward under no_sync leaves each
  rank its own. The ratio of the norm after the last backward of a step to the norm
  the optimizer step sees is the loss scale a scaler unscaled by;
- per optimizer step: how many outputs of modules that hold parameters came out in each dtype in
  the forward passes since the previous step (autocast shows as bfloat16), and the dtypes of the
  parameters at the step (the master weights);
- the fault protocol.INF_AT_ENV = S: the first backward after S-1 optimizer steps leaves a
  non-finite gradient on every rank (one element set to inf), as an overflow in reduced
  precision would; a loss scaler must skip that step and back off.
Records go to probes-rank{R}.jsonl through the recorder's single-write appends.
"""

from __future__ import annotations

import time
import weakref
from collections import Counter
from typing import Any

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

from trainer_lab.usercode import protocol
from trainer_lab.usercode.recorder import Recorder, summarize


class Probes:
    def __init__(self, recorder: Recorder, env: dict[str, str]) -> None:
        self.rec = recorder
        inf_at = env.get(protocol.INF_AT_ENV)
        self.inf_at = int(inf_at) if inf_at else None
        self.injected = False
        self.optimizers: weakref.WeakSet[torch.optim.Optimizer] = weakref.WeakSet()
        self.outputs: Counter[str] = Counter()
        self.backwards = 0
        self._depth = 0  # a backward inside a backward (a custom Function) is part of the outer

    def write(self, record: dict[str, Any]) -> None:
        self.rec.write(protocol.probes_file(self.rec.rank), record)

    def install(self) -> None:
        self._track_optimizers()
        self._wrap_backward()
        torch.nn.modules.module.register_module_forward_hook(self._on_forward)
        register_optimizer_step_post_hook(self._on_step)

    # -- optimizers ----------------------------------------------------------------------------
    def _track_optimizers(self) -> None:
        original = torch.optim.Optimizer.__init__
        probes = self

        def init(optimizer: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> None:
            original(optimizer, *args, **kwargs)
            probes.optimizers.add(optimizer)

        torch.optim.Optimizer.__init__ = init  # type: ignore[method-assign]

    def _params(self) -> list[torch.Tensor]:
        seen: set[int] = set()
        params = []
        for optimizer in list(self.optimizers):
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if id(p) not in seen:
                        seen.add(id(p))
                        params.append(p)
        return params

    # -- backward ------------------------------------------------------------------------------
    def _wrap_backward(self) -> None:
        original = torch.autograd.backward
        probes = self

        def backward(*args: Any, **kwargs: Any) -> Any:
            before = probes._grads_digest() if probes._depth == 0 else None
            probes._depth += 1
            try:
                result = original(*args, **kwargs)
            finally:
                probes._depth -= 1
            if probes._depth == 0:
                probes._after_backward(before)
            return result

        torch.autograd.backward = backward

    def _grads(self) -> list[torch.Tensor]:
        return [p.grad for p in self._params() if p.grad is not None]

    def _grads_digest(self) -> str | None:
        grads = self._grads()
        return summarize(grads)["digest"] if grads else None

    def _after_backward(self, before: str | None) -> None:
        self.backwards += 1
        grads = self._grads()
        due = self.inf_at is not None and self.rec.pstep == self.inf_at - 1
        if due and grads and not self.injected:
            with torch.no_grad():
                grads[0].view(-1)[0] = float("inf")  # DTensor grads: this rank's shard
            self.injected = True
            self.write({"event": "inf_injected", "pstep": self.rec.pstep})
        summary = summarize(grads)
        self.write(
            {
                "event": "backward",
                "n": self.backwards,
                "pstep": self.rec.pstep,
                "time": time.time(),
                "grads": len(grads),
                "before": before,  # the gradients' digest as the backward began (None: no grads)
                "grad": {k: summary[k] for k in ("digest", "norm", "numel", "sharded")},
            }
        )

    # -- forward dtypes, per optimizer step ----------------------------------------------------
    def _on_forward(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        if torch.is_tensor(output) and next(module.parameters(recurse=False), None) is not None:
            self.outputs[str(output.dtype).removeprefix("torch.")] += 1

    def _on_step(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        params = [p for group in optimizer.param_groups for p in group["params"]]
        dtypes = Counter(str(p.dtype).removeprefix("torch.") for p in params)
        self.write(
            {
                "event": "step",
                "pstep": self.rec.pstep,
                "outputs": dict(self.outputs),
                "params": dict(dtypes),
            }
        )
        self.outputs.clear()
