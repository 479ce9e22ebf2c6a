"""The optional `fsrs_parameters` setting: 21 finite numbers inside py-fsrs' bounds, else a
one-line SettingsError naming the file and the key; saving keeps the rest of the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from fsrs.scheduler import DEFAULT_PARAMETERS

from drill.errors import SettingsError
from drill.settings import load_settings, save_fsrs_parameters

VALID = ", ".join(str(v) for v in DEFAULT_PARAMETERS)


def _load(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "settings.toml"
    path.write_text(text, encoding="utf-8")
    return load_settings(path)


def test_absent_means_the_defaults(tmp_path: Path) -> None:
    assert _load(tmp_path, "desired_retention = 0.9\n").fsrs_parameters is None


def test_valid_parameters_are_read_as_floats(tmp_path: Path) -> None:
    values = list(DEFAULT_PARAMETERS)
    values[4] = 7  # an integer is a number too
    text = "fsrs_parameters = [\n  " + ",\n  ".join(str(v) for v in values) + ",\n]\n"
    loaded = _load(tmp_path, text).fsrs_parameters
    assert loaded == tuple(float(v) for v in values) and isinstance(loaded[4], float)


def _first(token: str) -> str:
    """The valid list with its first number replaced by `token` (TOML text)."""
    return "[" + VALID.replace("0.212", token, 1) + "]"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("[0.2, 1.2]", "must have 21 numbers (FSRS-6), got 2"),
        ("0.5", "fsrs_parameters must be a list of 21 numbers"),
        (_first("nan"), "fsrs_parameters[0] must be a finite number"),
        (_first("inf"), "fsrs_parameters[0] must be a finite number"),
        (_first("'x'"), "fsrs_parameters[0] must be a number"),
        (_first("true"), "fsrs_parameters[0] must be a number"),
        (_first("500.0"), "fsrs_parameters[0] = 500.0 is outside"),
    ],
)
def test_bad_parameters_are_one_line_errors(tmp_path: Path, value: str, message: str) -> None:
    with pytest.raises(SettingsError) as caught:
        _load(tmp_path, f"fsrs_parameters = {value}\n")
    text = str(caught.value)
    assert "\n" not in text and text.startswith(str(tmp_path / "settings.toml"))
    assert message in text


def test_save_keeps_other_lines_and_replaces_a_multi_line_array(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(
        "# my settings\nfsrs_parameters = [\n" + VALID + "\n]  # old\nnew_cards_per_day = 5\n",
        encoding="utf-8",
    )
    fitted = list(DEFAULT_PARAMETERS)
    fitted[0] = 0.4
    save_fsrs_parameters(fitted, path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# my settings\nfsrs_parameters = [0.4, ")
    assert text.endswith("new_cards_per_day = 5\n") and text.count("fsrs_parameters") == 1
    settings = load_settings(path)
    assert settings.fsrs_parameters[0] == 0.4 and settings.new_cards_per_day == 5  # type: ignore[index]


def test_save_refuses_to_touch_a_file_that_does_not_load(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("colour = 'blue'\n", encoding="utf-8")
    with pytest.raises(SettingsError, match="unknown setting"):
        save_fsrs_parameters(DEFAULT_PARAMETERS, path)
    assert path.read_text(encoding="utf-8") == "colour = 'blue'\n"
    assert [p.name for p in tmp_path.iterdir()] == ["settings.toml"]
