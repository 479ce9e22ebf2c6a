"""Regression corpus: deck files that once hung, crashed or were skipped silently. Each is now
one `path:line: message` problem, and the decks beside it still load."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from drill.cli.main import main
from drill.decks.limits import MAX_FILE_BYTES, MAX_NODES
from drill.decks.links import LAB_LINK_CHECKS
from drill.decks.loader import check_paths, load_decks
from tests.support.hostile_decks import (
    CORPUS,
    CORPUS_PROBLEMS,
    GOOD_DECK,
    HEAD,
    hostile_folder,
    made_problems,
)


@pytest.mark.parametrize("name", sorted(CORPUS_PROBLEMS))
def test_corpus_file_is_one_problem_line(name: str) -> None:
    path = CORPUS / name
    problems = [str(p) for p in check_paths([path], link_checks=LAB_LINK_CHECKS)]
    assert problems == [f"{path}:{CORPUS_PROBLEMS[name]}"]


def test_made_hostile_files_are_one_problem_line_each(tmp_path: Path) -> None:
    expected = made_problems(tmp_path)
    problems = sorted(str(p) for p in check_paths([tmp_path]))
    assert problems == sorted(f"{tmp_path / name}:{line}" for name, line in expected.items())


def test_hostile_folder_beside_a_good_deck_loads_the_good_one(tmp_path: Path) -> None:
    expected = hostile_folder(tmp_path / "decks")
    decks = load_decks([tmp_path / "decks"], include_bundled=False)
    # nan-claim: a link problem only; nan-param, yes-back: their one card is left out
    loaded = {d.deck.deck: [c.id for c in d.deck.cards] for d in decks.decks}
    assert loaded == {"good": ["good-1"], "nanclaim": ["nanclaim-1"], "nanparam": [], "yesdeck": []}
    assert sorted(p.name for p in decks.invalid_paths) == sorted(
        name
        for name in expected
        if name not in ("nan-claim.yaml", "nan-param.yaml", "yes-back.yaml")
    )
    # the second load answers from the cache for everything that has a file to key on
    again = load_decks([tmp_path / "decks"], include_bundled=False)
    assert [str(p) for p in again.problems] == [str(p) for p in decks.problems]


def test_decks_check_reports_every_hostile_file_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "decks"
    expected = hostile_folder(folder)
    assert main(["decks", "check", str(folder)]) == 1
    out = capsys.readouterr()
    assert sorted(out.out.splitlines()) == sorted(f"{folder / n}:{p}" for n, p in expected.items())
    assert out.err == f"{len(expected)} problem(s) in {len(expected)} file(s)\n"


def test_due_with_a_hostile_folder_finishes_and_names_the_skipped_files(tmp_path: Path) -> None:
    folder = tmp_path / "decks"
    hostile_folder(folder)
    done = subprocess.run(
        [sys.executable, "-m", "drill", "--decks", str(folder), "due"],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert any(line.startswith("good ") for line in done.stdout.splitlines())
    assert f"skipped invalid deck: {folder / 'alias-bomb.yaml'}" in done.stderr
    assert "Traceback" not in done.stderr


def test_nesting_within_the_limit_is_a_schema_problem_not_a_limit(tmp_path: Path) -> None:
    path = tmp_path / "nested.yaml"
    path.write_text(HEAD.format(deck="n") + "    back: A\n    tags: " + "[" * 20 + "]" * 20 + "\n")
    (problem,) = check_paths([path])
    assert problem.message.startswith("tags.0: Input should be a valid string")


def test_aliases_within_the_limit_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "alias.yaml"
    text = "deck: a\ntitle: T\ncards:\n  - id: a-1\n    level: easy\n    front: Q\n"
    text += "    back: A\n    tags: &common [x, y]\n    rubric: *common\n"
    path.write_text(text)
    assert check_paths([path]) == []
    card = load_decks([path], include_bundled=False).card("a-1")
    assert card is not None and card.rubric == ["x", "y"]


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        ("no", "(YAML read `no` as false: quote it)"),
        ("1.5", "(YAML read `1.5` as a number: quote it)"),
        ("2024-01-01", "(YAML read `2024-01-01` as a date: quote it)"),
    ],
)
def test_text_that_yaml_reads_as_something_else_says_so(
    tmp_path: Path, value: str, hint: str
) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(HEAD.format(deck="d") + f"    back: {value}\n")
    assert [p.message for p in check_paths([path])] == [
        f"back: Input should be a valid string {hint}"
    ]
    path.write_text(HEAD.format(deck="d") + f"    back: '{value}'\n")
    assert check_paths([path]) == []


def test_decks_check_path_finds_a_card_id_taken_by_a_bundled_deck(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundled = load_decks().decks[0]
    taken = bundled.deck.cards[0].id
    path = tmp_path / "mine.yaml"
    path.write_text(GOOD_DECK.replace("good-1", taken))
    assert main(["decks", "check", str(path)]) == 1
    line = bundled.card_lines[taken]
    assert capsys.readouterr().out == (
        f"{path}:4: card {taken}: duplicate card id '{taken}' (also in {bundled.path}:{line})\n"
    )


def test_decks_check_path_finds_a_card_id_taken_by_a_configured_deck(
    tmp_path: Path, deck_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(GOOD_DECK.replace("good-1", "alpha"))
    assert main(["decks", "check", "--decks", str(deck_dir), str(path)]) == 1
    assert f"duplicate card id 'alpha' (also in {deck_dir / 'basics.yaml'}:4)" in (
        capsys.readouterr().out
    )
    # checking a configured deck itself does not collide with its own configured copy
    assert main(["decks", "check", "--decks", str(deck_dir), str(deck_dir)]) == 0


def test_hidden_files_are_not_decks(tmp_path: Path) -> None:
    os.symlink("user@host.1234", tmp_path / ".#good.yaml")  # an editor's lock file
    (tmp_path / "good.yaml").write_text(GOOD_DECK)
    assert check_paths([tmp_path]) == []


def test_many_values_without_aliases_name_the_limit_not_aliases(tmp_path: Path) -> None:
    path = tmp_path / "wide.yaml"
    path.write_text(HEAD.format(deck="w") + "    back: A\n    tags: [" + "x, " * 250_000 + "x]\n")
    (problem,) = check_paths([path])
    assert problem.message == f"more than {MAX_NODES} values (a deck file holds at most that)"


def test_a_file_over_the_size_limit_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    with path.open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no need to write 8 MiB
    (problem,) = check_paths([path])
    assert (problem.line, problem.message) == (
        1,
        f"file is {MAX_FILE_BYTES + 1} bytes; a deck file may have at most 8 MiB",
    )


def test_a_file_that_cannot_be_read_is_one_line_and_the_others_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # root reads any file whatever its mode, so the read error is made, not chmod-ed
    (tmp_path / "good.yaml").write_text(GOOD_DECK)
    bad = tmp_path / "bad.yaml"
    bad.write_text(GOOD_DECK.replace("good", "bad"))
    real_open = Path.open

    def open_(self: Path, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        if self == bad:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "open", open_)
    decks = load_decks([tmp_path], include_bundled=False, use_cache=False)
    assert [d.deck.deck for d in decks.decks] == ["good"]
    assert [str(p) for p in decks.problems] == [f"{bad}:1: cannot read: Permission denied"]
