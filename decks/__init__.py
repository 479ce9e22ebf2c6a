"""Bundled YAML decks (shipped as package data)."""

from pathlib import Path

BUNDLED_DECKS_DIR = Path(__file__).resolve().parent


def bundled_deck_paths() -> list[Path]:
    """Every bundled deck file, sorted by name (mock-round definitions excluded)."""
    return sorted(p for p in BUNDLED_DECKS_DIR.glob("*.yaml") if not p.name.startswith("round-"))


def bundled_round_paths() -> list[Path]:
    """Bundled mock-round definitions (files named round-*.yaml)."""
    return sorted(BUNDLED_DECKS_DIR.glob("round-*.yaml"))
