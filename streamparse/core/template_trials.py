"""Trial reading: does one declaration read a rendered answer as exactly the calls the template wrote?

Invariant: an answer is read exactly only when the parser, pinned to the declaration and started where the
generation prompt leaves the answer, gives the same calls (names and typed arguments), no text but whitespace
around them (what follows the last call may be one marker that ends the turn, never a closer of the call's own
markup), and the same reading whole and streamed at every chunking tried. A declaration that raises is not exact.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..dialects.spec import Dialect
from .events import ReasoningDelta, TextDelta, ToolCall
from .parser_class import parser_class

__all__ = ["Trial", "trial_read"]

_CHUNKINGS = (1, 2, 5, 13)  # deltas of these sizes, besides the whole text


@dataclass(frozen=True)
class Trial:
    """How one declaration read one rendered answer."""

    exact: bool
    turn_end: str = ""  # what followed the last call (stripped): the template's end of a call turn
    why: str = ""  # when not exact


def _ids() -> Any:
    n = iter(range(1_000_000))
    return lambda: f"call_{next(n)}"


def _read(dialect: str | Dialect, deltas: Sequence[str], tools: Sequence[Mapping[str, Any]],
          start: tuple[bool, bool], prompt: str) -> list[Any]:
    parser = parser_class()(tools, dialects=[dialect], start_in_reasoning=start[0], start_in_response=start[1],
                            generation_prompt=prompt or None, id_factory=_ids())
    events: list[Any] = [ev for d in deltas for ev in parser.feed(d)]
    events += parser.close()
    return events


def _shape(events: list[Any]) -> tuple[list[str], str, list[tuple[str, Any]]]:
    """(text runs around the calls: one more than the calls, reasoning, calls with parsed arguments)."""
    runs, reasoning, calls = [""], [], []
    for ev in events:
        if isinstance(ev, TextDelta):
            runs[-1] += ev.text
        elif isinstance(ev, ReasoningDelta):
            reasoning.append(ev.text)
        elif isinstance(ev, ToolCall):
            calls.append((ev.name, json.loads(ev.arguments)))
            runs.append("")
    return runs, "".join(reasoning), calls


def _closes_markup(end: str, text: str) -> bool:
    """Is ``end`` the closer of a tag written before it (``</tool_call>`` after ``<tool_call>``)? Then it is markup
    left over, not the end of the turn."""
    word = "".join(ch for ch in end.lower() if ch.isalnum() or ch == "_")
    if not word:
        return False
    before = text[: text.rfind(end)].lower()
    return any(word == "".join(ch for ch in tag if ch.isalnum() or ch == "_")
               for tag in _tags(before))


def _tags(text: str) -> Iterable[str]:
    start = 0
    while True:
        a = text.find("<", start)
        if a < 0:
            return
        b = text.find(">", a)
        if b < 0:
            return
        yield text[a : b + 1]
        start = a + 1


def trial_read(dialect: str | Dialect, text: str, expected: Sequence[tuple[str, Mapping[str, Any]]],
               tools: Sequence[Mapping[str, Any]], start: tuple[bool, bool] = (False, False),
               prompt: str = "") -> Trial:
    """Does ``dialect`` read ``text`` as exactly the ``expected`` calls, whole and streamed? ``start``: the answer
    starts inside (reasoning, a response channel); ``prompt``: the generation prompt (its last line may begin the
    answer's markup: ``StreamParser``'s ``generation_prompt``)."""
    try:
        whole = _shape(_read(dialect, [text], tools, start, prompt))
    except Exception as exc:  # a declaration derived from untrusted text must not break the caller
        return Trial(False, why=f"reading failed: {type(exc).__name__}: {exc}")
    runs, _, calls = whole
    want = [(name, dict(args)) for name, args in expected]
    if calls != want:
        return Trial(False, why=f"read {[n for n, _ in calls] or 'no call'} where the template wrote "
                                f"{[n for n, _ in want]}" if [n for n, _ in calls] != [n for n, _ in want]
                     else "the arguments read differ from those the template wrote")
    if any(run.strip() for run in runs[:-1]):
        left = next(run.strip() for run in runs[:-1] if run.strip())
        return Trial(False, why=f"markup left in the content: {left[:80]!r}")
    end = runs[-1].strip()
    if end and (len(end) > 40 or any(ch.isspace() for ch in end) or _closes_markup(end, text)):
        return Trial(False, why=f"markup left in the content after the calls: {end[:80]!r}")
    for size in _CHUNKINGS:
        deltas = [text[i : i + size] for i in range(0, len(text), size)]
        try:
            streamed = _shape(_read(dialect, deltas, tools, start, prompt))
        except Exception as exc:
            return Trial(False, why=f"reading failed streamed: {type(exc).__name__}: {exc}")
        if streamed != whole:
            return Trial(False, why=f"streamed in deltas of {size} it reads otherwise than whole")
    return Trial(True, turn_end=end)


