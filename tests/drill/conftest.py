"""Fixtures for drill tests that need a lab-linked card and an open database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from drill.decks.models import Card
from tests.support.lab_fakes import CARD_YAML


@pytest.fixture
def card() -> Card:
    return Card.model_validate(yaml.safe_load(CARD_YAML))


@pytest.fixture
def db(home: Path) -> Iterator[Any]:
    from drill.paths import database_path
    from storage.db import open_database

    database = open_database(database_path())
    yield database
    database.close()
