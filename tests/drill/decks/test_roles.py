"""The role table (decks/roles.toml): every role's decks exist and every area's tags occur in the
bundled cards; biotech comes last for training-infra and first for biotech-ml; a damaged file is
one line naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from drill.decks.loader import load_decks
from drill.decks.roles import MAX_FILE_BYTES, ROLES_FILE, Role, RolesError, load_roles
from drill.errors import DrillError

ROLES = ("training-infra", "research-engineer", "applied-ml", "biotech-ml")


@pytest.fixture(scope="module")
def bundled() -> list[tuple[str, list[str]]]:
    """(deck id, tags) of every bundled card."""
    decks = load_decks(include_bundled=True, use_cache=False)
    assert not decks.invalid_paths
    return [
        (loaded.deck.deck, list(card.tags)) for loaded in decks.decks for card in loaded.deck.cards
    ]


def test_the_bundled_table_is_package_data_with_the_four_roles() -> None:
    assert ROLES_FILE.name == "roles.toml" and ROLES_FILE.parent.name == "decks"
    table = load_roles()
    assert tuple(table.roles) == ROLES  # file order
    assert set(table.areas) == {"correctness", "performance", "reliability", "staff-judgment"}


def test_every_role_weights_decks_that_exist(bundled: list[tuple[str, list[str]]]) -> None:
    deck_ids = {deck for deck, _ in bundled}
    for role in load_roles().roles.values():
        assert set(role.deck_weights) <= deck_ids, role.name
        assert role.deck_weights, role.name


def test_every_area_and_role_tag_matches_a_bundled_card(
    bundled: list[tuple[str, list[str]]],
) -> None:
    tags = {tag for _, card_tags in bundled for tag in card_tags}
    table = load_roles()
    for area, area_tags in table.areas.items():
        assert set(area_tags) <= tags, (area, set(area_tags) - tags)
    for role in table.roles.values():
        assert set(role.tag_weights) <= tags, (role.name, set(role.tag_weights) - tags)


def test_biotech_is_last_for_training_infra_and_first_for_biotech_ml(
    bundled: list[tuple[str, list[str]]],
) -> None:
    table = load_roles()

    def values(role: Role, biotech: bool) -> list[float]:
        return [role.card_value(d, t) for d, t in bundled if (d == "biotech") == biotech]

    infra = table.role("training-infra")
    assert max(values(infra, True)) < min(values(infra, False))
    bio = table.role("biotech-ml")
    assert min(values(bio, True)) > max(values(bio, False))
    # the decks a training-infra candidate needs most come first
    assert infra.card_value("llm-scale", []) > infra.card_value("llm-training", [])


def test_a_card_value_is_deck_weight_times_the_largest_listed_tag() -> None:
    role = Role("r", "R", {"a": 2.0}, {"x": 1.5, "y": 0.5, "z": 3.0}, 0.25, (7,))
    assert role.card_value("a", []) == 2.0
    assert role.card_value("a", ["unlisted"]) == 2.0
    assert role.card_value("a", ["x", "z", "unlisted"]) == 6.0
    assert role.card_value("a", ["y"]) == 1.0  # a listed weight below 1 lowers the card
    assert role.card_value("other", ["x"]) == 0.375  # the default weight for an unlisted deck


def test_an_unknown_role_names_the_known_ones() -> None:
    with pytest.raises(DrillError) as caught:
        load_roles().role("data-scientist")
    assert str(caught.value) == (
        "unknown role 'data-scientist' (known: training-infra, research-engineer, applied-ml, "
        "biotech-ml)"
    )


def test_a_valid_file_gives_its_values(tmp_path: Path) -> None:
    path = tmp_path / "roles.toml"
    path.write_text(
        '[areas]\ncorrectness = ["resume"]\n'
        '[roles.solo]\ntitle = "Solo"\nmock_days_before = [2, 9]\n'
        "[roles.solo.decks]\nbasics = 2\n"
    )
    table = load_roles(path)
    (solo,) = table.roles.values()
    assert (solo.title, solo.default_weight, solo.mock_days_before) == ("Solo", 1.0, (9, 2))
    assert dict(solo.deck_weights) == {"basics": 2.0} and dict(solo.tag_weights) == {}
    assert dict(table.areas) == {"correctness": ("resume",)}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("roles = [", "invalid TOML"),
        ("[roles.x]\ntitle = 'X'\nfun = 1\n", "roles.x.fun is not a role key"),
        ("[colours]\n", "colours is not a key of a role table"),
        ("[areas]\n", "roles must hold at least one [roles.NAME] table"),
        ("[roles.x]\ndefault = 1\n", "roles.x.title must be text"),
        ("[roles.X]\ntitle = 'X'\n", "roles.X is not a role name"),
        (
            "[roles.x]\ntitle = 'X'\n[roles.x.decks]\nllm = 'lots'\n",
            "roles.x.decks.llm must be a number 0.01..100, got 'lots'",
        ),
        ("[roles.x]\ntitle = 'X'\n[roles.x.tags]\nddp = -1\n", "roles.x.tags.ddp must be a number"),
        (
            "[roles.x]\ntitle = 'X'\n[roles.x.tags]\nddp = nan\n",
            "roles.x.tags.ddp must be a number",
        ),
        ("[roles.x]\ntitle = 'X'\ndefault = true\n", "roles.x.default must be a number"),
        ("[roles.x]\ntitle = 'X'\nmock_days_before = [0]\n", "roles.x.mock_days_before must be"),
        ("[roles.x]\ntitle = 'X'\nmock_days_before = [3, 3]\n", "roles.x.mock_days_before"),
        ("[roles.x]\ntitle = 'X'\ndecks = 3\n", "roles.x.decks must be a table"),
        ("areas = 1\n[roles.x]\ntitle = 'X'\n", "areas must be a table"),
        ("[areas]\nspeed = []\n[roles.x]\ntitle = 'X'\n", "areas.speed must be a non-empty list"),
        ('[roles."a\\u001b[31m"]\ntitle = "X"\n', "roles.'a\\x1b[31m' is not a role name"),
    ],
)
def test_a_bad_file_is_one_line_naming_the_file_and_the_key(
    tmp_path: Path, text: str, says: str
) -> None:
    path = tmp_path / "roles.toml"
    path.write_text(text)
    with pytest.raises(RolesError) as caught:
        load_roles(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message and "\x1b" not in message
    assert says in message, message


def test_a_huge_or_missing_or_special_file_is_refused(tmp_path: Path) -> None:
    huge = tmp_path / "huge.toml"
    huge.write_text("# " + "x" * MAX_FILE_BYTES)
    missing = tmp_path / "missing.toml"
    for path, says in ((huge, "cannot read the role table"), (missing, "cannot read"),
                       (tmp_path, "cannot read the role table")):  # fmt: skip
        with pytest.raises(RolesError) as caught:
            load_roles(path)
        assert str(caught.value).startswith(f"{path}: ") and says in str(caught.value)


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "roles.toml"
    path.write_text("[roles.one]\ntitle = 'One'\n")
    assert list(load_roles(path).roles) == ["one"]
    path.write_text("[roles.two]\ntitle = 'Two, a longer title'\n")
    assert list(load_roles(path).roles) == ["two"]
