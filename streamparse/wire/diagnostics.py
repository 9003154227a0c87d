"""Diagnostics on the wire: what the parser refused, repaired or coerced, told to the client beside a valid payload.

The OpenAI and Anthropic payloads never change shape for this: a strict client sees exactly the chunks, events
or completion it would see without it. Streams carry one SSE comment line per diagnostic
(``: streamparse diagnostic {json}``, which SSE clients ignore); a whole answer carries a header value
(``x-streamparse-diagnostics: [json, ...]``). Each diagnostic is a JSON object: ``code``, ``message``,
``dialect``, ``details`` and ``choice`` (the choice index it came from). Both are on by default and turned
off per rewriter (``report_diagnostics=False``).

Invariant: what this module writes is bounded and safe where it goes: a comment is one line (JSON escapes
every line break), a header value is ASCII and at most ``HEADER_LIMIT`` characters, a message at most
``MESSAGE_LIMIT`` and each detail at most ``DETAIL_LIMIT`` characters of JSON (longer ones are cut, marked
with "…").
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from ..core.events import Diagnostic

__all__ = ["listed_names", "LISTED_NAMES", "DIAGNOSTICS_HEADER", "COMMENT_PREFIX", "HEADER_LIMIT", "MESSAGE_LIMIT", "DETAIL_LIMIT", "wire_diagnostic",
           "comment_text", "header_value"]

DIAGNOSTICS_HEADER = "x-streamparse-diagnostics"
COMMENT_PREFIX = "streamparse diagnostic "
HEADER_LIMIT = 4096
MESSAGE_LIMIT = 300
DETAIL_LIMIT = 300


LISTED_NAMES = 20  # names a note lists at most


def listed_names(note: str, names: list[str]) -> str:
    """``note: a, b, c`` with at most ``LISTED_NAMES`` names, each printable ASCII (a note goes in a header)."""
    shown = [n if n.isascii() and n.isprintable() else ascii(n) for n in names[:LISTED_NAMES]]
    more = f" and {len(names) - LISTED_NAMES} more" if len(names) > LISTED_NAMES else ""
    return f"{note}: {', '.join(shown)}{more}"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _detail(value: Any) -> Any:
    """A detail as it is, when its JSON is short; else its JSON text, cut."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return _cut(repr(value), DETAIL_LIMIT)
    return value if len(text) <= DETAIL_LIMIT else _cut(text, DETAIL_LIMIT)


def wire_diagnostic(diagnostic: Diagnostic, choice: int = 0) -> dict[str, Any]:
    """A diagnostic as the JSON object the client is sent."""
    return {"code": diagnostic.code, "message": _cut(diagnostic.message, MESSAGE_LIMIT), "dialect": diagnostic.dialect,
            "details": {str(k): _detail(v) for k, v in diagnostic.details.items()}, "choice": choice}


def comment_text(diagnostic: dict[str, Any]) -> str:
    """The SSE comment (without its leading ``": "``) that carries one wire diagnostic."""
    return COMMENT_PREFIX + json.dumps(diagnostic, ensure_ascii=False, separators=(",", ":"))


def header_value(diagnostics: Iterable[dict[str, Any]], limit: int = HEADER_LIMIT) -> str | None:
    """The wire diagnostics of a whole answer as one header value: a compact JSON list, ASCII, at most
    ``limit`` characters. The diagnostics that do not fit are left out and counted in a last
    ``{"code": "omitted", "count": n}``. None when there are none."""
    kept: list[str] = []
    size = 2  # the brackets
    items = [json.dumps(d, ensure_ascii=True, separators=(",", ":")) for d in diagnostics]
    if not items:
        return None
    reserve = len('{"code":"omitted","count":}') + len(str(len(items))) + 1
    for n, item in enumerate(items):
        room = limit - size - len(item) - (1 if kept else 0)
        if room < (0 if n == len(items) - 1 else reserve):
            omitted = json.dumps({"code": "omitted", "count": len(items) - n}, separators=(",", ":"))
            kept.append(omitted)
            break
        kept.append(item)
        size += len(item) + (1 if len(kept) > 1 else 0)
    return "[" + ",".join(kept) + "]"
