"""The one text table the commands print: aligned columns, a dashed rule, no trailing
spaces, and a ragged row refused."""

from __future__ import annotations

import pytest

from conductor_gym.cli.table import text_table


def test_columns_align_under_a_dashed_rule_without_trailing_spaces() -> None:
    table = text_table(["name", "n", "note"], [["offline", "2000", ""], ["x", "7", "ok"]])
    assert table.split("\n") == [
        "name     n     note",
        "-------  ----  ----",
        "offline  2000",
        "x        7     ok",
    ]


def test_a_header_alone_is_a_table_and_a_ragged_row_is_refused() -> None:
    assert text_table(["a", "bb"], []) == "a  bb\n-  --"
    with pytest.raises(ValueError, match="every table row needs 2 cells"):
        text_table(["a", "bb"], [["1"]])
