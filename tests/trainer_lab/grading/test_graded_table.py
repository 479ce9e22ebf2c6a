"""The "How it is graded" table: built from each prompt's rows (data), printed in its contract,
and handed to readers as those rows (drill's notebook never parses the printed contract)."""

from __future__ import annotations

import pytest

from trainer_lab.grading import PROMPT_IDS, get_prompt
from trainer_lab.grading.graded_table import graded_rows, graded_table


def test_rows_pad_the_phase_to_the_widest_name_and_indent_the_rest_under_the_text() -> None:
    rows = graded_rows({"a": "one\ntwo", "longer": "three"})
    assert rows == {"a": "a       one\n        two", "longer": "longer  three"}
    assert graded_table({"a": "one\ntwo", "longer": "three"}) == (
        "  a       one\n          two\n  longer  three\n"
    )


@pytest.mark.parametrize("name", PROMPT_IDS)
def test_every_prompt_prints_its_rows_in_order_under_how_it_is_graded(name: str) -> None:
    prompt = get_prompt(name)
    assert list(prompt.graded) == list(prompt.phases)
    table = prompt.contract.split("\nHow it is graded", 1)[1].split("\n", 1)[1]
    printed = "".join(f"  {line}\n" for row in prompt.graded.values() for line in row.split("\n"))
    assert table.endswith(printed)
    for phase, row in prompt.graded.items():
        assert row.startswith(phase + "  ") and f"\n  {row.splitlines()[0]}\n" in prompt.contract
