"""A fake $EDITOR that records the argv it is given, and file names that must reach an editor
as data (issue 32, item 1)."""

from __future__ import annotations

import sys
from pathlib import Path

# names an editor could read as an option or a command, or a shell as words
HOSTILE_NAMES = [
    "+!touch X.yaml",
    "+4",
    "-c",
    "--cmd=!touch X",
    "-",
    "a deck with spaces.yaml",
    "new\nline.yaml",
    "q'uo\"te.yaml",
    "$(touch X).yaml",
]


def fake_editor(bin_dir: Path, name: str, log: Path) -> Path:
    """An editor called `name` that appends the argv it got to `log` (one JSON list a line)."""
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    script.chmod(0o755)
    return script
