"""Deck files a hostile (or unlucky) user may leave in a deck folder, with the problem line
drill must answer for each. Small ones live in tests/drill/decks/corpus/; the rest (huge,
deep, directories, links, FIFOs) are made on the spot."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "drill" / "decks" / "corpus"

HEAD = "deck: {deck}\ntitle: T\ncards:\n  - id: {deck}-1\n    level: easy\n    front: Q\n"
GOOD_DECK = "deck: good\ntitle: Good deck\ncards:\n  - id: good-1\n    level: easy\n"
GOOD_DECK += "    front: Q\n    back: A\n"

# file name -> the problem after `path:`, as `decks check` prints it (link checks on)
CORPUS_PROBLEMS = {
    "alias-bomb.yaml": "7: more than 200000 values once aliases are expanded",
    "bad-timestamp.yaml": "7: not a valid timestamp: "
    "'NoneType' object has no attribute 'groupdict'",
    "huge-int.yaml": "8: a number of 5000 characters is longer than 100 (quote it if it is text)",
    "latin1.yaml": "7: not UTF-8 text (byte 0xe9); save it as UTF-8",
    "nan-claim.yaml": "8: card nanclaim-1: expect 'loss_jump_ratio < nan': claim "
    "'loss_jump_ratio < nan': < nan says nothing (nan and inf only go with == and !=)",
    "nan-param.yaml": "8: card nanparam-1: lab.params: dropout: nan is not a finite number",
    "self-alias.yaml": "8: alias *t refers to a value that contains it",
    "surrogate.yaml": "7: YAML syntax error: found invalid Unicode character escape code "
    "(while parsing a quoted scalar)",
    "yes-back.yaml": "7: card yesdeck-1: back: Input should be a valid string "
    "(YAML read `yes` as true: quote it)",
}


def made_problems(directory: Path) -> dict[str, str]:
    """Write the generated hostile files into `directory`; name -> expected problem."""
    deep = HEAD.format(deck="deep") + "    back: A\n    tags: " + "[" * 30_000 + "]" * 30_000
    (directory / "deep-30000.yaml").write_text(deep + "\n")
    deeper_than_python = HEAD.format(deck="deep3k") + "    back: A\n    tags: " + "[" * 3000
    (directory / "deep-3000.yaml").write_text(deeper_than_python + "]" * 3000 + "\n")
    sexagesimal = HEAD.format(deck="sexa") + "    back: A\n    x: 1" + ":0" * 1_000_000
    (directory / "sexagesimal.yaml").write_text(sexagesimal + "\n")
    (directory / "folder.yaml").mkdir()
    os.symlink("loop.yaml", directory / "loop.yaml")
    os.symlink("/nonexistent/deck.yaml", directory / "dangling.yaml")
    os.mkfifo(directory / "fifo.yaml")
    return {
        "dangling.yaml": "1: broken symlink (its target /nonexistent/deck.yaml does not exist)",
        "deep-3000.yaml": "8: nesting deeper than 32",
        "deep-30000.yaml": "8: nesting deeper than 32",
        "fifo.yaml": "1: not a regular file",
        "folder.yaml": "1: is a directory, not a deck file "
        "(rename it or move it out of the deck folder)",
        "loop.yaml": "1: symlink loop (the link leads back to itself)",
        "sexagesimal.yaml": "8: a number of 2000001 characters is longer than 100 "
        "(quote it if it is text)",
    }


def hostile_folder(directory: Path, *, with_good: bool = True) -> dict[str, str]:
    """Every hostile file (and a good deck) in `directory`; name -> expected problem."""
    directory.mkdir(parents=True, exist_ok=True)
    for path in CORPUS.glob("*.yaml"):
        shutil.copyfile(path, directory / path.name)
    if with_good:
        (directory / "good.yaml").write_text(GOOD_DECK)
    return {**CORPUS_PROBLEMS, **made_problems(directory)}


# --- text that must be shown as text (DESIGN.md, "Text from outside is text") -------------------
# A valid deck whose every string is hostile: Rich/Textual markup ("[/x]" once crashed the app,
# "[link=...]" crashed it on opening the deck, "C++ [advanced]" lost its brackets), terminal
# escapes (OSC 2 window title, OSC 52 clipboard write, CSI 2J clear screen, the 8-bit CSI 0x9b)
# and HTML (which Anki would render). YAML's double-quoted escapes (\e, \a, \x9b) write them.
MARKUP = r"C++ [advanced] [/x] [bold]b[/bold] [link=file:///etc/passwd]L[/link] [$accent]v"
ESCAPES = r"\e]2;pwned\a \e]52;c;cGF5bG9hZA==\a \e[2J \x9b2J \x7f \x85"
HTML = "<img src=x onerror=alert(1)>"
HOSTILE = f"{MARKUP} {ESCAPES} {HTML}"
SHOWN = "C++ [advanced] [/x] [bold]b[/bold] [link=file:///etc/passwd]L[/link]"  # as typed
TITLE_SHOWN = "C++ [advanced] [/x]"  # the start of the deck title, which a narrow cell may cut

HOSTILE_TEXT_DECK = f"""\
deck: hostile
title: "{HOSTILE}"
description: "{HOSTILE}"
cards:
  - id: hostile-lab
    level: easy
    tags: ["{MARKUP}", "\\e]2;tag\\a", "{HTML}"]
    front: "{HOSTILE}"
    back: "{HOSTILE}"
    more: "{HOSTILE}"
    rubric: ["{HOSTILE}", "C++ [advanced]"]
    lab:
      run: ddp-baseline
      params: {{steps: 4}}
      world_size: 2
      expect: ["max_rel_loss_diff <= 1e-5"]
    predict:
      ask: "{HOSTILE}"
      choices:
        - {{text: "{HOSTILE}", when: "grad_mismatch_steps == 0"}}
        - {{text: "[/y] \\x9b2J", when: "grad_mismatch_steps > 0"}}
  - id: hostile-plain
    level: medium
    tags: ["[/z]"]
    front: "{HOSTILE}"
    back: "{HOSTILE}"
"""

# What the hostile text is once YAML has read it (for results and run output in tests).
HOSTILE_VALUE = (
    "C++ [advanced] [/x] [bold]b[/bold] [link=file:///etc/passwd]L[/link] [$accent]v "
    "\x1b]2;pwned\x07 \x1b]52;c;cGF5bG9hZA==\x07 \x1b[2J \x9b2J \x7f \x85 " + HTML
)

# A lab result whose run output is hostile (check names and details, an error, observations).
HOSTILE_RESULT: dict[str, object] = {
    "lab": "ddp-baseline",
    "status": "failed",
    "observations": {
        "max_rel_loss_diff": 1.2e-7,
        "grad_mismatch_steps": 0,
        "steps": 4,
        HOSTILE_VALUE: HOSTILE_VALUE,
    },
    "checks": [
        {"name": HOSTILE_VALUE, "passed": False, "detail": HOSTILE_VALUE},
        {"name": "losses_match", "passed": True, "detail": HOSTILE_VALUE},
    ],
    "error": {"message": HOSTILE_VALUE},
    "duration_s": 1.5,
}

CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def write_hostile_text_deck(directory: Path) -> Path:
    """The hostile-text deck, alone in `directory` (valid: `drill decks check` passes it)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "hostile.yaml"
    path.write_text(HOSTILE_TEXT_DECK)
    return path


def control_chars(text: str) -> list[str]:
    """The control characters (but newline and tab) in `text`: none may reach a terminal."""
    return CONTROL_CHARS.findall(text)
