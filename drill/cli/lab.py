"""`drill lab list | show NAME | run NAME`: the lab subcommands (torch-free; labs run in
subprocesses). Registered by drill/cli/main.py through `register(subparsers)`.

Exit codes of `drill lab run`: 0 every check passed, 1 a check failed, 2 usage error
(unknown lab, unknown param, bad value), 3 the lab errored or timed out; stopped by Ctrl-C,
SIGTERM or SIGHUP, the lab records what it observed so far (result.json says `cancelled`) and
drill exits 128 + the signal's number (drill.cli.signals).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.cli.output import say, text
from drill.cli.signals import signals_cancel
from drill.files import require_parent_dir
from drill.text import printable

if TYPE_CHECKING:
    from trainer_lab.result import LabResult

EXIT_OK, EXIT_USAGE, EXIT_LAB_ERROR = 0, 2, 3  # 1 (a check failed) comes from EXIT_FOR_STATUS


def register(subparsers: Any) -> None:
    lab = subparsers.add_parser(
        "lab",
        help="run labs that check cards' claims against real torch.distributed training",
        description="Labs launch real torch.distributed processes (gloo on CPU, NCCL on GPU) "
        "and check claims against what happened. Ranks are forked from a warm launcher built on "
        "torch.distributed.elastic (torchrun's own machinery) on machines without GPUs; "
        "--torchrun, TRAINER_LAB_LAUNCHER=torchrun or a GPU machine start them under plain "
        "torchrun.",
    )
    lab.set_defaults(func=lambda args: _usage(lab))
    sub = lab.add_subparsers(dest="lab_command", metavar="{list,show,run}")
    p_list = sub.add_parser("list", help="list the labs", description="List the labs.")
    p_list.add_argument("--json", action="store_true", help="print the catalogue as JSON")
    p_list.set_defaults(func=cmd_list)
    p_show = sub.add_parser(
        "show", help="show a lab's params, observations and checks", description="Show a lab."
    )
    p_show.add_argument("name", help="lab name (see `drill lab list`)")
    p_show.set_defaults(func=cmd_show)
    p_run = sub.add_parser(
        "run",
        help="run a lab",
        description="Run a lab and report its checks. Exit 0: all checks passed; 1: a check "
        "failed; 2: usage error; 3: the lab errored or timed out.",
    )
    p_run.add_argument("name", help="lab name (see `drill lab list`)")
    p_run.add_argument("--world-size", type=int, default=None, help="number of ranks")
    p_run.add_argument(
        "--nnodes",
        type=int,
        default=None,
        help="nodes to run on: 2 runs a cluster lab on an emulated cluster of network "
        "namespaces on this machine (loopback addresses when not root); see `drill lab list`",
    )
    p_run.add_argument(
        "--node-rank",
        type=int,
        default=None,
        metavar="N",
        help="with --nnodes and --rdzv-endpoint: run only node N's torchrun agent of a cluster "
        "lab, here (one command per real machine; node 0 hosts the rendezvous; --out must be a "
        "folder every node shares); the lab's fault is done by hand, as printed",
    )
    p_run.add_argument(
        "--rdzv-endpoint",
        default=None,
        metavar="HOST:PORT",
        help="node 0's address for --node-rank (and --print-commands)",
    )
    p_run.add_argument(
        "--print-commands",
        action="store_true",
        help="with --nnodes: print the torchrun command each real machine runs for this "
        "cluster lab (and the spec file to write), then exit",
    )
    p_run.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="K=V",
        help="set a lab param (repeatable); see `drill lab show NAME`",
    )
    p_run.add_argument("--json", action="store_true", help="print result.json to stdout")
    p_run.add_argument("--out", type=Path, default=None, help="run directory")
    p_run.add_argument("--timeout", type=float, default=None, help="deadline in seconds")
    p_run.add_argument(
        "--torchrun",
        action="store_true",
        help="start the driver and every launch cold, under plain torchrun, instead of forking "
        "ranks from the warm launcher (what multi-node runs use; same checks, slower start)",
    )
    p_run.set_defaults(func=cmd_run)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return EXIT_USAGE


def _error(message: str) -> int:
    say(f"drill lab: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def cmd_list(args: argparse.Namespace) -> int:
    from trainer_lab.catalogue import CATALOGUE, CATALOGUE_ERRORS

    for module, error in CATALOGUE_ERRORS.items():
        say(f"drill lab: warning: lab module {module} failed to load: {error}", file=sys.stderr)

    if args.json:
        rows = [
            {"name": s.name, "group": s.group, "summary": s.summary} for s in CATALOGUE.values()
        ]
        print(json.dumps(rows, indent=1))
        return EXIT_OK
    width = max((len(name) for name in CATALOGUE), default=0)
    groups: dict[str, list[Any]] = {}
    for spec in CATALOGUE.values():
        groups.setdefault(spec.group or "other", []).append(spec)
    for index, (group, specs) in enumerate(groups.items()):
        say(("\n" if index else "") + f"{group}:")
        for spec in specs:
            say(f"  {spec.name:<{width}}  {spec.summary}")
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    from trainer_lab.catalogue import get_lab
    from trainer_lab.catalogue_types import ParamError

    try:
        spec = get_lab(args.name)
    except ParamError as error:
        return _error(str(error))
    say(f"{spec.name}  ({spec.group or 'lab'})")
    say(f"  {spec.summary}")
    say(
        f"  world size: default {spec.default_world_size}, "
        f"range [{spec.min_world_size}, {spec.max_world_size}]; deadline {spec.timeout_s:g} s"
    )
    if spec.params:
        say("params:")
        for p in spec.params:
            say(f"  {p.name}={p.default!r}  ({p.describe()})  {p.help}")
    if spec.observations:
        say("observations:")
        for o in spec.observations:
            unit = f" [{o.unit}]" if o.unit else ""
            say(f"  {o.name}{unit}  {o.help}")
    if spec.checks:
        say("checks:")
        for c in spec.checks:
            say(f"  {c.name}  {c.help}")
    say(f"run: drill lab run {spec.name} --world-size {spec.default_world_size}")
    return EXIT_OK


def parse_params(spec: Any, pairs: list[str]) -> dict[str, Any]:
    """`k=v` strings to typed values (ParamError on unknown names or bad values)."""
    from trainer_lab.catalogue_types import ParamError

    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ParamError(f"--param expects K=V, got {pair!r}")
        params[key.strip()] = spec.param(key.strip()).parse(value.strip())
    return params


def default_out_dir(name: str) -> Path:
    from drill.paths import new_run_dir, runs_dir

    return new_run_dir(runs_dir(), name)


def _notice(line: str) -> None:
    say(f"drill lab: notice: {line}", file=sys.stderr, flush=True)


def cmd_run(args: argparse.Namespace) -> int:
    from drill.runs.recorder import RunRecorder
    from trainer_lab.api import prepare_run_dir
    from trainer_lab.catalogue import check_timeout, get_lab, resolve_world_size
    from trainer_lab.catalogue_types import ParamError
    from trainer_lab.cluster.nodes import check_nnodes
    from trainer_lab.devices import backend_choice
    from trainer_lab.result import EXIT_FOR_STATUS
    from trainer_lab.warm.start import LAUNCHER_ENV

    try:
        spec = get_lab(args.name)
        params = spec.resolve_params(parse_params(spec, args.param))
        world_size = resolve_world_size(spec, args.world_size)
        if args.nnodes is not None:
            check_nnodes(spec, args.nnodes)
        if args.print_commands or args.node_rank is not None or args.rdzv_endpoint is not None:
            return _real_nodes(args, spec, params)
        timeout = None if args.timeout is None else check_timeout(args.timeout, "--timeout")
        if args.out is not None:
            require_parent_dir(args.out)
        out_dir = args.out or default_out_dir(spec.name)
        prepare_run_dir(out_dir)
    except ParamError as error:
        return _error(str(error))
    except OSError as error:  # the default run directory's parent (DRILL_HOME) is unusable
        where = f" {error.filename}" if error.filename else ""
        return _error(f"run directory{where} cannot be used: {error.strerror or error}")
    if args.torchrun:  # the driver and every launch it makes, here and in its children
        os.environ[LAUNCHER_ENV] = "torchrun"
    header = f"{spec.name} · world size {world_size} · {backend_choice(world_size)}"
    say(header, file=sys.stderr if args.json else sys.stdout, flush=True)
    recorder = RunRecorder("lab", notify=_notice)
    recorder.start(spec.name, params, world_size, out_dir)  # the Labs screen lists CLI runs too
    try:
        result = _run_with_progress(spec.name, params, world_size, out_dir, timeout)
        recorder.finish_result(result, claims=[], observed_choice=None)
    except ParamError as error:  # e.g. the run directory was filled in the meantime
        return _error(str(error))
    finally:
        recorder.close()  # no result (an exception): the row is closed as cancelled
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print_summary(result)
    return EXIT_FOR_STATUS.get(result["status"], EXIT_LAB_ERROR)


def _real_nodes(args: argparse.Namespace, spec: Any, params: dict[str, Any]) -> int:
    """--print-commands, or one node (--node-rank, --rdzv-endpoint) of a cluster lab on a real
    machine; ParamError for a bad combination (the caller prints it, exit 2)."""
    from trainer_lab.catalogue_types import ParamError
    from trainer_lab.cluster import real_nodes

    if args.nnodes is None:
        raise ParamError("--print-commands, --node-rank and --rdzv-endpoint need --nnodes")
    real_nodes.real_plan(spec, params)  # a lab without a real-cluster form is refused here
    if args.print_commands:
        endpoint = args.rdzv_endpoint or "NODE0:29400"
        if args.rdzv_endpoint is not None:
            real_nodes.parse_endpoint(endpoint)
        out = args.out or Path(f"SHARED/drill-{spec.name}")
        for line in real_nodes.print_plan_lines(spec, params, args.nnodes, endpoint, out):
            say(line)
        return EXIT_OK
    if args.node_rank is None or args.rdzv_endpoint is None:
        raise ParamError("--node-rank and --rdzv-endpoint go together (one node of a cluster)")
    real_nodes.check_node_rank(args.node_rank, args.nnodes)
    real_nodes.parse_endpoint(args.rdzv_endpoint)
    out = args.out or default_out_dir(spec.name)
    code = real_nodes.run_node(
        spec, params, args.nnodes, args.node_rank, args.rdzv_endpoint, out, _notice
    )
    if code != 0:
        say(f"drill lab: node {args.node_rank}'s agent exited with {code}; events under {out}",
            file=sys.stderr)  # fmt: skip
        return EXIT_LAB_ERROR
    say(f"node {args.node_rank}'s agent finished; events under {out}")
    return EXIT_OK


def _run_with_progress(
    name: str, params: dict[str, Any], world_size: int, out_dir: Path, timeout: float | None
) -> LabResult:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from trainer_lab.api import ProgressEvent, run_lab

    console = Console(stderr=True)
    cancel = threading.Event()
    with Progress(
        SpinnerColumn(),
        TextColumn(f"[bold]{name}[/] W={world_size}"),
        BarColumn(),
        TextColumn("{task.description}", markup=False),  # the lab's progress messages
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("starting", total=None)

        def on_progress(event: ProgressEvent) -> None:
            message = printable(event.message)
            progress.update(
                task, description=message, completed=event.done, total=event.total or None
            )

        with signals_cancel(cancel, lambda line: console.print(text(line), highlight=False)):
            return run_lab(
                name, params, world_size, out_dir, timeout, on_progress=on_progress, cancel=cancel
            )


def print_summary(result: LabResult) -> None:
    from drill.runs.checklist import CheckList, plain_lines
    from trainer_lab.result import error_message, root_cause_traceback

    say(
        f"{result['lab']}: {result['status']} in {result['duration_s']:.1f} s "
        f"(world size {result['world_size']}, backend {result['env'].get('backend') or '-'})"
    )
    for line in plain_lines(CheckList.of(result, shared=False), layout="inline", indent="  "):
        say(line)
    message = error_message(result)
    if message:
        say(f"  error: {message}")
        trace = root_cause_traceback(result)
        if trace:
            say("  root cause traceback (last lines):")
            for line in trace.strip().splitlines()[-6:]:
                say(f"    {line}")
    say(f"  run dir: {result['out_dir']}")
