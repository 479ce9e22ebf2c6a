"""Fuzzing as a test: whatever a deck file or settings file holds, loading answers with decks or
problems (SettingsError for settings) and raises nothing else. benchmarks/deck_fuzz.py runs the
same strategies longer and prints how many cases ran and the slowest."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drill.decks.index import FileEntry
from drill.decks.loader import check_paths, parse_file
from drill.errors import SettingsError
from drill.settings import Settings, load_settings
from tests.support.deck_fuzz import (
    bundled_texts,
    deck_like,
    mutate,
    settings_text,
    yaml_alphabet_text,
)

FUZZ = settings(
    max_examples=60,
    deadline=None,  # timing is measured by benchmarks/deck_fuzz.py, not asserted here
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# Module-scoped: hypothesis refuses function-scoped fixtures in @given tests (one fixture value
# would serve every example). Each example overwrites the same files.
@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _parse(work: Path, content: bytes | str) -> FileEntry:
    path = work / "case.yaml"
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8", errors="surrogatepass")
    else:
        path.write_bytes(content)
    entry = parse_file(path)
    assert entry.deck is not None or entry.problems  # a deck (maybe less bad cards) or why not
    assert all(p.path == path and p.line >= 1 and "\n" not in str(p) for p in entry.problems)
    assert check_paths([path]) == entry.problems or entry.deck is not None
    if entry.deck is not None:  # what loaded is whole: unique ids, each with a line and hash
        ids = [card["id"] for card in entry.deck["cards"]]
        assert len(set(ids)) == len(ids)
        assert set(entry.card_lines) == set(entry.hashes) == set(ids)
    return entry


@FUZZ
@given(st.binary(max_size=4000))
def test_random_bytes(work: Path, content: bytes) -> None:
    _parse(work, content)


@FUZZ
@given(yaml_alphabet_text())
def test_random_yaml_punctuation(work: Path, content: str) -> None:
    _parse(work, content)


@FUZZ
@given(deck_like())
def test_random_deck_shaped_structures(work: Path, data: object) -> None:
    _parse(work, yaml.safe_dump(data, allow_unicode=True))


@FUZZ
@given(st.sampled_from(bundled_texts()), st.data())
def test_mutated_bundled_decks(work: Path, text: str, data: st.DataObject) -> None:
    _parse(work, data.draw(mutate(text)))


@FUZZ
@given(st.one_of(settings_text(), st.binary(max_size=2000).map(lambda b: b.decode("latin-1"))))
def test_settings_files(work: Path, content: str) -> None:
    path = work / "settings.toml"
    path.write_text(content, encoding="utf-8", errors="surrogatepass")
    try:
        assert isinstance(load_settings(path), Settings)
    except SettingsError as error:
        assert str(error).startswith(str(path))
