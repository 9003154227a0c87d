"""Streamed arguments: a value written as several bare words is one value, as written.

A small model writes ``{"city": New York}``. With ``stream_arguments`` the value is held until what follows shows
it is complete; "New" alone, with "York" read as a key after a missing comma and dropped, would be a value the
model never wrote. A colon after the last word shows that word was a key (``{x: Paris y: 2}``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamparse as sp

from budget import examples
from helpers import assert_chunking_invariant

TOOLS: list[dict[str, Any]] = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "integer"}}}}}]


def call(arguments: str) -> str:
    return '<tool_call>{"name": "f", "arguments": ' + arguments + "}</tool_call> after"


@pytest.mark.parametrize(("written", "expected"), [
    ('{"x": New York, "y": 2}', {"x": "New York", "y": 2}),
    ('{"x": New York}', {"x": "New York"}),
    ("{x: Route 66, y: 2}", {"x": "Route 66", "y": 2}),
    ("{x: São   Paulo}", {"x": "São   Paulo"}),  # the spacing as written
    ("{x: Paris y: 2}", {"x": "Paris", "y": 2}),  # a missing comma: the colon shows "y" is a key
    ("{x: Los Angeles y: 2}", {"x": "Los Angeles", "y": 2}),
    ('{"y": 3, "x": Saint Louis}', {"y": 3, "x": "Saint Louis"}),
])
def test_bare_words_stream_as_the_value_written(written: str, expected: dict[str, Any]) -> None:
    content, calls = assert_chunking_invariant(call(written), TOOLS, stream_arguments=True)
    assert calls == [("f", expected)]
    assert content == " after"


def test_an_operator_among_bare_words_still_leaves_the_member_out() -> None:
    _, calls = assert_chunking_invariant(call("{x: a b * 2, y: 2}"), TOOLS, stream_arguments=True)
    assert calls == [("f", {"y": 2})]


def test_the_streamed_fragments_of_a_multi_word_value_are_valid_json() -> None:
    parser = sp.StreamParser(TOOLS, stream_arguments=True)
    text = call('{"x": New York, "y": 2}')
    events = [e for ch in text for e in parser.feed(ch)] + parser.close()
    fragments = "".join(e.arguments_fragment for e in events if isinstance(e, sp.ToolCallDelta))
    assert json.loads(fragments) == {"x": "New York", "y": 2}


@pytest.mark.parametrize(("written", "expected"), [
    ('{"x": a   : 2}', {"x": "a"}),  # spaces before a colon are never a key
    ('{"x": New York : 2}', {"x": "New", "York": 2}),  # the last word before the colon is the key
])
def test_a_colon_after_bare_words_takes_a_word_as_the_key_never_spaces(written: str, expected: Any) -> None:
    _, calls = assert_chunking_invariant(call(written), TOOLS, stream_arguments=True)
    assert calls == [("f", expected)]


@pytest.mark.parametrize("written", ['{"x": hello world-wide web}', '{"x": a b-c}', '{"x": c a.b}'])
def test_an_expression_word_among_bare_words_leaves_the_member_out_reported(written: str) -> None:
    result = sp.parse(call(written), TOOLS, stream_arguments=True)
    assert [json.loads(c.arguments) for c in result.tool_calls] == [{}]
    assert [d.code for d in result.diagnostics] == ["rejected"]
    assert_chunking_invariant(call(written), TOOLS, stream_arguments=True)


@pytest.mark.parametrize("cut", ['{"x": New York', '{"x": New'])
def test_a_stream_cut_inside_bare_words_leaves_the_value_out(cut: str) -> None:
    text = '<tool_call>{"name": "f", "arguments": ' + cut
    result = sp.parse(text, TOOLS, stream_arguments=True)
    assert [json.loads(c.arguments) for c in result.tool_calls] == [{}]
    assert "incomplete" in [d.code for d in result.diagnostics]


@pytest.mark.parametrize(("written", "expected"), [
    ('{"x": New // c\n York}', {"x": "New"}),  # "York", a key with no value, is left out
    ('{"x": New /* c */ York, "y": 2}', {"x": "New", "y": 2}),
    ('{"x": ab/*c*/cd}', {"x": "ab"}),
    ('{"x": New York // note\n, "y": 2}', {"x": "New York", "y": 2}),  # the words before it stay one value
    ('{x: Paris // c\n y: 2}', {"x": "Paris", "y": 2}),
    ('{"x": New//c\nYork: 2}', {"x": "New", "York": 2}),
    # the shape the long fuzz found: a markup line comment between two runs of words
    ('{"x": >3<//param>\n<p name="y">}', {"x": ">3<", "<p": "name=", "y": ">"}),
])
def test_a_comment_ends_a_value_of_bare_words(written: str, expected: Any) -> None:
    _, calls = assert_chunking_invariant(call(written), None, stream_arguments=True)
    assert calls == [("f", expected)]
    result = sp.parse(call(written), None, stream_arguments=True)
    assert [d.code for d in result.diagnostics] == ["repaired"]  # the comment left out is said


def test_an_operator_after_a_comment_still_makes_the_bare_value_an_expression() -> None:
    _, calls = assert_chunking_invariant(call('{"x": hello // c\n - 2, "y": 2}'), TOOLS, stream_arguments=True)
    assert calls == [("f", {"y": 2})]


# Arguments made of bare words, spacing, comments and structure, with no quote or backslash: whatever the
# echo repairs, every key and string value it gives is a piece of the text as the model wrote it.
WORDS = ["New", "York", "a", "7", "<p>", "é"]
BETWEEN = [" ", "\n", "// c\n", "/* c */", "/**/", ":", ",", "y:", "{", "}", "[", "]", "-", "/", "//", "/*", "*/"]
WRITTEN = st.lists(st.sampled_from(WORDS * 2 + BETWEEN), max_size=16).map("".join)


@settings(max_examples=examples(400), deadline=None)
@given(WRITTEN)
def test_every_streamed_string_is_one_piece_of_the_written_text(inner: str) -> None:
    written = "{x: " + inner
    result = sp.parse(call(written), None, stream_arguments=True)
    for c in result.tool_calls:
        stack: list[Any] = [json.loads(c.arguments)]
        while stack:
            v = stack.pop()
            if isinstance(v, dict):
                assert all(k in written for k in v), (v, written)
                stack.extend(v.values())
            elif isinstance(v, list):
                stack.extend(v)
            elif isinstance(v, str):
                assert v in written, (v, written)
