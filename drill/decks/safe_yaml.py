"""Read an untrusted YAML document without letting it hurt.

PyYAML's composer recurses once per nesting level (in C with the libyaml loader, where deep
nesting overflows the C stack), and its constructor shares aliased nodes, so a few lines of
aliases expand into billions of values for whatever walks the result. The parser's event
stream is flat, so the document is first scanned event by event: nesting depth, node count
after alias expansion and self-referencing aliases are checked there, and only a document
within the limits (drill.decks.limits) is composed and constructed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Iterator
from types import GeneratorType
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.reader import ReaderError

from drill.decks.limits import MAX_DEPTH, MAX_NODES, MAX_NUMBER_CHARS
from drill.gc_pause import collector_paused

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SURROGATE = re.compile("[\ud800-\udfff]")


class YamlProblem(Exception):
    """The document cannot be read as a deck; `line` is 1-based."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _bounded(construct: Callable[[Any, yaml.Node], Any]) -> Callable[[Any, yaml.Node], Any]:
    def bounded(loader: Any, node: yaml.Node) -> Any:
        if isinstance(node.value, str) and len(node.value) > MAX_NUMBER_CHARS:
            raise ConstructorError(
                None,
                None,
                f"a number of {len(node.value)} characters is longer than "
                f"{MAX_NUMBER_CHARS} (quote it if it is text)",
                node.start_mark,
            )
        return construct(loader, node)

    return bounded


def _failed(node: yaml.Node, error: Exception) -> ConstructorError:
    kind = str(node.tag).rsplit(":", 1)[-1]
    return ConstructorError(None, None, f"not a valid {kind}: {error}", node.start_mark)


def _guarded(construct: Callable[[Any, yaml.Node], Any]) -> Callable[[Any, yaml.Node], Any]:
    """PyYAML's safe constructors let some bad values out as plain Python errors
    (`!!timestamp nonsense` -> AttributeError, a 5,000-digit int -> ValueError): make them
    YAML errors that carry the value's line."""

    def guarded(loader: Any, node: yaml.Node) -> Any:
        try:
            result = construct(loader, node)
        except yaml.YAMLError:
            raise
        except Exception as error:
            raise _failed(node, error) from None
        return _guarded_steps(result, node) if isinstance(result, GeneratorType) else result

    return guarded


def _guarded_steps(steps: Generator[Any, None, None], node: yaml.Node) -> Iterator[Any]:
    try:
        yield from steps
    except yaml.YAMLError:
        raise
    except Exception as error:
        raise _failed(node, error) from None


class _DeckLoader(_Base):  # type: ignore[misc,valid-type]
    """The safe loader: number constructors refuse very long numerals, and every constructor
    fails with a YAML error that names the value's line."""


_DeckLoader.add_constructor("tag:yaml.org,2002:int", _bounded(SafeConstructor.construct_yaml_int))
_DeckLoader.add_constructor(
    "tag:yaml.org,2002:float", _bounded(SafeConstructor.construct_yaml_float)
)
for _tag, _construct in list(_DeckLoader.yaml_constructors.items()):
    _DeckLoader.add_constructor(_tag, _guarded(_construct))


def _line(event: Any) -> int:
    mark = getattr(event, "start_mark", None)
    return mark.line + 1 if mark is not None else 1


_NUMERAL = re.compile(r"[-+.0-9][-+.0-9_:eE]*")


def _check_numeral(event: Any) -> None:
    """A long plain scalar made of number characters: the resolver's number patterns alone
    take seconds on a few MB of `1:0:0:...`, before the constructor would refuse it."""
    if _NUMERAL.fullmatch(event.value):
        message = (
            f"a number of {len(event.value)} characters is longer than "
            f"{MAX_NUMBER_CHARS} (quote it if it is text)"
        )
        raise YamlProblem(_line(event), message)


class _LastQuoted:
    """Remembers the last quoted scalar of the event stream. A quote left open runs on to the
    next quote, often on a later line, where the parser only then fails: that error is raised
    as a YamlProblem at the line where the quoted text started."""

    def __init__(self) -> None:
        self.scalar: Any = None

    def events(self, text: str) -> Iterator[Any]:
        try:
            for event in yaml.parse(text, Loader=_Base):
                if type(event) is yaml.ScalarEvent and event.style in ('"', "'"):
                    self.scalar = event
                yield event
        except yaml.YAMLError as error:
            self._raise_open_quote(error)
            raise

    def _raise_open_quote(self, error: yaml.YAMLError) -> None:
        mark = getattr(error, "problem_mark", None)
        scalar = self.scalar
        if isinstance(error, ReaderError) or mark is None or scalar is None:
            return
        start, end = scalar.start_mark.line, scalar.end_mark.line
        if start == end or end != mark.line:
            return
        detail = " ".join(str(getattr(error, "problem", "") or error).split())
        message = (
            f"YAML syntax error: the quoted text that starts here runs on to line {end + 1} "
            f"(is its closing {scalar.style} missing?): {detail}"
        )
        raise YamlProblem(start + 1, message)


def scan(text: str) -> None:
    """Check the limits on the flat event stream; raise YamlProblem at the first one broken
    (or yaml.YAMLError for a syntax error)."""
    depth = nodes = 0
    aliased = False  # the count includes values an alias repeats
    sizes: dict[str, int] = {}  # anchor -> nodes it stands for, aliases inside expanded
    stack: list[tuple[str | None, int]] = []  # open collections: (anchor, nodes at start)
    open_anchors: list[str] = []
    quoted = _LastQuoted()
    for event in quoted.events(text):
        kind = type(event)
        if kind is yaml.ScalarEvent:
            nodes += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
            if event.style == '"' and _SURROGATE.search(event.value):
                raise YamlProblem(_line(event), "a lone surrogate escape (\\uD800-\\uDFFF)")
            if not event.style and len(event.value) > MAX_NUMBER_CHARS:
                _check_numeral(event)
        elif kind is yaml.AliasEvent:
            if event.anchor in open_anchors:
                message = f"alias *{event.anchor} refers to a value that contains it"
                raise YamlProblem(_line(event), message)
            if event.anchor not in sizes:
                raise YamlProblem(_line(event), f"alias *{event.anchor} has no anchor before it")
            nodes += sizes[event.anchor]
            aliased = True
        elif kind is yaml.SequenceStartEvent or kind is yaml.MappingStartEvent:
            nodes += 1
            depth += 1
            if depth > MAX_DEPTH:
                raise YamlProblem(_line(event), f"nesting deeper than {MAX_DEPTH}")
            stack.append((event.anchor, nodes))
            if event.anchor is not None:
                open_anchors.append(event.anchor)
        elif kind is yaml.SequenceEndEvent or kind is yaml.MappingEndEvent:
            depth -= 1
            anchor, start = stack.pop()
            if anchor is not None:
                open_anchors.pop()
                sizes[anchor] = nodes - start + 1
        if nodes > MAX_NODES:
            message = f"more than {MAX_NODES} values" + (
                " once aliases are expanded" if aliased else " (a deck file holds at most that)"
            )
            raise YamlProblem(_line(event), message)


def _yaml_problem(error: yaml.YAMLError, text: str) -> YamlProblem:
    if isinstance(error, ReaderError):  # a character YAML does not allow (e.g. a control code)
        line = text.count("\n", 0, max(error.position, 0)) + 1
        code = error.character if isinstance(error.character, int) else ord(error.character)
        return YamlProblem(line, f"YAML syntax error: character #x{code:04x} is not allowed")
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    if str(getattr(error, "context", "")).startswith("while scanning a quoted scalar"):
        mark = getattr(error, "context_mark", None) or mark  # where the open quote started
    line = mark.line + 1 if mark is not None else 1
    problem = getattr(error, "problem", None) or str(error)
    context = getattr(error, "context", None)
    detail = " ".join((f"{problem} ({context})" if context else str(problem)).split())
    if isinstance(error, ConstructorError):  # well-formed YAML, but a value it cannot build
        return YamlProblem(line, detail)
    if "maximum nesting depth" in str(problem):
        # libyaml >= the one bundled with PyYAML 6.0.4 stops at 1,000 levels while scanning,
        # ahead of the events scan() counts: the same limit broken, so the same message
        return YamlProblem(line, f"nesting deeper than {MAX_DEPTH}")
    return YamlProblem(line, f"YAML syntax error: {detail}")


def read_yaml(text: str) -> tuple[yaml.Node | None, Any]:
    """(root node, constructed data) of a single-document YAML text within the limits;
    (None, None) for an empty document. Raises YamlProblem, nothing else, for bad content."""
    try:
        scan(text)
    except yaml.YAMLError as error:
        raise _yaml_problem(error, text) from None
    loader = _DeckLoader(text)
    try:
        with collector_paused():  # the node tree holds no cycles (self-references are refused)
            root = loader.get_single_node()
            data = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as error:
        raise _yaml_problem(error, text) from None
    except RecursionError:  # cannot happen within MAX_DEPTH: still a line, never a crash
        raise YamlProblem(1, f"nesting deeper than {MAX_DEPTH}") from None
    finally:
        loader.dispose()
    return root, data
