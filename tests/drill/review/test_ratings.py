"""The rating names are spelled in one mapping (drill/review/ratings.py) that every screen,
report, service and CLI command reads."""

from __future__ import annotations

import ast
from pathlib import Path

from drill.review.ratings import RATING_NAMES
from tests.support.paths import REPO

NAMES = set(RATING_NAMES.values())


def rating_maps(source: str) -> list[int]:
    """Lines of dict literals that map to two or more rating names."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Dict)
        and sum(isinstance(v, ast.Constant) and v.value in NAMES for v in node.values) >= 2
    ]


def test_the_names_are_anki_s_four() -> None:
    assert RATING_NAMES == {1: "Again", 2: "Hard", 3: "Good", 4: "Easy"}


def test_the_scan_finds_a_second_mapping() -> None:
    assert rating_maps('NAMES = {1: "Again", 2: "Hard"}\n') == [1]
    assert rating_maps('COLOURS = {1: "red", 2: "Again"}\n') == []


def test_no_other_module_spells_out_the_rating_names() -> None:
    home = REPO / "drill" / "review" / "ratings.py"
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted((REPO / "drill").rglob("*.py"))
        if path != home
        for line in rating_maps(Path(path).read_text())
    ]
    assert found == [], "import RATING_NAMES from drill.review.ratings:\n" + "\n".join(found)
