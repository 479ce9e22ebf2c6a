"""The editors of the user's file (coding round, exercises): $VISUAL / $EDITOR with the app
suspended, and what a screen says when drill.watched_file reports a change on disk."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from textual.app import App, SuspendNotSupported
from textual.screen import Screen

from drill.editor_command import editor_command
from drill.watched_file import Change


def edit_externally(app: App, path: Path) -> str | None:
    """Run the editor on `path` and wait for it; None when it ran, else a notice to show."""
    command = editor_command(path)  # the path absolute, options ended: a name is data
    try:
        with app.suspend():
            subprocess.run(command, check=False)
    except SuspendNotSupported:
        return f"ctrl+e needs a terminal; the file is {path}"
    except (OSError, subprocess.SubprocessError) as error:
        return f"could not start the editor: {error}"
    return None


def change_notice(change: Change, name: str) -> tuple[str, bool]:
    """The notice for a change of the file `name` on disk, and whether it is a warning."""
    if change.kind == "reloaded":
        return f"{name} changed on disk: reloaded.", False
    if change.kind == "conflict":
        return (
            f"{name} changed on disk and the editor has unsaved edits: ctrl+l loads the file, "
            "ctrl+s keeps the editor's version.",
            True,
        )
    return f"{change.reason} (the editor keeps its text)", True


def tell_change(
    screen: Screen, change: Change | None, name: str, show: Callable[[str | None], None]
) -> None:
    """What a watched file's poll or save found, applied the same way by every editor screen:
    a reload puts the file's text in the editor (`show`), and every change is notified."""
    if change is None:
        return
    if change.kind == "reloaded":
        show(change.text)
    message, warning = change_notice(change, name)
    screen.notify(message, severity="warning" if warning else "information", timeout=10)
