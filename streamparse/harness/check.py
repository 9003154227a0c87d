"""What every parser's output is checked against: streamparse's parse of the whole text at once.

The calls (names and parsed arguments, position by position) and the text are checked separately;
text that differs only in whitespace is told apart from text that differs.

Invariant: the reference is computed by streamparse from the whole text, never from the parser
under test, and a check never changes what it compares.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..core.events import TextDelta, ToolCall
from ..core.parser import StreamParser

if TYPE_CHECKING:
    from .workloads import Workload

__all__ = ["Expected", "reference", "check"]

Expected = tuple[str, list[tuple[str, Any]]]  # (text, [(name, parsed arguments)])


def reference(workload: Workload) -> Expected:
    """streamparse's parse of the whole text at once: what every parser's output is checked against."""
    parser = StreamParser(workload.tools)
    events = parser.feed(workload.text) + parser.close()
    return ("".join(e.text for e in events if isinstance(e, TextDelta)),
            [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)])


def _loads(arguments: Any) -> Any:
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments  # not JSON: compared as written, so it differs


def check(text: str | None, calls: list[tuple[str, Any]], expected: Expected) -> tuple[int, str | None]:
    """How many calls equal the reference's at the same position, and whether the text does ("ok", "ws":
    only whitespace differs, "differs"; None when ``text`` is None: not checked)."""
    got = [(n, _loads(a)) for n, a in calls]
    matched = sum(g == e for g, e in zip(got, expected[1]))
    if text is None:
        return matched, None
    if text == expected[0]:
        return matched, "ok"
    return matched, "ws" if text.split() == expected[0].split() else "differs"
