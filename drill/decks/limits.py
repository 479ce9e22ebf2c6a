"""What a deck file may contain, checked before the YAML is composed (stdlib only).

Measured on the bundled decks (2026-11): the largest file is 46 KB with 1,147 YAML nodes, and the
deck format itself never nests deeper than 6 (deck > cards > card > predict > choices > choice).
Every limit is far above that and far below what could hurt (PyYAML composes recursively in C,
and an alias bomb expands exponentially): a file at the limits is answered in about a second.
"""

from __future__ import annotations

# ~170x the largest bundled deck (about 10,000 cards of the bundled size).
MAX_FILE_BYTES = 8 * 1024 * 1024
# Five times the deepest valid deck; PyYAML's C composer recurses once per level.
MAX_DEPTH = 32
# YAML nodes once aliases are expanded (validation walks every expanded node): ~175x the largest
# bundled deck, ~9,500 cards of the benchmark's shape.
MAX_NODES = 200_000
# Characters in a plain number: PyYAML builds sexagesimal ints (1:0:0:...) in quadratic time.
MAX_NUMBER_CHARS = 100
