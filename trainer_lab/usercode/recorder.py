"""What the bootstrap records about a user's script, without the script's cooperation (torch).

- a global optimizer step pre/post hook: per optimizer step, a digest (exact equality), the L2
  norm and a strided sample (magnitudes of differences) of the parameters before and after the
  step and of the gradients, plus the size of the update. A step at lr 0 on all-zero gradients
  (DCP's optimizer-state initialisation) is not a training step: neither counted nor recorded;
- the given dataset's reader: which ids this rank fetched, and after how many steps; the values
  it serves are the launch's DataPlan's (dataplan.py);
- torch.save / os.replace / os.rename into the checkpoint dir: who wrote which path when;
- faults: SIGKILL this rank right after step N; tear the first checkpoint save after step N
  (write half the bytes, then SIGKILL), as a crash in the middle of a save would.
Every record is one JSON line appended with a single write, so a SIGKILL loses nothing written.
"""

from __future__ import annotations

import faulthandler
import hashlib
import io
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)

from trainer_lab.usercode import loader_workers, protocol
from trainer_lab.usercode.comms import CommWatch
from trainer_lab.usercode.dataplan import DataPlan, SampleServer
from trainer_lab.usercode.known_work import slow_reads, wait
from trainer_lab.usercode.loader_workers import set_plan_constants
from trainer_lab.usercode.origin import origin

SAMPLE = 64  # values per strided sample
FULL_FLAT_MAX = 2_000_000  # above this many parameters the update size comes from the sample


def _local(t: torch.Tensor) -> torch.Tensor:
    """This rank's shard of a DTensor (FSDP2, TP), the tensor itself otherwise. Gathering the
    whole tensor would be a collective the user's ranks might not all reach."""
    to_local = getattr(t, "to_local", None)
    return to_local() if callable(to_local) else t


def _flat(tensors: list[torch.Tensor]) -> torch.Tensor:
    if not tensors:
        return torch.zeros(0, dtype=torch.float64)
    return torch.cat([_local(t).detach().reshape(-1).to("cpu", torch.float64) for t in tensors])


def summarize(tensors: list[torch.Tensor]) -> dict[str, Any]:
    """Digest, norm and a strided sample of `tensors`; of each rank's shard when sharded."""
    digest = hashlib.sha256()
    sharded = any(_local(t) is not t for t in tensors)
    for t in tensors:
        data = _local(t).detach().to("cpu").contiguous().reshape(-1)
        digest.update(str(data.dtype).encode())
        digest.update(data.view(torch.uint8).numpy().tobytes())
    flat = _flat(tensors)
    n = flat.numel()
    idx = torch.linspace(0, max(n - 1, 0), min(n, SAMPLE)).long()
    return {
        "digest": digest.hexdigest()[:32],
        "norm": float(flat.norm()) if n else 0.0,
        "numel": n,
        "sample": flat[idx].tolist() if n else [],
        "sharded": sharded,
    }


def _state_init_step(optimizer: Any, grads: list[torch.Tensor]) -> bool:
    """A step at learning rate 0 on all-zero gradients is not a training step: it is how
    torch.distributed.checkpoint's get_state_dict / set_state_dict give a fresh optimizer its
    state. A real step at lr 0 (a warm-up's first) has real gradients and counts; so does a step
    whose parameters have no gradients at all (an optimizer built on the wrong tensors)."""
    groups = getattr(optimizer, "param_groups", None) or []
    if not groups or not grads:
        return False
    if any(float(group.get("lr", 1.0)) != 0.0 for group in groups):
        return False
    return not any(bool(_local(g).detach().any()) for g in grads)


def _inside(path: str, root: Path) -> bool:
    try:
        return Path(path).resolve().is_relative_to(root)
    except (OSError, ValueError):
        return False


def _target(f: Any) -> str | None:
    if isinstance(f, str | os.PathLike):
        return os.fspath(f)
    name = getattr(f, "name", None)
    return name if isinstance(name, str) else None


class Recorder:
    def __init__(self, observe_dir: Path, rank: int, env: dict[str, str]) -> None:
        self.dir = observe_dir
        self.rank = rank
        self.pstep = 0  # optimizer steps this process has done
        ckpt = env.get(protocol.CKPT_ENV)
        self.ckpt_dir = Path(ckpt).resolve() if ckpt else None
        kill_rank = env.get(protocol.KILL_RANK_ENV)
        kill_after = env.get(protocol.KILL_AFTER_ENV)
        self.kill_after = (
            int(kill_after) if kill_after and kill_rank and int(kill_rank) == rank else None
        )
        tear = env.get(protocol.TEAR_AFTER_ENV)
        self.tear_after = int(tear) if tear else None
        self._fds: dict[str, int] = {}
        # (optimizer id, summary, flat parameters) of each optimizer step begun and not yet
        # ended: an optimizer that wraps another (ZeroRedundancyOptimizer ...) nests its inner
        # optimizer's step inside its own; only the outermost step is recorded
        self._open: list[tuple[int, dict[str, Any], torch.Tensor | None]] = []
        self._stack_file: Any = None
        self.step_wait_s = 0.0  # each outermost optimizer step waits this long (watch_dataset)
        # several ranks: the collectives between each forward and optimizer step (comms.py)
        self.comms = CommWatch() if int(env.get("WORLD_SIZE", "1") or 1) > 1 else None
        self._step_comm: dict[str, Any] | None = None
        self._bypass = False  # the read being recorded did not come through the dataset

    # -- writing -------------------------------------------------------------------------------
    def write(self, name: str, record: dict[str, Any]) -> None:
        fd = self._fds.get(name)
        if fd is None:
            fd = os.open(self.dir / name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            self._fds[name] = fd
        os.write(fd, (json.dumps(record) + "\n").encode())

    # -- installation --------------------------------------------------------------------------
    def install(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        register_optimizer_step_pre_hook(self._on_pre_step)
        register_optimizer_step_post_hook(self._on_post_step)
        if self.comms is not None:
            self.comms.install()
        self._wrap_save()
        self._wrap_renames()
        loader_workers.watch_workers(self.on_workers)
        pid = os.getpid()
        self._stack_file = open(self.dir / protocol.stack_file(self.rank, pid), "w")  # noqa: SIM115
        faulthandler.register(signal.SIGUSR1, file=self._stack_file, all_threads=True)
        (self.dir / protocol.pid_file(self.rank, pid)).write_text(str(pid))

    def watch_dataset(self, module: Any, plan: DataPlan | None, world: int = 1) -> None:
        """Replace the given dataset's reader (drill_data._fetch): each id read is recorded and
        served the values `plan` says (dataplan.py); BATCH_SIZE is the plan's."""
        server = SampleServer(plan or DataPlan(seed=0), self.rank, world)
        set_plan_constants(module, plan)
        from trainer_lab.usercode.token_remap import record_backward_losses, remap_padding

        if plan is not None and plan.token_remap:
            remap_padding(*plan.token_remap, on_tokens=self.on_tokens)
        record_backward_losses(self.on_loss)  # printed losses are compared with these
        draw = module._sample
        own_file = getattr(module, "__file__", None)

        def _fetch(index: int) -> Any:
            self._bypass = _caller_file() != own_file
            try:
                self.on_fetch(index)
            finally:
                self._bypass = False
            return draw(*server.source(index, self.pstep))

        # `_read` too: the module's own reader is the grader's, as in the given file (`_fetch is
        # _read`); a read through it from outside the dataset is seen, and marked as such
        module._fetch = module._read = slow_reads(
            _fetch, plan.read_wait_s if plan is not None else 0.0
        )
        # DataLoader workers: each handed-over batch, through on_fetch as it is then (sigterm.py
        # may wrap it)
        loader_workers.install(lambda index: self.on_fetch(index), plan, self.rank, world)
        self.step_wait_s = plan.step_wait_s if plan is not None else 0.0  # known_work.py

    # -- hooks ---------------------------------------------------------------------------------
    @staticmethod
    def _params(optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
        return [p for group in optimizer.param_groups for p in group["params"]]

    def _on_pre_step(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        ids = [entry[0] for entry in self._open]
        if id(optimizer) in ids:  # its last step raised before the post hook: forget it
            del self._open[ids.index(id(optimizer)) :]
        if self._open:  # an inner optimizer's step, inside the outer one being recorded
            self._open.append((id(optimizer), {}, None))
            return
        wait(self.step_wait_s)
        params = self._params(optimizer)
        total = sum(p.numel() for p in params)
        flat = _flat(params) if total <= FULL_FLAT_MAX else None
        self._step_comm = self.comms.since_forward() if self.comms is not None else None
        self._open.append((id(optimizer), summarize(params), flat))

    def _on_post_step(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        ids = [entry[0] for entry in self._open]
        if id(optimizer) not in ids:
            return  # no pre hook seen for it (installed mid-step): nothing to compare with
        at = ids.index(id(optimizer))
        _, pre_summary, pre_flat = self._open[at]
        del self._open[at:]
        if self._open:
            return  # an inner step: the outer optimizer's post hook records the whole step
        params = self._params(optimizer)
        post = summarize(params)
        grads = [p.grad for p in params if p.grad is not None]
        if _state_init_step(optimizer, grads):
            return
        self.pstep += 1
        if pre_flat is not None:
            update = float((_flat(params) - pre_flat).norm())
        else:
            pre = torch.tensor(pre_summary.get("sample", []), dtype=torch.float64)
            now = torch.tensor(post["sample"], dtype=torch.float64)
            update = float((now - pre).norm()) if pre.shape == now.shape else 0.0
        record = {
            "pstep": self.pstep,
            "time": time.time(),
            "pre": pre_summary,
            "post": post,
            "grad": summarize(grads),
            "update_norm": update,
        }
        if self._step_comm is not None:
            record["comm"] = self._step_comm
        self.write(protocol.steps_file(self.rank), record)
        if self.kill_after is not None and self.pstep == self.kill_after:
            self.write(protocol.saves_file(self.rank), {"event": "killed", "pstep": self.pstep})
            os.kill(os.getpid(), signal.SIGKILL)

    def on_tokens(self, real: int, other: int, slots: int, rows: int, grad: bool) -> None:
        """The token embedding read `real` real tokens and `other` ids that are neither real nor
        the launch's PAD_ID, out of `slots` ids in `rows` rows, gradients on or not
        (token_remap.py)."""
        record = {"pstep": self.pstep, "real": real, "other": other, "slots": slots, "rows": rows}
        record["grad"] = grad
        self.write(protocol.tokens_file(self.rank), record)

    def on_loss(self, value: float) -> None:
        """A backward pass started from a scalar of this value (token_remap.py)."""
        self.write(protocol.losses_file(self.rank), {"pstep": self.pstep, "loss": value})

    def on_fetch(self, index: int) -> None:
        if loader_workers.in_loader_worker():  # the main process records what it hands over
            return
        record: dict[str, Any] = {"pstep": self.pstep, "id": index, "pid": os.getpid()}
        if self._bypass:  # read through the module's reader, not dataset[i] / __getitems__
            record["bypass"] = True
        self.write(protocol.fetch_file(self.rank), record)

    def on_workers(self, event: str) -> None:
        """A DataLoader's worker processes started, are ready, stop or stopped."""
        record = {"event": event, "pstep": self.pstep, "time": time.time()}
        self.write(protocol.workers_file(self.rank), record)

    # -- checkpoint writes ---------------------------------------------------------------------
    def _relative(self, path: str) -> str:
        assert self.ckpt_dir is not None
        try:
            return str(Path(path).resolve().relative_to(self.ckpt_dir))
        except ValueError:
            return path

    def _wrap_save(self) -> None:
        original = torch.save
        recorder = self

        def save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> Any:
            path = _target(f)
            inside = recorder.ckpt_dir is not None and path is not None
            inside = inside and _inside(path, recorder.ckpt_dir)  # type: ignore[arg-type]
            begun = origin(recorder.pstep)  # the step its save began at (async: earlier)
            tear = recorder.tear_after is not None and begun >= recorder.tear_after
            if inside and tear:
                recorder._tear(original, obj, f, path, args, kwargs)  # type: ignore[arg-type]
            result = original(obj, f, *args, **kwargs)
            if inside:
                rel = recorder._relative(path)  # type: ignore[arg-type]
                recorder.write(
                    protocol.saves_file(recorder.rank),
                    {
                        "event": "save",
                        "path": rel,
                        "pstep": recorder.pstep,
                        "origin": origin(recorder.pstep),
                        "pid": os.getpid(),
                    },
                )
            return result

        torch.save = save

    def _tear(self, original: Any, obj: Any, f: Any, path: str, args: Any, kwargs: Any) -> None:
        buffer = io.BytesIO()
        original(obj, buffer, *args, **kwargs)
        data = buffer.getvalue()
        half = data[: len(data) // 2]
        if isinstance(f, str | os.PathLike):
            with open(f, "wb") as out:
                out.write(half)
                out.flush()
                os.fsync(out.fileno())
        else:
            f.write(half)
            f.flush()
        self.write(
            protocol.saves_file(self.rank),
            {
                "event": "torn",
                "path": self._relative(path),
                "pstep": self.pstep,
                "bytes": len(half),
                "of": len(data),
            },
        )
        os.kill(os.getpid(), signal.SIGKILL)

    def _wrap_renames(self) -> None:
        recorder = self
        for name in ("replace", "rename"):
            original = getattr(os, name)

            def renamed(src: Any, dst: Any, *args: Any, _original: Any = original, **kw: Any):
                result = _original(src, dst, *args, **kw)
                target = _target(dst)
                ckpt = recorder.ckpt_dir
                if ckpt is not None and target is not None and _inside(target, ckpt):
                    recorder.write(
                        protocol.saves_file(recorder.rank),
                        {
                            "event": "rename",
                            "src": recorder._relative(os.fspath(src)),
                            "path": recorder._relative(target),
                            "pstep": recorder.pstep,
                            "origin": origin(recorder.pstep),
                            "pid": os.getpid(),
                        },
                    )
                return result

            setattr(os, name, renamed)


def _caller_file() -> str | None:
    """The file of the code that called the dataset reader, past this package's wrappers (the
    dataset's own __getitem__ lives in the dataset module's file)."""
    here = os.path.dirname(__file__)
    frame = sys._getframe(2)
    while frame is not None and os.path.dirname(frame.f_code.co_filename) == here:
        frame = frame.f_back  # type: ignore[assignment]
    return frame.f_code.co_filename if frame is not None else None
