"""The test tree's own rules: it mirrors the packages, shared helpers live in tests/support
(no test imports a test module or a conftest), and only the root conftest sets DRILL_HOME."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import REPO

TESTS = REPO / "tests"
CONTENT = ("support",)  # tests/support: helpers; everything else mirrors a package folder


def _modules_imported(path: Path) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            found.append((node.lineno, "." * node.level + (node.module or "")))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return found


def is_test_module(module: str) -> bool:
    """A relative import, or one of tests' own test_* / conftest modules."""
    if module.startswith("."):
        return True
    parts = module.split(".")
    return parts[0] == "tests" and any(p.startswith("test_") or p == "conftest" for p in parts[1:])


def test_the_import_rule_tells_test_modules_from_support() -> None:
    assert is_test_module("tests.drill.tui.conftest.START")
    assert is_test_module("tests.drill.decks.test_hostile")
    assert is_test_module(".conftest")
    assert not is_test_module("tests.support.pilot")
    assert not is_test_module("drill.tui.app")


def test_no_test_imports_a_test_module_or_a_conftest() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}: {module}"
        for path in sorted(TESTS.rglob("*.py"))
        for line, module in _modules_imported(path)
        if is_test_module(module)
    ]
    assert found == [], "move what is shared to tests/support:\n" + "\n".join(found)


def test_every_test_package_mirrors_a_package_folder() -> None:
    packages = sorted(
        path.parent.relative_to(TESTS)
        for path in TESTS.rglob("__init__.py")
        if path.parent != TESTS
    )
    strays = [
        str(package)
        for package in packages
        if package.parts[0] not in CONTENT and not (REPO / package).is_dir()
    ]
    assert strays == [], f"test folders with no package of that name: {strays}"


def test_only_the_root_conftest_sets_drill_home() -> None:
    setters = [
        str(path.relative_to(REPO))
        for path in sorted(TESTS.rglob("conftest.py"))
        if 'setenv("DRILL_HOME"' in path.read_text()
    ]
    assert setters == ["tests/conftest.py"]
