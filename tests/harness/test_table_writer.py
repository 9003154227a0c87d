"""``harness.table.lay_out``, the one table writer behind the workload table, the engines table, the proxy
load figures and the proxy cost table: columns line up, widths follow the widest cell, a fitted column is
clipped to the width left for it, and a table can stay unragged for a caller that writes on after it."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from streamparse.harness.table import FIT_LEAST, clip, lay_out

CELL = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FF), max_size=12)


def test_columns_line_up_left_and_right_and_trailing_space_is_cut() -> None:
    lines = lay_out([("name", "n", "unit"), ("streamparse", "12", ""), ("x", "1,234", "ms")], "lrl")
    assert lines == ["name            n unit",
                     "streamparse    12",
                     "x           1,234 ms"]


def test_a_least_width_holds_even_when_every_cell_is_narrower() -> None:
    assert lay_out([("a", "1")], "lr", least=(3, 6)) == ["a        1"]


def test_an_unragged_table_keeps_every_line_at_full_width() -> None:
    lines = lay_out([("format", "ratio"), ("hermes", "0.5×"), ("a", "")], "ll", ragged=False)
    assert {len(line) for line in lines} == {len("format ratio")}


def test_the_fitted_column_is_clipped_to_what_the_others_leave() -> None:
    rows = [("a_very_long_parser_name_indeed", "1.0"), ("short", "22.5")]
    lines = lay_out(rows, "lr", fit=0, width=16)
    assert lines == ["a_very_lon…  1.0", "short       22.5"]  # 16 - (4 + 1): 11 for the name
    assert all(len(line) <= 16 for line in lines)
    assert clip("abcdef", 4) == "abc…" and clip("abc", 4) == "abc"


def test_the_fitted_column_keeps_its_least_width_when_nothing_is_left() -> None:
    lines = lay_out([("parser_name_long", "x" * 30)], "lr", fit=0, width=10)
    assert lines[0].split()[0] == "parser_…" and len(lines[0].split()[0]) == FIT_LEAST


@given(st.lists(st.tuples(CELL, CELL, CELL), min_size=1, max_size=6), st.sampled_from(["lll", "lrl", "rrr"]))
def test_every_cell_starts_where_its_column_starts(rows: list[tuple[str, str, str]], align: str) -> None:
    lines = lay_out(rows, align, ragged=False)
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for line, row in zip(lines, rows):
        at = 0
        for cell, w, a in zip(row, widths, align):
            assert line[at:at + w] == (cell.ljust(w) if a == "l" else cell.rjust(w))
            at += w + 1


def test_a_fitted_column_without_a_width_is_refused() -> None:
    with pytest.raises(ValueError, match="width"):
        lay_out([("a_long_name", "1")], "lr", fit=0)
    with pytest.raises(ValueError, match="width"):
        lay_out([("a", "1")], "lr", fit=2, width=20)  # no third column to fit
    assert lay_out([("a_long_name", "1")], "lr", fit=0, width=40) == ["a_long_name 1"]


@pytest.mark.parametrize("row", [("only",), ("a", "b", "c")])
def test_a_row_of_another_length_than_align_is_refused(row: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="2 columns"):
        lay_out([("name", "n"), row], "lr")


def test_an_unknown_alignment_letter_is_refused() -> None:
    with pytest.raises(ValueError, match="align"):
        lay_out([("a", "1")], "lc")
