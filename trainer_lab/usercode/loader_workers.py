"""A DataLoader with worker processes, under the grader: the reads are the batches the script
consumes, in the grader's data, at the step that consumes them.

A worker reads ahead of the training loop (its prefetch), in another process whose copy of the
step count stays where it was when the worker started, and several workers' reads interleave
in the record. So a worker records nothing; the main process records each batch's sample ids
when the DataLoader hands that batch to the script (`_next_data`: in the sampler's order, the
default `in_order=True`), at the optimizer steps done then, exactly as if the script had read
them there itself. A batch read ahead and never handed over (a run stopped mid-epoch) was never
trained on and is not recorded.

Every worker reads the grader's data: the DataLoader's `worker_init_fn` is wrapped so that the
worker installs the grader's reader first (served from the launch's DataPlan; the wrapper is
pickled to the worker with the plan), then runs the script's own. A spawned (or forkserver)
process imports the script and the dataset module afresh before any init runs, so a
`from drill_data import PAD_ID` at the script's top would bind the module's own value there: the
data multiprocessing sends ahead of everything else carries the plan, and unpickling it arms an
import hook that gives the dataset module the launch's constants and reader as it is imported.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import multiprocessing.spawn
import operator
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import torch.utils.data
import torch.utils.data.dataloader as dataloader

from trainer_lab.usercode import protocol, teardown
from trainer_lab.usercode.dataplan import DataPlan, SampleServer
from trainer_lab.usercode.known_work import slow_reads

_SENT = "_drill_sent"  # an iterator's {send index: the sampler's index (the ids) sent}


def in_loader_worker() -> bool:
    """This process is a DataLoader worker (its reads are recorded by the main process)."""
    return torch.utils.data.get_worker_info() is not None


def grader_reader(module: Any, plan: DataPlan | None, rank: int, world: int) -> Callable[..., Any]:
    """A worker's reader: the launch's values, unrecorded. A worker cannot know the steps done
    when the script will consume what it reads now (it reads ahead), so its reads are served
    as before any step with no poisoned values (a relaunch's poison is for reads in the main
    process: the replay of the past it catches also reads past samples again, which the
    handed-over record shows)."""
    plan = replace(plan, poison_dir=None) if plan is not None else DataPlan(seed=0)
    server = SampleServer(plan, rank, world)
    draw = module._sample

    def _fetch(index: int) -> Any:
        return draw(*server.source(index, 0))

    return slow_reads(_fetch, plan.read_wait_s)


def set_plan_constants(module: Any, plan: DataPlan | None) -> None:
    """drill_data's BATCH_SIZE and PAD_ID as the launch has them."""
    if plan is not None and plan.batch_size:
        module.BATCH_SIZE = plan.batch_size
    if plan is not None and plan.pad_id is not None:
        module.PAD_ID = plan.pad_id


class WorkerReader:
    """The DataLoader's worker_init_fn under the grader: the grader's reader goes into the
    worker's dataset module (a forked worker's would record with a stale step count, a spawned
    worker's is the module's own), then the script's own init runs."""

    def __init__(
        self, init: Callable[[int], Any] | None, plan: DataPlan | None, rank: int, world: int
    ) -> None:
        self.init, self.plan, self.rank, self.world = init, plan, rank, world

    def __call__(self, worker_id: int) -> None:
        module = sys.modules.get(protocol.DATASET_MODULE)
        if module is not None and hasattr(module, "_sample"):
            set_plan_constants(module, self.plan)
            reader = grader_reader(module, self.plan, self.rank, self.world)
            module._fetch = module._read = reader
        if self.init is not None:
            self.init(worker_id)


def arm_dataset_import(plan: DataPlan | None, rank: int, world: int) -> None:
    """In a process multiprocessing spawned: the dataset module, once imported, has the
    launch's constants and the grader's reader (unpickling the preparation data calls this,
    before the script is imported again)."""
    sys.meta_path.insert(0, _DatasetImport(plan, rank, world))


class _ChildPlan:
    """Rides in multiprocessing's preparation data: unpickled in the child, it arms the
    dataset import there. It unpickles before the child has the parent's sys.path, so it is a
    call of exec on a few lines (in a dict of their own) that find this package from its own
    folder and never fail the child: any spawned process reads it, not only a worker."""

    def __init__(self, plan: DataPlan | None, rank: int, world: int) -> None:
        root = str(Path(__file__).resolve().parents[2])
        plan_text = plan.to_env() if plan is not None else None
        self.code = (
            "try:\n"
            "    import sys\n"
            f"    sys.path.insert(0, {root!r})  # prepare() sets the parent's path next\n"
            "    from trainer_lab.usercode.dataplan import DataPlan\n"
            "    from trainer_lab.usercode.loader_workers import arm_dataset_import\n"
            f"    arm_dataset_import(DataPlan.from_env({plan_text!r}), {rank}, {world})\n"
            "except Exception:\n"
            "    pass\n"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (exec, (self.code, {}))


class _DatasetImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, plan: DataPlan | None, rank: int, world: int) -> None:
        self.plan, self.rank, self.world = plan, rank, world
        self.loader: Any = None

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> Any:
        if fullname != protocol.DATASET_MODULE or self.loader is not None:
            return None
        sys.meta_path.remove(self)  # the module's own spec, found the usual way
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        self.loader, spec.loader = spec.loader, self
        return spec

    def create_module(self, spec: Any) -> ModuleType | None:
        return self.loader.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        if hasattr(module, "_sample"):
            set_plan_constants(module, self.plan)
            reader = grader_reader(module, self.plan, self.rank, self.world)
            module._fetch = module._read = reader  # type: ignore[attr-defined]


def install(record: Callable[[int], None], plan: DataPlan | None, rank: int, world: int) -> None:
    """Record each batch a multi-process DataLoader hands over, through `record` (one call per
    sample id), and give every worker the grader's reader."""
    iterator = dataloader._MultiProcessingDataLoaderIter
    base = dataloader._BaseDataLoaderIter
    next_index, try_put, next_data, reset = (
        base._next_index,
        iterator._try_put_index,
        iterator._next_data,
        iterator._reset,
    )

    def _next_index(self: Any) -> Any:
        index = next_index(self)
        self._drill_last_index = index
        return index

    def _try_put_index(self: Any) -> None:
        before = self._send_idx
        try_put(self)
        if self._send_idx == before + 1:
            getattr(self, _SENT)[before] = self._drill_last_index

    def _next_data(self: Any) -> Any:
        data = next_data(self)
        if getattr(self, "_in_order", True):  # handed over in send order: the one just received
            for sample in _ids(getattr(self, _SENT, {}).pop(self._rcvd_idx - 1, None)):
                record(sample)
        return data

    def _reset(self: Any, *args: Any, **kwargs: Any) -> None:
        setattr(self, _SENT, {})  # the send indices start again at 0
        reset(self, *args, **kwargs)

    base._next_index = _next_index  # type: ignore[method-assign]
    iterator._try_put_index = _try_put_index  # type: ignore[method-assign]
    iterator._next_data = _next_data  # type: ignore[method-assign]
    iterator._reset = _reset  # type: ignore[method-assign]

    loader_init = torch.utils.data.DataLoader.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        loader_init(self, *args, **kwargs)
        if self.num_workers > 0:
            self.worker_init_fn = WorkerReader(self.worker_init_fn, plan, rank, world)

    torch.utils.data.DataLoader.__init__ = __init__  # type: ignore[method-assign]

    preparation = multiprocessing.spawn.get_preparation_data

    def get_preparation_data(name: str) -> dict[str, Any]:
        data = preparation(name)
        data["drill_dataset"] = _ChildPlan(plan, rank, world)  # prepare() ignores the key
        return data

    multiprocessing.spawn.get_preparation_data = get_preparation_data


def watch_workers(on_workers: Callable[[str], None]) -> None:
    """Tell `on_workers` when a multi-process DataLoader iterator's worker processes start (its
    __init__ launches them) and are ready (the first batch it hands over), and when it shuts
    them down (and is done): the teardown guard is held meanwhile (teardown.py). Never raises
    into the script."""
    iterator = dataloader._MultiProcessingDataLoaderIter
    start, next_data, shutdown = (
        iterator.__init__,
        iterator._next_data,
        iterator._shutdown_workers,
    )

    def tell(event: str) -> None:
        with contextlib.suppress(Exception):
            on_workers(event)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        start(self, *args, **kwargs)
        self._drill_ready = False
        tell("start")

    def _next_data(self: Any) -> Any:
        data = next_data(self)
        if not getattr(self, "_drill_ready", True):
            self._drill_ready = True
            tell("ready")
        return data

    def _shutdown_workers(self: Any) -> None:
        if getattr(self, "_shutdown", True) or not getattr(self, "_workers", None):
            return shutdown(self)
        tell("stop")
        teardown.hold()
        try:
            return shutdown(self)
        finally:
            teardown.release()
            tell("stopped")

    iterator.__init__ = __init__  # type: ignore[method-assign]
    iterator._next_data = _next_data  # type: ignore[method-assign]
    iterator._shutdown_workers = _shutdown_workers  # type: ignore[method-assign]


def _ids(index: Any) -> list[int]:
    """The sample ids in a sampler's index: a batch (a list, a tuple, a tensor) or one id;
    whatever is not an id is left out (this runs inside the script: it never raises)."""
    if index is None:
        return []
    if hasattr(index, "tolist"):  # a tensor or an array of ids
        index = index.tolist()
    found = []
    for item in index if isinstance(index, list | tuple) else [index]:
        if isinstance(item, bool):
            continue
        try:
            found.append(operator.index(item))
        except TypeError:
            continue
    return found
