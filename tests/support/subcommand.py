"""Run `drill` (the real drill.cli.main.main, its error handling and exit codes) with extra
subcommand modules registered, for commands the integrator has not wired into main.py yet (and
unchanged once it has: a module main.py imports is left to main.py)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from types import ModuleType, SimpleNamespace

import pytest

import drill.cli.main as cli_main


def drill_main(
    monkeypatch: pytest.MonkeyPatch, *modules: ModuleType
) -> Callable[[Sequence[str]], int]:
    real = cli_main.verify
    wired = [m for m in modules if any(v is m for v in vars(cli_main).values())]
    extra = [m for m in modules if m not in wired]

    def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
        real.register(subparsers)
        for module in extra:
            module.register(subparsers)

    monkeypatch.setattr(cli_main, "verify", SimpleNamespace(register=register))
    return cli_main.main
