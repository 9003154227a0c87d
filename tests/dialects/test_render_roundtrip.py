"""A value streamparse renders reads back exactly, in every dialect it renders: whitespace at a value's edges
(a trailing newline, as a file's content has; a leading one; CRLF; indentation) is the value's, not layout.
(A lone carriage return ending a value is the one form left out: a tag's layout newline after it reads as CRLF.)"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamparse as sp
from streamparse.dialects.render import NAMED_ONLY_RENDERERS, RENDERERS, render

from budget import examples
from helpers import feed_chunks, summary

WRITE = [{"type": "function", "function": {"name": "write_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}}]
DIALECTS = sorted(set(RENDERERS) | set(NAMED_ONLY_RENDERERS))
EDGES = ["a\n", "\na", "a\n\n", "\n", "\n\n", "  a  ", "a\r\n", "\r\n", " ", "\t", "a\n  ", "  \n  a\n  ",
         "line one\nline two\n", "\tindented\n\tblock\n"]
VALUES = st.lists(st.sampled_from(["a", "b", " ", "\n", "\t", "\r\n", "x<y", "  "]), max_size=6).map("".join)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("value", EDGES)
def test_a_value_with_whitespace_at_its_edges_reads_back(dialect: str, value: str) -> None:
    args = {"path": "a.txt", "content": value}
    result = sp.parse(render(dialect, "write_file", args), WRITE, dialects=[dialect])
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == [("write_file", args)]


@pytest.mark.parametrize("dialect", DIALECTS)
@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=VALUES, size=st.integers(1, 9))
def test_any_whitespace_value_reads_back_streamed_or_whole(dialect: str, value: str, size: int) -> None:
    args = {"path": "a.txt", "content": value}
    text = render(dialect, "write_file", args)
    for chunk in (len(text), size):
        assert summary(feed_chunks(text, chunk, WRITE, dialects=[dialect])) == ("", [("write_file", args)])
