"""The import-linter contracts in pyproject.toml catch what they promise: a copy of the tree
with one violation per contract breaks exactly that contract (the real tree is checked by
`lint-imports` in .ci/run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO

TUI_THROUGH_DOMAIN = "the TUI reaches storage and trainer_lab only through the domain"

VIOLATIONS: list[tuple[str, str, str]] = [
    ("drill layers", "drill/claims/zz_upward.py", "import drill.tui.app\n"),
    ("drill and storage never import torch", "storage/zz_torch.py", "import torch\n"),
    ("trainer_lab never imports drill", "trainer_lab/zz_app.py", "import drill.paths\n"),
    ("torch only in trainer_lab.train", "trainer_lab/labs/zz_lab/__init__.py", "import torch\n"),
    # a lab's orchestration is torch-free too (by pattern; the copy's own drive.py is replaced)
    (
        "torch only in trainer_lab.train, the labs'",
        "trainer_lab/labs/sampler/drive.py",
        "import torch\n",
    ),
    # outside drill.tui.screens: the contract covers the whole TUI
    (TUI_THROUGH_DOMAIN, "drill/tui/zz_db.py", "import storage.db\n"),
    # indirect: drill.database is no domain package, only a way to storage
    (TUI_THROUGH_DOMAIN, "drill/tui/zz_backup.py", "import drill.database\n"),
    (TUI_THROUGH_DOMAIN, "drill/tui/screens/zz_result.py", "import trainer_lab.result\n"),
    ("only drill.tui and drill.cli import textual or rich", "drill/labs/zz_ui.py", "import rich\n"),
    ("only storage talks to SQLModel", "drill/review/zz_sql.py", "import sqlmodel\n"),
    ("storage imports neither drill nor trainer_lab", "storage/zz_up.py", "import drill.paths\n"),
]


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    lint = Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": str(root), "NO_COLOR": "1"}
    return subprocess.run(
        [str(lint), "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )


def copy_tree(dest: Path) -> None:
    for package in ("drill", "storage", "trainer_lab", "decks"):
        shutil.copytree(
            REPO / package, dest / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(REPO / "pyproject.toml", dest / "pyproject.toml")


def test_each_contract_breaks_on_its_violation(tmp_path: Path) -> None:
    copy_tree(tmp_path)
    for _, relative, source in VIOLATIONS:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    broken = result.stdout.split("Broken contracts")[-1]
    for contract, relative, _ in VIOLATIONS:
        module = relative.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        assert contract in broken, f"{contract} was not broken by {module}"
        assert module in broken, f"{module} not named in the report"


def test_the_ui_contract_names_every_drill_module_but_tui_and_cli() -> None:
    """A new package under drill/ is UI-free unless it is added to tui or cli."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    (contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["id"] == "ui-libraries-in-tui-and-cli"
    ]
    present = {
        f"drill.{path.stem if path.suffix == '.py' else path.name}"
        for path in (REPO / "drill").iterdir()
        if (path.suffix == ".py" or (path / "__init__.py").is_file())
        and path.name not in ("__init__.py", "__main__.py", "tui", "cli")
    }
    assert set(contract["source_modules"]) == present
