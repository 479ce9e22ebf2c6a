"""Which lab params break a lab on purpose: the one rule the lab panel (hidden until ctrl+t)
and `drill verify --strength` (rerun under each) share.

The catalogue marks them in a param's help (trainer_lab/labs/*/__init__.py): a param named
`sabotage` (every non-default choice breaks the lab), a help that starts "debug:" (the whole
switch is for debugging), and a help that documents a value as "debug VALUE: ..." (that value
breaks the lab; the param's other values are lessons, but the param is still a debug switch).
"""

from __future__ import annotations

import re
from typing import Any

from trainer_lab.catalogue_types import LabSpec, ParamError, ParamSpec

# "debug sum: ...", "debug 0: ...", "debug: false makes ..." (the value right after "debug").
_DEBUG_VALUE = re.compile(r"\bdebug:?\s+([A-Za-z0-9_.+-]+)")


def debug_values(param: ParamSpec) -> list[Any]:
    """The values of `param` that break its lab on purpose (none for an ordinary param)."""
    if param.name == "sabotage":
        return [c for c in param.choices if c != param.default]
    values: list[Any] = []
    for text in _DEBUG_VALUE.findall(param.help):
        try:
            value = param.parse(text)
        except ParamError:
            continue  # "debug: the process-group timeout ..." names no value
        if value != param.default and value not in values:
            values.append(value)
    return values


def is_debug_param(param: ParamSpec) -> bool:
    """A sabotage or debug switch: kept out of a learner's form until asked for."""
    return param.help.startswith("debug:") or bool(debug_values(param))


def sabotage_settings(spec: LabSpec) -> list[tuple[str, Any]]:
    """(param, value) pairs that break the lab on purpose, in SPEC order."""
    return [(param.name, value) for param in spec.params for value in debug_values(param)]
