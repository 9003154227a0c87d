"""Run the serving engines' parser-test cases (transcribed in ``engine_cases``) through streamparse.

Invariant: a case passes in a mode when the whole-text parse gives exactly the expected calls
(names and parsed arguments, in order) and the expected content (compared with runs of whitespace
folded, since the engines strip differently), *and* every chunking gives the same result as the
whole text. Two modes, as an operator runs the model: ``auto`` (every dialect detected) and
``pinned`` (``dialects=[case.dialect]``); "as the operator runs it" is the better of the two.

``python tests/dialects/engine_parity.py`` prints the pass rates per family and the failures.
"""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import streamparse as sp  # noqa: E402
from engine_cases import CASES, Case  # noqa: E402

CHUNKINGS = (1, 2, 3, 5, 8, 13)
MODES = ("auto", "pinned")

Outcome = tuple[str, list[tuple[str, Any]]]


def _run(text: str, tools: Any, dialects: list[str] | None, size: int | None) -> Outcome:
    options: dict[str, Any] = {} if dialects is None else {"dialects": dialects}
    parser = sp.StreamParser(tools, **options)
    pieces = [text] if size is None else [text[i : i + size] for i in range(0, len(text), size)]
    events: list[sp.Event] = []
    for piece in pieces:
        events += parser.feed(piece)
    events += parser.close()
    result = sp.ParseResult(events)
    return result.content, [(c.name, json.loads(c.arguments)) for c in result.tool_calls]


def fold(text: str | None) -> str:
    return " ".join((text or "").split())


def check(case: Case, mode: str) -> str:
    """'' when the case passes in ``mode``, else what went wrong (one line)."""
    dialects = None if mode == "auto" else [case.dialect]
    try:
        whole = _run(case.text, case.tool_list(), dialects, None)
    except Exception as exc:  # noqa: BLE001 - a failure to report, not to hide
        return f"raised {type(exc).__name__}: {exc}"
    for size in CHUNKINGS:
        if _run(case.text, case.tool_list(), dialects, size) != whole:
            return f"chunks of {size} differ from the whole text"
    content, calls = whole
    if calls != [(n, a) for n, a in case.calls]:
        return f"calls {calls!r}"
    if case.content is not None and fold(content) != fold(case.content):
        return f"content {content!r}"
    return ""


def family(case: Case) -> str:
    return case.family or case.dialect


def table() -> str:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # cases, auto, operator
    failures: list[str] = []
    marked = 0
    for case in CASES:
        if case.promise:
            marked += 1
            continue
        auto = check(case, "auto")
        pinned = check(case, "pinned") if auto else ""
        row = counts[family(case)]
        row[0] += 1
        row[1] += not auto
        row[2] += not (auto and pinned)
        if auto:
            failures.append(f"{case.id}: auto: {auto}" + (f" | pinned: {pinned}" if pinned else " | pinned passes"))
    total = [sum(r[i] for r in counts.values()) for i in range(3)]
    lines = [f"{'family':<16} {'cases':>5} {'auto':>12} {'as operator':>12}"]
    for name, (n, a, o) in sorted(counts.items()) + [("TOTAL", tuple(total))]:  # type: ignore[list-item]
        lines.append(f"{name:<16} {n:>5} {a:>5} {a / n:>6.0%} {o:>5} {o / n:>6.0%}")
    lines.append(f"({marked} cases where the engine breaks a promise are left out)")
    return "\n".join(lines + ["", *failures])


if __name__ == "__main__":
    print(table())
