"""Open a file in $VISUAL / $EDITOR with the app suspended (coding round, exercises)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from textual.app import App, SuspendNotSupported


def edit_externally(app: App, path: Path) -> str | None:
    """Run the editor on `path` and wait for it; None when it ran, else a notice to show."""
    editor = shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")
    try:
        with app.suspend():
            subprocess.run([*editor, str(path)], check=False)
    except SuspendNotSupported:
        return f"ctrl+e needs a terminal; the file is {path}"
    except (OSError, subprocess.SubprocessError) as error:
        return f"could not start the editor: {error}"
    return None
