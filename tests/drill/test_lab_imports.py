"""The lab screens and their domain import neither torch nor textual_plotext (plots load it
when drawn); the domain and storage import no textual."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
{body}
print(json.dumps(sorted(m for m in ("torch", "textual", "textual_plotext") if m in sys.modules)))
"""


def loaded_after(body: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(body=body)],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_lab_screens_import_no_torch_nor_plotext() -> None:
    body = (
        "import drill.tui.screens.lab_panel, drill.tui.screens.lab_results, drill.tui.screens.labs"
    )
    assert loaded_after(body) == ["textual"]


def test_lab_domain_and_storage_import_no_textual() -> None:
    body = "import drill.labs.controller, drill.labs.runs, drill.labs.plots, storage.run_tables"
    assert loaded_after(body) == []
