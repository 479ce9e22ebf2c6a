"""drill.text.printable: every C0 control character but newline and tab, DEL and every C1
control character becomes U+FFFD, one for one; everything else is kept as it is."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from drill.text import CONTROL, PLACEHOLDER, printable


def test_escapes_lose_their_escape_character_and_nothing_else() -> None:
    assert printable("\x1b]2;title\x07") == "\ufffd]2;title\ufffd"  # OSC 2: window title
    assert printable("\x1b]52;c;aGk=\x07") == "\ufffd]52;c;aGk=\ufffd"  # OSC 52: clipboard
    assert printable("\x1b[2J\x9b2J") == "\ufffd[2J\ufffd2J"  # CSI 2J, 7-bit and 8-bit
    assert printable("a\rb\x00c\x7fd\x85e") == "a\ufffdb\ufffdc\ufffdd\ufffde"


def test_text_newlines_tabs_brackets_and_unicode_stay() -> None:
    text = "C++ [advanced] [/x]\n\tindented · é 中 😀 <b>&amp;</b> \\"
    assert printable(text) == text
    assert printable("\x1b") != "\x1b"


def test_the_set_is_c0_but_newline_and_tab_del_and_c1() -> None:
    codes = {ord(c) for c in CONTROL}
    assert codes == set(range(0x20)) - {0x09, 0x0A} | {0x7F} | set(range(0x80, 0xA0))
    assert PLACEHOLDER == "\ufffd"


@given(st.text())
def test_one_for_one_and_nothing_left_to_replace(text: str) -> None:
    shown = printable(text)
    assert len(shown) == len(text) and printable(shown) == shown
    pairs = zip(text, shown, strict=True)
    assert all(a == b or (a in CONTROL and b == PLACEHOLDER) for a, b in pairs)


def test_a_lone_surrogate_from_a_non_utf8_file_name_is_replaced_one_for_one() -> None:
    import os

    from drill.text import printable

    name = os.fsdecode(b"caf\xe9.ipynb")  # how Python holds a name's byte that is not UTF-8
    assert printable(name) == "caf\ufffd.ipynb"
    assert printable("café.ipynb") == "café.ipynb"
    printable(name).encode("utf-8")  # writable to a UTF-8 terminal or file
