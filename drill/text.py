"""Text from outside is text: deck files, database rows and run output are shown as typed.

`printable()` is the one rule for control characters, used wherever such text reaches a
terminal (the TUI through drill.tui.plain, the CLI through drill.cli.output): every C0 control
character but newline and tab (so ESC and CR too), DEL and every C1 control character
(U+0080-U+009F, the 8-bit CSI U+009B among them) becomes U+FFFD, the replacement character, and
so does a lone surrogate (a file name's byte that is not UTF-8), which no terminal can take.
One character for one: lengths, columns and Rich spans over the text stay where they were, and
no escape sequence (a window title, a clipboard write, a cleared screen) reaches the terminal.
Markup is the UI's side of the rule: drill.tui.plain builds Rich `Text` or Textual `Content`,
never markup; Anki's HTML is drill.review.export_anki's (html_text).

UI-free: no textual or rich here (pyproject.toml's import-linter contracts).
"""

from __future__ import annotations

PLACEHOLDER = "\ufffd"
KEPT = frozenset("\n\t")
CONTROL = frozenset(
    chr(code) for code in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)) if chr(code) not in KEPT
)
# A lone surrogate (U+D800-U+DFFF) is how Python decodes a file name's bytes that are not UTF-8
# (os.fsdecode's surrogateescape): it cannot be written to a UTF-8 terminal or file.
SURROGATES = frozenset(chr(code) for code in range(0xD800, 0xE000))
_TABLE = str.maketrans(dict.fromkeys(CONTROL | SURROGATES, PLACEHOLDER))


def printable(text: str) -> str:
    """`text` with every control character but newline and tab, and every lone surrogate (a
    non-UTF-8 byte of a file name), replaced by U+FFFD."""
    return text.translate(_TABLE)
