from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("DRILL_HOME", str(home))
    monkeypatch.delenv("DRILL_DECKS", raising=False)
    return home


def write_deck(directory: Path, body: str, name: str = "links.yaml") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(body)
    return path
