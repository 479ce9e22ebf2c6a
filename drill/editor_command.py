"""The command line that opens a file in the user's editor ($VISUAL, else $EDITOR, else vi).
UI-free; every editor drill starts (the card browser, the exercise and coding round screens)
gets its argv here.

A file's name comes from disk and is data. With decks given as `.`, a deck named
`+!touch X.yaml` reached vim as `vim +4 '+!touch X.yaml'`, and vim ran the command. So the path
is always absolute: it starts with "/", which no editor reads as an option or a `+command`.
Editors whose own parser is known to take `--` (vim's family, emacs, emacsclient) also get it,
after `+LINE`: nothing after it is read as an option. Others (nano's getopt does not permute on
every system) rely on the absolute path alone.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

# editors that take `+LINE FILE` to open a file at a line
LINE_ARG_EDITORS = {"vi", "vim", "nvim", "gvim", "view", "nano", "pico", "emacs", "emacsclient",
                    "mg", "micro", "kak", "joe", "jed", "ne", "ed"}  # fmt: skip
# editors known to end their options at `--`, a `+LINE` before it still read as one
END_OF_OPTIONS_EDITORS = {"vi", "vim", "nvim", "gvim", "view", "emacs", "emacsclient"}


def editor_command(path: Path, line: int | None = None, editor: str | None = None) -> list[str]:
    """The argv that opens `path` (at `line`, for editors known to take `+LINE`) in `editor`,
    else $VISUAL / $EDITOR / vi. An editor setting shlex cannot split is one program name."""
    editor = editor or os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        argv = shlex.split(editor)
    except ValueError:
        argv = [editor]
    argv = argv or ["vi"]
    name = Path(argv[0]).name
    at_line = [f"+{max(1, line)}"] if line is not None and name in LINE_ARG_EDITORS else []
    end = ["--"] if name in END_OF_OPTIONS_EDITORS else []
    return [*argv, *at_line, *end, str(Path(path).absolute())]
