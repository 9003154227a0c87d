"""``StreamParser.may_be_slow`` lets transports move large decodes off the event loop. It may
say "maybe" too often (a thread hop wasted) but never "no" for a feed that decodes a block."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamparse.core.parser as parser_mod
from helpers import TOOLS
from streamparse import Diagnostic, StreamParser, ToolCall
from streamparse.dialects.render import RENDERERS, render

ARGS = {"path": "a.py", "content": 'if a < b and c > d: print("x}]")\n' * 3}


@pytest.mark.parametrize("dialect", sorted(RENDERERS))
@settings(max_examples=15, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=600), max_size=40))
def test_no_decode_happens_in_a_feed_declared_fast(dialect: str, cuts: list[int]) -> None:
    text = "Sure.\n" + render(dialect, "write_file", ARGS) + "\nDone."
    bounds = [0, *sorted({c for c in cuts if c < len(text)}), len(text)]
    parser = StreamParser(TOOLS, dialects=[dialect])
    old = parser_mod.SLOW_BLOCK_CHARS
    parser_mod.SLOW_BLOCK_CHARS = 0  # every block counts as large
    try:
        decoded = 0
        for a, b in zip(bounds, bounds[1:]):
            slow = parser.may_be_slow(text[a:b])
            events = parser.feed(text[a:b])
            if any(isinstance(e, (ToolCall, Diagnostic)) for e in events):
                assert slow, (dialect, text[a:b])
                decoded += 1
        slow = parser.may_be_slow()
        events = parser.close()
        if any(isinstance(e, (ToolCall, Diagnostic)) for e in events):
            assert slow
            decoded += 1
    finally:
        parser_mod.SLOW_BLOCK_CHARS = old
    assert decoded >= 1


def test_small_blocks_and_prose_are_never_slow() -> None:
    parser = StreamParser(TOOLS)
    assert not parser.may_be_slow("plain text") and not parser.may_be_slow()
    parser.feed('<tool_call>{"name": "write_file", "arguments": {"content": "')
    assert not parser.may_be_slow('"}}</tool_call>')  # a small block: decoding it is cheap
    parser.feed("x" * parser_mod.SLOW_BLOCK_CHARS)
    assert not parser.may_be_slow("more text inside the string")
    assert parser.may_be_slow('"}}</tool_call>') and parser.may_be_slow()
