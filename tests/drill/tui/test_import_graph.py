"""drill.tui has no import cycle: screens that need the app type it as drill.tui.host.DrillHost
(which imports no screen), and the app imports the screens. Every import counts, lazy ones
inside functions and TYPE_CHECKING ones included (grimp sees both)."""

from __future__ import annotations

import grimp


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), or a module that
    imports itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in edges[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1 or module in edges[module]:
                found.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def tui_edges() -> dict[str, set[str]]:
    graph = grimp.build_graph("drill", cache_dir=None)
    modules = {m for m in graph.modules if m == "drill.tui" or m.startswith("drill.tui.")}
    return {m: graph.find_modules_directly_imported_by(m) & modules for m in modules}


def test_the_finder_sees_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [["a", "b", "c"]]


def test_drill_tui_has_no_import_cycle() -> None:
    edges = tui_edges()
    assert "drill.tui.app" in edges and "drill.tui.screens.home" in edges
    assert cycles(edges) == []
