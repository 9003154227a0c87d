"""The constraints write no format's markers: they take them from the dialects' declarations.

Every marker a dialect declares (its grammar's plain terminals, its openers, end markers, closers, item, wrapper,
value tags and spans, and the XML-parameter and key/value families' tags) is looked for in the string constants of
``streamparse/constraints/*.py``'s code; docstrings and ``UNSUPPORTED``'s reasons (prose saying why a dialect has no
constraint) are not read. The only occurrences are the few ``ELSEWHERE`` lists, each with why it is not a format's
marker though it is the same text.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Iterator

from code_strings import code_strings
from streamparse.dialects import DIALECTS, SPANS
from streamparse.dialects.kv_family import KvCall
from streamparse.dialects.markup import plain_terminals
from streamparse.dialects.xml_family import XmlCall

SOURCES = sorted((Path(__file__).resolve().parents[2] / "streamparse" / "constraints").glob("*.py"))

ELSEWHERE = {
    # Markdown's code fence: the loose forms small models write around a hermes or llama3_json call, and the fence
    # a model may close after its calls. The same texts as deepseek_v3's (``_JSON_FENCE``, ``_FENCE_CLOSE``) and
    # command_r's fence markers, but no dialect's: streamparse reads such a fence around any JSON call.
    "```json": 3,
    "```": 5,
}


def _all_markers() -> Iterator[str]:
    for declared in DIALECTS.values():
        yield from plain_terminals(declared.grammar).values()
        yield from (o.text for o in declared.openers)
        yield from (*declared.end, *declared.closers, *(declared.item or ()), *(declared.nest or ()))
        if declared.values is not None:
            yield from (*declared.values.open, declared.values.close)
        if isinstance(declared.markup, XmlCall):
            m = declared.markup
            yield from (m.call_open, m.param_open, m.value_close, m.call_close)
        if isinstance(declared.kv, KvCall):
            yield from (declared.kv.key_open, declared.kv.value_close, *(declared.kv.item_tags or ()))
    for span in SPANS:
        yield from (span.opener, *span.closers)


def _scanned(text: str) -> bool:
    """Distinctive enough to look for: three characters or more, not a word, not JSON's own ``{"name"``."""
    return len(text) >= 3 and not text.isalnum() and not text.startswith(("{", '"')) and "{name}" not in text


@functools.cache
def _code_strings(path: Path) -> tuple[str, ...]:
    return code_strings(path.read_text(encoding="utf-8"), lambda name: name == "UNSUPPORTED")


def test_no_declared_marker_is_written_in_the_constraints_code() -> None:
    markers = {m for m in _all_markers() if _scanned(m)}
    assert len(markers) > 200  # the declarations are read: hundreds of markers are looked for
    found = {m: sum(s.count(m) for path in SOURCES for s in _code_strings(path)) for m in markers}
    wrong = {m: n for m, n in found.items() if n != ELSEWHERE.get(m, 0)}
    assert not wrong, f"markers written in streamparse/constraints/*.py (found, allowed): " \
                      f"{ {m: (n, ELSEWHERE.get(m, 0)) for m, n in wrong.items()} }"
