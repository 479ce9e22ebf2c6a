"""The Anki package keeps math and images, and leaves nothing behind in $TMPDIR: imported into
a real Anki collection, `\\(..\\)` and `\\[..\\]` arrive as MathJax delimiters, referenced images
are in the collection's media, a missing image is a warning naming it; genanki's temporary
collection file is removed after a successful and after a failed export."""

from __future__ import annotations

import errno
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest

from drill.decks.models import Deck
from drill.errors import DrillError
from drill.review.export_anki import Media, render_markdown, write_apkg

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
MATH = Deck.model_validate(
    {
        "deck": "math",
        "title": "Math",
        "cards": [
            {
                "id": "attention",
                "level": "medium",
                "front": r"Scaled attention: \(\mathrm{softmax}(QK^T / \sqrt{d_k})\)?",
                "back": "Display:\n\n\\[ a_1 * b_2 < c_*, \\; x_{i} \\]\n\n![heads](img/heads.png)",
                "more": r"Inline code keeps its text: `\(x\)`. ![gone](img/missing.png)",
            }
        ],
    }
)


@pytest.fixture
def fresh_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """$TMPDIR pointed at an empty directory (tempfile's cached choice reset with it)."""
    directory = tmp_path / "tmpdir"
    directory.mkdir()
    monkeypatch.setenv("TMPDIR", str(directory))
    monkeypatch.setattr(tempfile, "tempdir", None)
    yield directory


def _deck_dir(tmp_path: Path) -> Path:
    deck_dir = tmp_path / "decks"
    (deck_dir / "img").mkdir(parents=True)
    (deck_dir / "img" / "heads.png").write_bytes(PNG)
    return deck_dir


def _import(tmp_path: Path, package: Path) -> Collection:
    (tmp_path / "anki").mkdir()
    col = Collection(str(tmp_path / "anki" / "collection.anki2"))
    request = ImportAnkiPackageRequest(
        package_path=str(package), options=ImportAnkiPackageOptions(with_scheduling=False)
    )
    col.import_anki_package(request)
    return col


def test_math_and_images_reach_anki_and_a_missing_image_is_named(
    tmp_path: Path, fresh_tmpdir: Path
) -> None:
    warnings: list[str] = []
    out, notes = write_apkg([MATH], tmp_path / "out.apkg", media_dirs={"math": _deck_dir(tmp_path)},
                            warn=warnings.append)  # fmt: skip
    assert notes == 1
    assert len(warnings) == 1 and "img/missing.png" in warnings[0] and "attention" in warnings[0]
    col = _import(tmp_path, out)
    try:
        note = col.get_note(col.find_notes("")[0])
        assert r"\(\mathrm{softmax}(QK^T / \sqrt{d_k})\)" in note["Front"]
        assert r"\[ a_1 * b_2 &lt; c_*, \; x_{i} \]" in note["Back"]  # no <em>, escaped <
        assert "<code>\\(x\\)</code>" in note["More"]
        media = Path(col.media.dir())
        stored = [p for p in media.iterdir() if p.read_bytes() == PNG]
        assert len(stored) == 1 and f'src="{stored[0].name}"' in note["Back"]
    finally:
        col.close()
    assert list(fresh_tmpdir.iterdir()) == []  # genanki's temporary collection is gone


def test_images_outside_the_deck_directory_are_left_out(tmp_path: Path) -> None:
    deck_dir = _deck_dir(tmp_path)
    (tmp_path / "secret.png").write_bytes(PNG)
    deck = MATH.model_copy(update={"cards": [MATH.cards[0].model_copy(
        update={"back": "![x](../secret.png) ![y](/etc/hostname) ![z](https://e.org/a.png)"}
    )]})  # fmt: skip
    media = Media(base=deck_dir)
    html = render_markdown(deck.cards[0].back, media)
    assert media.files == {} and len(media.warnings) == 2
    assert "../secret.png" in media.warnings[0] and "outside" in media.warnings[0]
    assert 'src="https://e.org/a.png"' in html  # a URL is left for Anki to fetch
    warnings: list[str] = []
    write_apkg([deck], tmp_path / "o.apkg", media_dirs={"math": deck_dir}, warn=warnings.append)
    assert len(warnings) == 3 and "img/missing.png" in warnings[2]  # the `more` field's image


def test_a_failed_export_leaves_no_temporary_file(
    tmp_path: Path, fresh_tmpdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import genanki

    def disk_full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(genanki.Note, "write_to_db", disk_full)
    with pytest.raises(DrillError, match="No space left"):
        write_apkg([MATH], tmp_path / "out.apkg", media_dirs={"math": _deck_dir(tmp_path)})
    assert list(fresh_tmpdir.iterdir()) == []
    assert list(tmp_path.glob("*.apkg")) == [] and list(tmp_path.glob(".*tmp")) == []
