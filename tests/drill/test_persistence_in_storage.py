"""Persistence lives in storage/: no drill module opens a session or a unit of work, touches the
engine, or imports a table module; it calls storage's repositories (db.review, db.runs,
db.exercises, db.mocks, db.plans). The import-linter contract `persistence-in-storage` keeps
sqlmodel and sqlalchemy out of drill; this test covers what an import graph cannot see."""

from __future__ import annotations

import ast

from tests.support.paths import REPO

TABLE_MODULES = ("storage.tables", "storage.mock_tables", "storage.exercise_tables",
                 "storage.run_tables", "storage.plan_tables")  # fmt: skip


def offences(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module in TABLE_MODULES:
            found.append(f"line {node.lineno}: imports {node.module}")
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: imports {a.name}" for a in node.names
                      if a.name in TABLE_MODULES]  # fmt: skip
        elif isinstance(node, ast.withitem) and isinstance(node.context_expr, ast.Call):
            func = node.context_expr.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("session", "unit", "Session"):
                found.append(f"line {node.context_expr.lineno}: opens {name}()")
        elif isinstance(node, ast.Attribute) and node.attr == "engine":
            found.append(f"line {node.lineno}: uses .engine")
    return found


def test_the_check_sees_a_session_a_table_and_the_engine() -> None:
    source = (
        "from storage.tables import CardState\n"
        "with db.session() as s:\n    pass\n"
        "with Session(db.engine) as s:\n    pass\n"
    )
    assert len(offences(source)) == 4


def test_no_drill_module_does_persistence_itself() -> None:
    found = {
        str(path.relative_to(REPO)): problems
        for path in sorted((REPO / "drill").rglob("*.py"))
        if (problems := offences(path.read_text()))
    }
    assert found == {}
