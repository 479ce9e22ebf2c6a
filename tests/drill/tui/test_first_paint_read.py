"""The first-paint read and the services' deck load run without the cyclic garbage collector
(issue 40, drill.gc_pause): the objects they make all live on, so a collection meanwhile only
walks them. It is on again after, also when the read fails."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from drill.errors import DrillError
from drill.tui.app import DrillApp
from drill.tui.startup import Startup


def _spy_on_read(monkeypatch: pytest.MonkeyPatch, fail: bool = False) -> list[bool]:
    collecting: list[bool] = []
    real = Startup.first_paint

    def first_paint(self: Startup, deck_id: str | None = None) -> object:
        collecting.append(gc.isenabled())
        if fail:
            raise DrillError("the decks are gone")
        return real(self, deck_id)

    monkeypatch.setattr(Startup, "first_paint", first_paint)
    return collecting


def test_the_first_paint_read_runs_without_cyclic_collections(
    make_app: Callable[..., DrillApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    collecting = _spy_on_read(monkeypatch)
    assert gc.isenabled()
    make_app(start_review="all")
    assert collecting == [False]
    assert gc.isenabled()


def test_the_collector_is_back_on_when_the_read_fails(
    make_app: Callable[..., DrillApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    collecting = _spy_on_read(monkeypatch, fail=True)
    with pytest.raises(DrillError, match="the decks are gone"):
        make_app(start_review="all")
    assert collecting == [False]
    assert gc.isenabled()


def test_the_services_load_validates_the_decks_without_cyclic_collections(
    deck_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a cold start validates every card (YAML nodes, models, cache entries): issue 40
    from drill import services
    from drill.decks import loader

    collecting: list[bool] = []
    real = loader.load_decks

    def load_decks(*args: Any, **kwargs: Any) -> Any:
        collecting.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(loader, "load_decks", load_decks)
    loaded = services.load_services([deck_dir], include_bundled=False)
    loaded.close()
    assert collecting == [False]
    assert gc.isenabled()
