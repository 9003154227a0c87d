"""Compiled heads (core/heads.py) answer what the part-by-part reading (scanner.match_head) answers."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamparse.core.heads import PARTIAL, HeadMatch, compile_head
from streamparse.core.scanner import marker_table, match_head
from streamparse.dialects import DIALECTS
from streamparse.dialects.spec import LIT, OPT, PEEK, Opener, lit, name, opt, peek, ws

TOOL_SETS: list[tuple[str, ...]] = [(), ("get_weather", "search"), ("Get.Weather-2", "a")]
OPENERS = [(d.name, i, op) for d in DIALECTS.values() for i, op in enumerate(d.openers)]
MADE_UP = [  # shapes the dialect table does not have (yet): an optional literal last, a gated name in the head
    Opener("<x>", head=(ws(), name(gated=True), opt("[args]")), look=()),
    Opener("<y>", head=(lit("a", "bc"),), look=(ws(), peek("{["))),
    Opener("<z>", head=(name(),), look=(lit(">"), ws(), opt("!"))),
]


def _pieces(op: Opener, tools: tuple[str, ...]) -> list[str]:
    """Bits a head is made of (its literals, their halves and other cases), tool names and noise."""
    bits = [" ", "\n", "\t", " " * 33, "\x1c", "x", "get", "_weather", "search", "Search", "a", "<", ">", "{", "[",
            ".", "-", "=", "w" * 130, *tools, *(t[: len(t) // 2] for t in tools)]
    for part in (*op.head, *op.look):
        if part.kind in (LIT, OPT):
            for t in part.texts:
                bits += [t, t.upper(), t[: max(1, len(t) // 2)], t[len(t) // 2 :]]
        elif part.kind == PEEK:
            bits += list(part.texts[0])
    return [b for b in bits if b.isascii()]


@pytest.mark.parametrize("tools", TOOL_SETS)
@pytest.mark.parametrize("entry", OPENERS + [("made_up", i, op) for i, op in enumerate(MADE_UP)])
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_a_compiled_head_reads_as_the_parts_do(entry: Any, tools: tuple[str, ...], data: st.DataObject) -> None:
    _, _, op = entry
    for pinned in (False, True):
        table = marker_table(("hermes",), tools, pinned)
        compiled = compile_head(op, table.ungated)
        if compiled is None:
            return  # declined: the parts are read one by one (nothing to compare)
        text = "".join(data.draw(st.lists(st.sampled_from(_pieces(op, tools)), max_size=6)))
        pos = data.draw(st.integers(0, len(text)))
        assert compiled(text, pos, table) == match_head(op, text, pos, False, table), (text, pos, pinned)


def test_the_dialect_tables_heads_are_compiled() -> None:
    """Every opener the table has today is read by a compiled head but for a name with a ``called`` literal, and
    Mistral's ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]`` (two names: ``match_head`` reads it, after the compiled
    ``[TOOL_CALLS]NAME[ARGS]`` declined it)."""
    table = marker_table(tuple(DIALECTS), ("get_weather",), False)
    declined = [(d.name, op.text) for d in DIALECTS.values() for op in d.openers
                if compile_head(op, table.ungated) is None]
    assert sorted(declined) == [("mistral_v11", "[TOOL_CALLS]"), ("pythonic", "[")]


def test_a_compiled_head_cases() -> None:
    table = marker_table(("qwen3_coder",), ("get_weather",), False)
    qwen = DIALECTS["qwen3_coder"].openers
    head = compile_head(qwen[0], table.ungated)
    assert head is not None
    assert head("<tool_call>\n<fu", 11, table) == PARTIAL
    assert head("<tool_call>\n<FUNCTION=x", 11, table) == HeadMatch(12, None)  # the look is not consumed
    assert head("<tool_call>\n<div>", 11, table) is None
    assert head("<tool_call>" + " " * 33 + "<function=", 11, table) is None  # too much whitespace
    named = compile_head(Opener("<n>", head=(name(gated=True),), look=(lit(">"),)), table.ungated)
    assert named is not None
    assert named("GET_WEATHER>", 0, table) == HeadMatch(11, "get_weather")  # the name as declared
    assert named("get_wea", 0, table) == PARTIAL and named("getx", 0, table) is None and named("other>", 0, table) is None
