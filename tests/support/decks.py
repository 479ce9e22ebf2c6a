"""Write a deck file for a test."""

from pathlib import Path


def write_deck(directory: Path, body: str, name: str = "links.yaml") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(body)
    return path
