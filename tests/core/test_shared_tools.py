"""What parsers read from a tool's schema is shared between parsers given an equal schema (calls._read_tool),
and reads exactly as the schema read alone; arguments are written as json.dumps(ensure_ascii=False) writes them."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from streamparse import StreamParser
from streamparse.core import calls
from streamparse.core.calls import _SHARED, _Tool, _encode, _read_tool
from streamparse.core.events import ToolCall

_PROPERTY = st.one_of(
    st.builds(lambda t: {"type": t}, st.sampled_from(["string", "integer", "number", "boolean", "array", "object"])),
    st.builds(lambda e: {"type": "string", "enum": e}, st.lists(st.text(max_size=3), min_size=1, max_size=3)),
    st.builds(lambda d: {"type": "string", "description": d}, st.text(max_size=8)),
    st.just({}),
)
_SCHEMA = st.builds(lambda props, required: {"type": "object", "properties": props, "required": required},
                    st.dictionaries(st.sampled_from(["a", "b", "enum", "ü"]), _PROPERTY, max_size=3),
                    st.lists(st.sampled_from(["a", "b", "c"]), max_size=2))


def _fields(tool: _Tool) -> tuple[Any, ...]:
    return (tool.schema, tool.props, tool.types, tool.strings, tool.top_fits, tool.required, tool.has_enum, tool.fits)


@settings(max_examples=200, deadline=None)
@given(_SCHEMA)
def test_a_shared_read_equals_the_schemas_own(schema: dict[str, Any]) -> None:
    own = _Tool(copy.deepcopy(schema))
    shared = _read_tool(schema)
    assert _fields(shared) == _fields(own)
    assert _read_tool(copy.deepcopy(schema)) is shared  # an equal schema, another object: the same read
    assert shared.schema is not schema  # read from its own copy


def test_a_callers_later_change_does_not_reach_the_shared_read() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    tool = _read_tool(schema)
    schema["properties"]["n"]["type"] = "string"  # the caller reuses and changes its dicts
    assert tool.types == {"n": ["integer"]}
    assert _read_tool(schema).types == {"n": ["string"]}


def test_the_same_schema_object_is_found_again_and_a_change_in_place_is_seen() -> None:
    tools = [{"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}]
    text = '<tool_call>{"name": "f", "arguments": {"n": "7"}}</tool_call>'

    def arguments() -> str:
        parser = StreamParser(tools)
        return [e for e in parser.feed(text) + parser.close() if isinstance(e, ToolCall)][0].arguments

    assert arguments() == '{"n": 7}'
    schema = tools[0]["parameters"]
    assert _read_tool(schema) is _read_tool(schema)  # a library caller's list, again: no JSON text made
    schema["properties"]["n"]["type"] = "string"  # changed in place between two requests
    assert arguments() == '{"n": "7"}'


def test_the_objects_held_to_be_found_again_are_bounded() -> None:
    kept = [{"type": "object", "description": f"tool {i}"} for i in range(3 * calls._BY_OBJECT_MAX)]
    for schema in kept:  # (a server's requests: new objects every time)
        _read_tool(schema)
        assert len(calls._BY_OBJECT) <= calls._BY_OBJECT_MAX


def test_schemas_that_are_not_plain_json_are_read_alone() -> None:
    listed = _read_tool({"type": "object", "properties": {"k": {"enum": ["x", "y"]}}})
    tupled = {"type": "object", "properties": {"k": {"enum": ("x", "y")}}}  # JSON text alike, not equal
    assert _read_tool(tupled) is not listed and _read_tool(tupled).schema is tupled
    odd = {"type": "object", "properties": {"k": {"enum": {"x"}}}}  # a set: no JSON text at all
    assert _read_tool(odd).schema is odd and _read_tool(odd).has_enum
    assert not _read_tool({"type": "object", "description": "no enum here"}).has_enum


def test_parsers_sharing_a_read_give_the_calls_of_parsers_that_do_not(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer"}, "c": {"type": "string", "enum": ["Red", "Blue"]}},
        "required": ["n", "x"]}}}]
    text = "<tool_call>\n<function=f>\n<parameter=n>\n7\n</parameter>\n<parameter=c>\nred\n</parameter>\n</function>\n</tool_call>"

    def run() -> list[Any]:
        parser = StreamParser(tools, id_factory=lambda: "id")
        return [(type(e).__name__, getattr(e, "arguments", None), getattr(e, "code", None))
                for e in parser.feed(text) + parser.close()]

    with monkeypatch.context() as m:
        m.setattr(calls, "_SCHEMA_TEXT", None)  # no JSON text: every parser reads the schema alone
        alone = run()
    assert ("ToolCall", '{"n": 7, "c": "Red"}', None) in alone and ("Diagnostic", None, "missing_required") in alone
    _SHARED.clear()
    assert run() == alone  # the first parser fills the shared read
    assert run() == alone  # the second reads it


def test_what_is_shared_is_bounded_in_size() -> None:
    big = {"type": "object", "properties": {"x": {"type": "string", "description": "d" * (calls._SHARE_MAX_CHARS + 1)}}}
    assert _read_tool(big).schema is big and not any(t.schema == big for t in _SHARED.values())  # read alone
    _SHARED.clear()
    calls._shared_chars = 0
    each = calls._SHARE_MAX_CHARS - 100
    for i in range(calls._SHARED_MAX_CHARS // each + 2):
        _read_tool({"type": "object", "description": f"{i}" + "d" * (each - 40)})
        assert calls._shared_chars <= calls._SHARED_MAX_CHARS
        assert calls._shared_chars == sum(len(k) for k in _SHARED)


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                     max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_arguments_are_written_as_json_dumps_writes_them(value: Any) -> None:
    assert _encode(value) == json.dumps(value, ensure_ascii=False)


def test_a_call_carries_that_text() -> None:
    parser = StreamParser([{"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "number"}}}}])
    events = parser.feed("<tool_call>\n<function=f>\n<parameter=x>\n1e400\n</parameter>\n</function>\n</tool_call>")
    calls = [e for e in events + parser.close() if isinstance(e, ToolCall)]
    assert len(calls) == 1 and calls[0].arguments == json.dumps(json.loads(calls[0].arguments), ensure_ascii=False)


def test_values_are_checked_against_properties_that_fit_no_scalar() -> None:
    schema = {"type": "object", "properties": {"xs": {"type": "array"}, "n": {"type": "integer"}, "f": {"type": "number"},
                                               "free": "not a schema"}}
    tool = _Tool(schema)
    assert [code for code, _, _ in tool.mistyped({"xs": 3, "n": 2.5, "f": 2, "free": [1], "other": {}})] == [
        "type_mismatch", "type_mismatch"]  # xs (an array wanted), n (2.5 is not integral); the rest fits
    assert tool.mistyped({"xs": [1], "n": 2.0, "f": True}) == [("type_mismatch", "f", {"value": "true", "type": "number"})]
