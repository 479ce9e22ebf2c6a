"""The catalogue reads specs only: a lab's drive.py and worker.py load when the lab runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trainer_lab.catalogue import CATALOGUE, CATALOGUE_ERRORS

REPO = Path(__file__).resolve().parents[2]

LOADED = (
    "import json, sys\n"
    "{imports}\n"
    "labs = [m for m in sys.modules if m.startswith('trainer_lab.labs.')]\n"
    "print(json.dumps({{'torch': 'torch' in sys.modules, "
    "'drive_or_worker': sorted(m for m in labs if m.rsplit('.', 1)[-1] in ('drive', 'worker')), "
    "'labs': len(labs)}}))\n"
)


def _loaded_after(imports: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", LOADED.format(imports=imports)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("module", ["trainer_lab.catalogue", "drill.decks.links"])
def test_reading_the_catalogue_loads_no_driver_and_no_worker(module: str) -> None:
    loaded = _loaded_after(f"import {module}\nimport trainer_lab.catalogue as c\nc.CATALOGUE")
    assert loaded["drive_or_worker"] == []
    assert loaded["torch"] is False
    assert loaded["labs"] >= len(CATALOGUE)  # the specs themselves were imported


def test_every_driver_imports_without_torch() -> None:
    modules = sorted({spec.driver.partition(":")[0] for spec in CATALOGUE.values()})
    loaded = _loaded_after("\n".join(f"import {m}" for m in modules))
    assert loaded["torch"] is False
    assert len(loaded["drive_or_worker"]) == len(modules)


def test_every_spec_points_at_its_packages_drive_function() -> None:
    assert CATALOGUE_ERRORS == {}
    for spec in CATALOGUE.values():
        module, _, func = spec.driver.partition(":")
        assert module.startswith("trainer_lab.labs.") and module.endswith(".drive"), spec.name
        assert func == "drive", spec.name
