"""drill reads lab runs only through the result contract (trainer_lab/result.py): no module
builds a run-directory path from the file names itself (`run_dir / "result.json"`,
f"events-rank{r}.jsonl", `/ "failures"`), so the names live in one place."""

from __future__ import annotations

import ast

from tests.support.paths import REPO

RUN_DIR_NAMES = ("result.json", "events-rank", "failures", "runs")


def _named_in_a_path(node: ast.AST) -> str | None:
    """The run-dir name a `path / "name"` or `path / f"name..."` expression spells out."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return None
    left = node.left
    if isinstance(left, ast.Call) and getattr(left.func, "id", "") == "drill_home":
        return None  # DRILL_HOME/runs holds the run directories; it is not inside one
    right = node.right
    if isinstance(right, ast.JoinedStr) and right.values:
        right = right.values[0]
    if isinstance(right, ast.Constant) and isinstance(right.value, str):
        first = right.value.split("/")[0]
        if first in RUN_DIR_NAMES or first.startswith("events-rank"):
            return first
    return None


def offending_lines(source: str) -> list[tuple[int, str]]:
    return [
        (node.lineno, name)
        for node in ast.walk(ast.parse(source))
        if (name := _named_in_a_path(node)) is not None
    ]


def test_the_check_finds_a_hand_built_result_path() -> None:
    assert offending_lines('p = run_dir / "result.json"\nq = d / f"events-rank{r}.jsonl"\n') == [
        (1, "result.json"),
        (2, "events-rank"),
    ]
    assert offending_lines('v = out / "runs" / name\n') == [(1, "runs")]
    assert offending_lines('p = run_dir / RESULT_FILE\nq = d / "notes.md"\n') == []
    assert offending_lines('home = drill_home() / "runs"\n') == []


def test_no_drill_module_builds_run_dir_paths_by_hand() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}: {name}"
        for path in sorted((REPO / "drill").rglob("*.py"))
        for line, name in offending_lines(path.read_text())
    ]
    assert found == [], "use trainer_lab.result's names and helpers:\n" + "\n".join(found)
