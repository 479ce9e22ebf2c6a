"""Helpers shared by the TUI tests."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any


def run_async(test: Callable[..., Any]) -> Callable[..., None]:
    """No async pytest plugin is installed: run the async test body under asyncio.run."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return wrapper
