"""`drill cards [QUERY] [--json]` as the user runs it."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from drill.cli.main import main
from drill.paths import database_path
from tests.support.review_logs import LogBuilder, write_browse_decks


def run(argv: list[str]) -> int:
    return main(argv)


@pytest.fixture
def decks(tmp_path: Path) -> str:
    path = write_browse_decks(tmp_path / "decks")
    log = LogBuilder(database_path())
    log.card("ddp-bucket", "infra", due=datetime.now(UTC) + timedelta(days=3), suspended=True)
    log.write()
    return str(path)


def test_json_matches(decks: str, capsys: pytest.CaptureFixture[str]) -> None:
    # deck: matches a deck id or title containing the word, bundled decks included; the bundled
    # infra-topics deck is left out by name. Bundled cards come and go, so the exact list is
    # checked on this test's own deck only.
    query = ["tag:fsdp", "level:hard", "deck:infra", "--", "-deck:infra-topics"]
    assert run(["cards", "--json", "--decks", decks, *query]) == 0
    found = json.loads(capsys.readouterr().out)
    assert all("infra" in c["deck"] and c["deck"] != "infra-topics" for c in found)
    assert all("fsdp" in c["tags"] and c["level"] == "hard" for c in found)
    ours = [c for c in found if Path(c["path"]).parent == Path(decks)]
    assert [c["card"] for c in ours] == ["fsdp-shard", "resume-state"]
    assert ours[0]["path"].endswith("infra.yaml") and ours[0]["line"] > 1
    assert ours[0]["state"] == "new" and ours[0]["tags"] == ["fsdp", "memory"]


def test_text_lists_rows_and_count(decks: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["cards", "is:suspended", "--decks", decks]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ddp-bucket") and "suspended" in out[0]
    assert out[-1].startswith("1 of ") and out[-1].endswith(" cards")


def test_phrase_query(decks: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["cards", "deck:infra", '"sampler position"', "--json", "--decks", decks]) == 0
    assert [c["card"] for c in json.loads(capsys.readouterr().out)] == ["resume-state"]


def test_bad_term_is_one_line_usage_error(decks: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["cards", "is:angry", "--decks", decks]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(r"bad query: is:angry\? \(use ", err)


def test_unknown_filter_exits_2(decks: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cards", "colour:red"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown filter colour:" in err
