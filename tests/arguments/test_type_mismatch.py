"""A value no coercion could fit to its declared type keeps the call and is reported (``type_mismatch``), the
same way whole and streamed, in every dialect family: the call never leaves with a wrong type and no word why.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamparse as sp
from streamparse.arguments import mistyped
from helpers import assert_chunking_invariant

TOOLS: list[dict[str, Any]] = [{"type": "function", "function": {"name": "plot", "parameters": {"type": "object", "properties": {
    "end": {"type": "number"}, "n": {"type": "integer"}, "label": {"type": "string"}, "on": {"type": "boolean"},
    "tags": {"type": "array", "items": {"type": "string"}}, "unit": {"enum": ["cm", "mm"]}, "anything": {}}}}}]

XML = "<tool_call>\n<function=plot>\n<parameter=end>\n2 * math.pi\n</parameter>\n</function>\n</tool_call>"
JSON = '<tool_call>{"name": "plot", "arguments": {"end": "two", "n": 3}}</tool_call>'


def mismatches(text: str, **options: Any) -> list[tuple[str, Any, Any]]:
    result = sp.parse(text, TOOLS, **options)
    return [(d.details["parameter"], d.details["value"], d.details["type"]) for d in result.diagnostics
            if d.code == "type_mismatch"]


@pytest.mark.parametrize("stream_arguments", [False, True])
@pytest.mark.parametrize(("text", "expected"), [
    (XML, [("end", '"2 * math.pi"', "number")]),  # an XML-style value is text: kept, reported
    (JSON, [("end", '"two"', "number")]),
    ('<tool_call>{"name": "plot", "arguments": {"tags": ["a", {"b": 1}]}}</tool_call>', [("tags[1]", '{"b": 1}', "string")]),
    ('<tool_call>{"name": "plot", "arguments": {"on": "maybe"}}</tool_call>', [("on", '"maybe"', "boolean")]),
])
def test_a_value_that_fits_no_declared_type_is_reported_and_kept(text: str, expected: Any, stream_arguments: bool) -> None:
    assert mismatches(text, stream_arguments=stream_arguments) == expected
    assert len(sp.parse(text, TOOLS, stream_arguments=stream_arguments).tool_calls) == 1
    assert_chunking_invariant(text, TOOLS, stream_arguments=stream_arguments)


@pytest.mark.parametrize("arguments", [
    '{"end": 3, "n": 2.0}',  # an integer is a number; an integral float an integer
    '{"n": "7", "on": "true", "label": 5}',  # coerced (reported as such), not mismatched
    '{"anything": [1, {"x": null}]}',  # no type declared
    '{"unit": "inch"}',  # enum only: enum_mismatch, not a type mismatch
])
def test_values_that_fit_or_were_coerced_are_not_mismatches(arguments: str) -> None:
    assert mismatches('<tool_call>{"name": "plot", "arguments": ' + arguments + "}</tool_call>") == []


def test_unknown_schema_types_rule_nothing_out() -> None:
    assert mistyped({"x": "a"}, {"type": "object", "properties": {"x": {"type": "any"}}}) == []
    assert mistyped({"x": 1.5}, {"type": "object", "properties": {"x": {"type": "float"}}}) == []  # BFCL's alias


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)))
def test_mistyped_never_raises_and_names_paths_inside_the_value(value: Any) -> None:
    schema = {"type": "object", "properties": {"v": {"type": "array", "items": {"type": "integer"}}}}
    for code, path, _ in mistyped({"v": value}, schema):
        assert code == "type_mismatch" and (path == "v" or path.startswith("v["))
