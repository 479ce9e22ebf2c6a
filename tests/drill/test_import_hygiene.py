"""Dependency rules, checked in fresh interpreters: the CLI and the first-paint path import no
torch, and first paint imports none of sqlmodel/pydantic/yaml; storage imports no textual."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from drill.decks.loader import load_decks

PROBE = """
import json, sys
{body}
heavy = ("torch", "sqlmodel", "sqlalchemy", "pydantic", "yaml", "textual", "textual_plotext")
print(json.dumps(sorted(m for m in heavy if m in sys.modules)))
"""


def loaded_after(body: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(body=body)],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_cli_with_plugins_imports_nothing_heavy() -> None:
    assert loaded_after("import drill.cli.main; drill.cli.main.build_parser()") == []


def test_first_paint_path_is_stdlib_only(deck_dir: Path) -> None:
    load_decks([deck_dir])  # validate once: fills the deck cache
    body = f"""
from drill.review.due import first_paint
paint = first_paint([{str(deck_dir)!r}])
assert paint is not None and paint.first is not None, paint
"""
    assert loaded_after(body) == []


def test_tui_app_imports_no_torch_nor_sqlmodel() -> None:
    if importlib.util.find_spec("drill.tui.app") is None:
        # helper B's module is not there yet: the CLI must then fail clearly instead.
        done = subprocess.run(
            [sys.executable, "-m", "drill"], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 2 and "drill.tui.app" in done.stderr
        return
    loaded = loaded_after("import drill.tui.app")
    assert "torch" not in loaded and "sqlmodel" not in loaded


def test_review_domain_and_storage_import_no_torch_or_textual() -> None:
    loaded = loaded_after(
        "import drill.review.session, drill.decks.loader, drill.cli.main, "
        "storage.db, storage.snapshot"
    )
    assert "torch" not in loaded and "textual" not in loaded
