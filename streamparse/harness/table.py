"""The one table writer of the benchmark's reports: cells in columns, each as wide as its widest cell.

Invariant: every line ``lay_out`` returns has its cells in the same columns: a column is as wide as
its widest cell (or its least width, if more), cells are padded left or right as the column's
alignment says and joined by one space; with ``fit``, that one column is narrowed (down to
``FIT_LEAST``) so the lines fit ``width``, its longer cells clipped with ``…``. A row of another length than
``align``, or ``fit`` without ``width``, is refused (``ValueError``), never clipped or padded silently.
Formatting only.
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["lay_out", "clip", "fmt", "FIT_LEAST"]

FIT_LEAST = 8  # the fitted column never gets narrower than this, even if the lines then overflow


def fmt(value: float | None, digits: int = 2) -> str:
    """A figure's cell: ``value`` with ``digits`` decimals and thousands commas; ``-`` for None or NaN."""
    if value is None or value != value:  # None or NaN
        return "-"
    return f"{value:,.{digits}f}"


def clip(cell: str, width: int) -> str:
    """``cell``, cut to ``width`` characters with ``…`` as the last when longer."""
    return cell if len(cell) <= width else cell[: width - 1] + "…"


def lay_out(rows: Sequence[Sequence[str]], align: str, *, least: Sequence[int] = (), fit: int | None = None,
            width: int | None = None, ragged: bool = True) -> list[str]:
    """``rows`` (a header is a row like the others) as lines. ``align``: one letter per column, ``l`` (left)
    or ``r`` (right); ``least``: least widths, column by column (missing: none); ``fit``: the column that
    takes what the others leave of ``width``. ``ragged``: trailing spaces are cut off each line; otherwise
    every line is the table's full width (for a caller that writes on after the last column).
    A row with more or fewer cells than ``align`` has letters, ``fit`` without ``width`` (or naming no column),
    or an ``align`` letter other than ``l`` or ``r`` is a ``ValueError``."""
    if any(a not in "lr" for a in align):
        raise ValueError(f"align takes one 'l' or 'r' per column, not {align!r}")
    short = next((row for row in rows if len(row) != len(align)), None)
    if short is not None:
        raise ValueError(f"a row of {len(short)} cells for {len(align)} columns ({align!r}): {list(short)!r}")
    if fit is not None and (width is None or not 0 <= fit < len(align)):
        raise ValueError(f"fit={fit} needs a width and one of the {len(align)} columns")
    widths = [max([least[i] if i < len(least) else 0, *(len(row[i]) for row in rows)]) for i in range(len(align))]
    if fit is not None and width is not None:
        room = max(width - sum(w + 1 for i, w in enumerate(widths) if i != fit), FIT_LEAST)
        widths[fit] = min(widths[fit], room)
    lines = []
    for row in rows:
        cells = [clip(cell, w) if i == fit else cell for i, (cell, w) in enumerate(zip(row, widths))]
        line = " ".join(f"{c:<{w}}" if a == "l" else f"{c:>{w}}" for c, w, a in zip(cells, widths, align))
        lines.append(line.rstrip() if ragged else line)
    return lines
