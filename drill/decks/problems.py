"""Turn what is wrong with a composed deck document into `path:line: card <id>: message` lines.

Lines come from the YAML node tree: a pydantic error location is walked down the nodes.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from drill.decks.index import Problem

_IMPLICIT_KINDS = {
    "tag:yaml.org,2002:bool": "{value} as {constructed}",
    "tag:yaml.org,2002:int": "{value} as a number",
    "tag:yaml.org,2002:float": "{value} as a number",
    "tag:yaml.org,2002:timestamp": "{value} as a date",
}


def node_line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def child(node: yaml.Node, key: Any) -> tuple[yaml.Node | None, yaml.Node | None]:
    """(key node, value node) of a mapping key or sequence index, or (None, None)."""
    if isinstance(node, yaml.MappingNode) and isinstance(key, str):
        for key_node, value_node in reversed(node.value):  # YAML keeps the last duplicate
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                return key_node, value_node
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
        return node.value[key], node.value[key]
    return None, None


def _walk(root: yaml.Node, loc: tuple[Any, ...]) -> tuple[int, yaml.Node | None]:
    """Line of the deepest node a pydantic error location reaches (a key's own line), and the
    value node when the whole location was reached."""
    node, line = root, node_line(root)
    for part in loc:
        key_node, value_node = child(node, part)
        if value_node is None or key_node is None:
            return line, None
        line = node_line(key_node)
        node = value_node
    return line, node


def duplicate_keys(root: yaml.Node, skip: Iterable[yaml.Node] = ()) -> list[tuple[int, str]]:
    """(line, key) of every repeated mapping key; each node is looked at once (aliases share).
    Nodes in `skip` (already looked at, e.g. each card's) are not walked into."""
    found: list[tuple[int, str]] = []
    seen_nodes: set[int] = {id(node) for node in skip}
    todo = [root]
    while todo:
        node = todo.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    if key_node.value in keys:
                        found.append((node_line(key_node), key_node.value))
                    keys.add(key_node.value)
                todo.append(value_node)
        elif isinstance(node, yaml.SequenceNode):
            todo.extend(node.value)
    return sorted(found)


def _card_label(data: Any, index: int) -> tuple[str | None, str]:
    """(card id, message prefix) for the card at `index` of the raw data."""
    try:
        card_id = data["cards"][index]["id"]
    except (KeyError, IndexError, TypeError):
        card_id = None
    if isinstance(card_id, str) and card_id.strip():
        return card_id, ""
    return None, f"card #{index + 1}: "


def _yaml_hint(node: yaml.Node | None, constructed: Any) -> str:
    """Why a value that looks like text is not a string: YAML 1.1 reads yes/no/on/off as
    booleans, 1.0 as a number and 2024-01-01 as a date unless they are quoted."""
    if not isinstance(node, yaml.ScalarNode) or node.style:  # quoted or block: a string
        return ""
    template = _IMPLICIT_KINDS.get(node.tag)
    if template is None:
        return ""
    shown = node.value if len(node.value) <= 40 else node.value[:37] + "..."
    read = template.format(value=f"`{shown}`", constructed=str(constructed).lower())
    return f" (YAML read {read}: quote it)"


def _message(error: dict[str, Any], field_path: str) -> str:
    kind = error["type"]
    if kind == "missing":
        return f"missing field '{field_path}'"
    if kind == "extra_forbidden":
        return f"unknown key '{field_path}'"
    if error.get("input", "") is None and kind.endswith("_type"):
        return f"{field_path}: must not be empty"
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{field_path}: {message}" if field_path else message


_UNION_TAGS = frozenset({"int", "float", "bool", "str"})


def validation_problems(
    path: Path, root: yaml.Node, data: Any, error: ValidationError, at: tuple[Any, ...] = ()
) -> list[Problem]:
    """Problems of a validation error; `at` is where the validated value sits in the document
    (("cards", 2) for the third card validated on its own)."""
    # A value failing a union (e.g. a lab param) gives one error per member, tagged with the
    # member's name at the end of the location: fold them into one problem.
    grouped: dict[tuple[Any, ...], list[tuple[str | None, dict[str, Any]]]] = {}
    for item in error.errors():
        loc = at + tuple(item["loc"])
        tag = None
        if len(loc) > 1 and isinstance(loc[-1], str) and loc[-1] in _UNION_TAGS:
            loc, tag = loc[:-1], loc[-1]
        grouped.setdefault(loc, []).append((tag, item))
    problems: list[Problem] = []
    for loc, items in grouped.items():
        card_id, prefix, rest = None, "", loc
        if len(loc) >= 2 and loc[0] == "cards" and isinstance(loc[1], int):
            card_id, prefix = _card_label(data, loc[1])
            rest = loc[2:]
        field_path = ".".join(str(p) for p in rest)
        tags = [tag for tag, _ in items if tag]
        if len(items) > 1 and tags:
            message = f"{field_path}: expected one of {', '.join(tags)}"
        else:
            message = _message(items[0][1], field_path)
        line, node = _walk(root, loc)
        if items[0][1]["type"] == "string_type":
            message += _yaml_hint(node, items[0][1].get("input"))
        problems.append(Problem(path, line, card_id, prefix + message))
    return problems


def card_lines(
    path: Path, root: yaml.Node
) -> tuple[dict[str, int], dict[str, dict[str, int]], dict[int, Problem]]:
    """Line of each card and of its keys, from the raw nodes; a repeated id is a problem of
    the card that repeats it, by its position in `cards`."""
    lines: dict[str, int] = {}
    field_lines: dict[str, dict[str, int]] = {}
    problems: dict[int, Problem] = {}
    _, cards_node = child(root, "cards")
    if not isinstance(cards_node, yaml.SequenceNode):
        return lines, field_lines, problems
    for index, card_node in enumerate(cards_node.value):
        _, id_node = child(card_node, "id")
        if not isinstance(id_node, yaml.ScalarNode) or not id_node.value:
            continue
        card_id, line = id_node.value, node_line(card_node)
        if card_id in lines:
            first = lines[card_id]
            message = f"duplicate card id '{card_id}' (first at line {first})"
            problems[index] = Problem(path, line, card_id, message)
            continue
        lines[card_id] = line
        field_lines[card_id] = {
            k.value: node_line(k) for k, _ in card_node.value if isinstance(k, yaml.ScalarNode)
        }
    return lines, field_lines, problems
