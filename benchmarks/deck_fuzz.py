"""Hostile deck files, timed (a script, not a test).

Runs the fuzz strategies of tests/drill/decks/test_fuzz.py for many more cases and prints how
many ran and the slowest, then times parse_file on 5 MB files of hostile shapes (target: each
answered in < 2 s, with decks or one-line problems) and on the bundled decks.

    python benchmarks/deck_fuzz.py [--cases 500]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import decks  # noqa: E402
from drill.decks.limits import MAX_DEPTH, MAX_FILE_BYTES, MAX_NODES  # noqa: E402
from drill.decks.loader import parse_file  # noqa: E402
from drill.settings import load_settings  # noqa: E402
from tests.support.deck_fuzz import (  # noqa: E402
    bundled_texts,
    deck_like,
    mutate,
    settings_text,
    yaml_alphabet_text,
)

FIVE_MB = 5 * 1000 * 1000


def five_mb_cases() -> dict[str, str]:
    card = (
        "  - id: c{i}\n    level: medium\n    tags: [a, b]\n    front: Why {i}?\n"
        "    back: |\n      Because of reasons, explained at some length so that the card\n"
        "      looks like a real one.\n    rubric: [reasons]\n"
    )
    real = "deck: big\ntitle: Big\ncards:\n"
    i = 0
    while len(real) < FIVE_MB:
        real += "".join(card.format(i=i + k) for k in range(1000))
        i += 1000
    return {
        "realistic cards (over the node limit)": real,
        "one 5 MB string": "deck: s\ntitle: T\ncards: []\ndescription: " + "x" * FIVE_MB,
        "flat list of one-letter items": "- a\n" * (FIVE_MB // 4),
        "flow list": "[" + "a," * (FIVE_MB // 2) + "]",
        "deep [": "[" * FIVE_MB,
        "deep - - -": "- " * (FIVE_MB // 2) + "a",
        "sexagesimal number": "x: 1" + ":0" * (FIVE_MB // 2),
        "many anchors and aliases": "".join(f"- &a{i} x\n- *a{i}\n" for i in range(FIVE_MB // 20)),
        "random bytes": os.urandom(FIVE_MB).decode("latin-1"),
    }


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def fuzz(cases: int, work: Path) -> None:
    path = work / "case.yaml"
    times: dict[str, list[float]] = {}

    def run(name: str, content: str | bytes) -> None:
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", errors="surrogatepass")
        times.setdefault(name, []).append(timed(lambda: parse_file(path)))

    common = settings(
        max_examples=cases, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )

    @common
    @given(st.binary(max_size=4000))
    def random_bytes(content: bytes) -> None:
        run("random bytes", content)

    @common
    @given(yaml_alphabet_text())
    def punctuation(content: str) -> None:
        run("YAML punctuation", content)

    @common
    @given(deck_like())
    def structures(data: object) -> None:
        run("deck-shaped structures", yaml.safe_dump(data, allow_unicode=True))

    @common
    @given(st.sampled_from(bundled_texts()), st.data())
    def mutations(text: str, data: st.DataObject) -> None:
        run("mutated bundled decks", data.draw(mutate(text)))

    settings_path = work / "settings.toml"

    @common
    @given(settings_text())
    def settings_files(content: str) -> None:
        settings_path.write_text(content, encoding="utf-8", errors="surrogatepass")

        def load() -> None:
            try:
                load_settings(settings_path)
            except Exception as error:  # SettingsError expected; anything else is a finding
                if type(error).__name__ != "SettingsError":
                    raise

        times.setdefault("settings files", []).append(timed(load))

    for strategy in (random_bytes, punctuation, structures, mutations, settings_files):
        strategy()
    total = sum(len(v) for v in times.values())
    print(f"fuzzed {total} cases (no exception other than problems / SettingsError):")
    for name, values in times.items():
        print(
            f"  {name:<24} {len(values):>5} cases  median {statistics.median(values) * 1e3:6.1f} ms"
            f"  slowest {max(values) * 1e3:7.1f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=500, help="cases per strategy")
    args = parser.parse_args()
    print(f"limits: file {MAX_FILE_BYTES} bytes, depth {MAX_DEPTH}, nodes {MAX_NODES}")
    print("load average before: " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    work = Path(tempfile.mkdtemp(prefix="drill-deck-fuzz-"))
    for path in decks.bundled_deck_paths():
        ms = timed(lambda p=path: parse_file(p)) * 1e3
        print(f"bundled {path.name:<22} {path.stat().st_size:>7} bytes  {ms:6.1f} ms")
    print("5 MB hostile files (target < 2 s each):")
    for name, text in five_mb_cases().items():
        path = work / "big.yaml"
        path.write_text(text, encoding="utf-8")
        entry = None

        def parse(p: Path = path) -> None:
            nonlocal entry
            entry = parse_file(p)

        seconds = timed(parse)
        assert entry is not None
        answer = str(entry.problems[0]).split(": ", 1)[1][:70] if entry.problems else "ok"
        print(f"  {name:<40} {seconds:5.2f} s  {answer}")
    fuzz(args.cases, work)
    print("load average after: " + " ".join(f"{x:.1f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
