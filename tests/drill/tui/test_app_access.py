"""Screens reach the app through typed names (DrillHost, typeahead.HoldsKeys), never by looking
an attribute up by its name: `getattr(app, "release_keys")` hid a method the type checker and a
rename could not see."""

from __future__ import annotations

import ast

from tests.support.paths import REPO

LOOKUPS = ("getattr", "hasattr", "setattr", "delattr")


def _names_the_app(node: ast.expr) -> bool:
    """`app`, `self.app`, `screen.app`, `self.screen.app`, ... (anything whose last name is app)."""
    if isinstance(node, ast.Name):
        return node.id == "app"
    return isinstance(node, ast.Attribute) and node.attr == "app"


def lookups_on_the_app(source: str) -> list[int]:
    """The lines where `source` looks an attribute of the app up by name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in LOOKUPS
            and node.args
            and _names_the_app(node.args[0])
        ):
            found.append(node.lineno)
    return found


def test_no_module_of_the_tui_looks_up_the_app_by_name() -> None:
    paths = sorted((REPO / "drill" / "tui").rglob("*.py"))
    assert REPO / "drill" / "tui" / "typeahead.py" in paths
    offenders = {
        str(path.relative_to(REPO)): lines
        for path in paths
        if (lines := lookups_on_the_app(path.read_text()))
    }
    assert offenders == {}


def test_the_rule_catches_a_lookup_by_name() -> None:
    """The check itself, on what drill/tui/typeahead.py once did (and a few other spellings)."""
    source = """
async def ready(self, app, screen):
    release = getattr(app, "release_keys", None)
    if hasattr(self.app, "release_keys"):
        pass
    setattr(screen.app, "x", 1)
    getattr(self.card, "more", "")  # not the app: allowed
"""
    assert lookups_on_the_app(source) == [3, 4, 6]
