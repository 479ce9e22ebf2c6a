"""settings.toml: defaults, valid values, and every bad file a one-line SettingsError naming the
file (and the key): non-finite numbers, wrong types, unknown keys, broken TOML, odd files."""

from __future__ import annotations

import os
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drill.cli.main import main
from drill.errors import SettingsError
from drill.paths import settings_path
from drill.settings import Settings, load_settings


def _load(tmp_path: Path, text: str) -> Settings:
    path = tmp_path / "settings.toml"
    path.write_text(text, encoding="utf-8")
    return load_settings(path)


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(SettingsError) as caught:
        _load(tmp_path, text)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{tmp_path / 'settings.toml'}: ")
    return message


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    assert load_settings(tmp_path / "none.toml") == Settings()


def test_valid_values_are_read(tmp_path: Path) -> None:
    text = (
        "desired_retention = 0.85\nnew_cards_per_day = 5\n"
        "learn_ahead_minutes = 0\nday_start_hour = 0\n"
    )
    assert _load(tmp_path, text) == Settings(0.85, 5, 0, 0)
    assert _load(tmp_path, "desired_retention = 0.9\n").desired_retention == 0.9


def test_a_utf8_bom_is_allowed_as_in_deck_files(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_bytes(b"\xef\xbb\xbfnew_cards_per_day = 7\n")  # what Notepad writes
    assert load_settings(path).new_cards_per_day == 7


@pytest.mark.parametrize("value", ["nan", "+nan", "-nan", "inf", "+inf", "-inf", "1e999"])
def test_non_finite_numbers_are_rejected_naming_the_key(tmp_path: Path, value: str) -> None:
    message = _error(tmp_path, f"desired_retention = {value}\n")
    assert "desired_retention must be a finite number, got " in message


@pytest.mark.parametrize("key", ["new_cards_per_day", "learn_ahead_minutes", "day_start_hour"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "4.0", "true", '"4"', "[4]", "{a = 4}"])
def test_whole_number_settings_take_only_integers(tmp_path: Path, key: str, value: str) -> None:
    assert f"{key} must be a whole number, got " in _error(tmp_path, f"{key} = {value}\n")


def test_out_of_range_and_unknown_keys(tmp_path: Path) -> None:
    assert "between 0.7 and 0.99" in _error(tmp_path, "desired_retention = 1\n")
    assert "between 0 and 23" in _error(tmp_path, "day_start_hour = 24\n")
    assert "between 0 and 10000" in _error(tmp_path, "new_cards_per_day = 99999999999999999999\n")
    assert "unknown setting 'retention'" in _error(tmp_path, "retention = 0.9\n")


@pytest.mark.parametrize(
    "text",
    [
        "desired_retention = \n",
        "desired_retention = " + "9" * 5000 + "\n",  # int() digit limit: ValueError in tomllib
        "desired_retention = " + "[" * 5000 + "]" * 5000 + "\n",  # RecursionError in tomllib
        "x = {" * 3000 + "\n",
        "desired_retention = 2021-02-30\n",
    ],
)
def test_broken_toml_is_a_settings_error(tmp_path: Path, text: str) -> None:
    assert "invalid TOML" in _error(tmp_path, text)


def test_odd_files(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_bytes(b"desired_retention = 0.9 # \xff\xfe\n")
    with pytest.raises(SettingsError, match="cannot read settings"):
        load_settings(path)
    path.unlink()
    path.mkdir()
    with pytest.raises(SettingsError, match="not a regular file"):
        load_settings(path)
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(SettingsError, match="not a regular file"):  # would block a read
        load_settings(fifo)
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * 100_000 + "\n")
    with pytest.raises(SettingsError, match="larger than"):
        load_settings(big)


def test_the_cli_reports_a_bad_setting_in_one_line_exit_2(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings_path().parent.mkdir(parents=True, exist_ok=True)
    settings_path().write_text("desired_retention = nan\n")
    assert main(["due"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"drill: error: {settings_path()}: desired_retention must be a finite number, got nan\n"
    )


# --- fuzzing: whatever the file holds, Settings or SettingsError -------------------------------
KEYS = ["desired_retention", "new_cards_per_day", "learn_ahead_minutes", "day_start_hour"]
TOML_VALUES = st.one_of(
    st.sampled_from(["nan", "-inf", "inf", "true", "1e999", "0x10", "1_000", "4.0", "''", "[]"]),
    st.integers(-(10**30), 10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=20).map(lambda t: '"' + t.replace("\\", "").replace('"', "") + '"'),
    st.text(alphabet=string.printable, max_size=30),
)


@st.composite
def settings_files(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        key = draw(st.one_of(st.sampled_from(KEYS), st.text(max_size=10)))
        lines.append(f"{key} = {draw(TOML_VALUES)}")
    if draw(st.booleans()):
        lines.append(draw(st.text(max_size=80)))  # free-form junk
    return "\n".join(lines)


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(text=settings_files())
def test_fuzzed_settings_text_gives_settings_or_a_settings_error(text: str) -> None:
    _check_any(text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(data=st.binary(max_size=200))
def test_fuzzed_settings_bytes_give_settings_or_a_settings_error(data: bytes) -> None:
    _check_any(data)


def _check_any(data: bytes) -> None:
    path = Path(os.environ["DRILL_HOME"]) / "fuzz-settings.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    try:
        loaded = load_settings(path)
    except SettingsError as error:
        message = str(error)
        assert "\n" not in message and message.startswith(f"{path}: ")
        return
    for name in KEYS:  # accepted values are in range (NaN compares false to everything)
        value = getattr(loaded, name)
        assert value == value and abs(value) != float("inf")
    assert 0.7 <= loaded.desired_retention <= 0.99


def test_leech_settings(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('leech_threshold = 5\nleech_action = "tag"\n')
    assert (load_settings(path).leech_threshold, load_settings(path).leech_action) == (5, "tag")
    assert (Settings().leech_threshold, Settings().leech_action) == (8, "suspend")
    for text, message in [
        ('leech_action = "delete"', 'leech_action must be "suspend" or "tag"'),
        ("leech_action = 3", 'leech_action must be "suspend" or "tag", got 3'),
        ("leech_threshold = -1", "leech_threshold must be between 0 and 1000"),
        ('leech_threshold = "8"', "leech_threshold must be a whole number"),
    ]:
        path.write_text(text)
        with pytest.raises(SettingsError, match=message):
            load_settings(path)
