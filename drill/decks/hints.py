"""The command that reports a deck file's problems, for the hints beside a skipped deck.

`drill decks check` alone checks the bundled decks and DRILL_DECKS (and --decks given to it); a
deck loaded through `--decks DIR` of another command (the app, `drill due`) is not among them,
so a hint that said only "run `drill decks check`" sent the user to a check that said "ok". The
hint names the files instead: `drill decks check` checks the files it is given, whatever loaded
them.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from pathlib import Path

from drill.text import printable


def check_command(paths: Iterable[Path]) -> str:
    """`drill decks check FILE...` for these deck files (each once, quoted for a POSIX shell,
    control characters made visible), or plain `drill decks check` when there are none."""
    names = [shlex.quote(printable(str(path))) for path in dict.fromkeys(paths)]
    return " ".join(["drill decks check", *names])
