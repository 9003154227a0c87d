"""A tool list read lazily (ToolSchemas: names at once, each schema on first use) maps every name to the schema
the eager reading (tool_schemas) gives, refuses what it refuses, and reads no schema before one is asked for."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamparse.arguments import ToolSchemas, read_tools, tool_schemas

_SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}}}
_SCHEMAS = st.sampled_from([_SCHEMA, {}, None, "not a schema", MappingProxyType(_SCHEMA), [1], {"type": "object"}])
_NAMES = st.sampled_from(["f", "F", "g", "get_weather", "ns.tool", ""])


@st.composite
def _tool(draw: st.DrawFn) -> dict[str, Any]:
    name, schema = draw(_NAMES), draw(_SCHEMAS)
    shape = draw(st.sampled_from(["openai", "bare", "anthropic", "both", "neither"]))
    if shape == "openai":
        return {"type": "function", "function": {"name": name, "parameters": schema}}
    if shape == "bare":
        return {"name": name, "parameters": schema}
    if shape == "anthropic":
        return {"name": name, "input_schema": schema}
    if shape == "both":  # parameters (even null) wins over input_schema
        return {"name": name, "parameters": schema, "input_schema": _SCHEMA}
    return {"name": name}


def _expected(tools: list[dict[str, Any]]) -> dict[str, tuple[dict[str, Any], bool]]:
    """The rule, written out: the last tool of a name gives its schema; a dict as given (True: that very object),
    another mapping as a dict, anything else {}."""
    out: dict[str, tuple[dict[str, Any], bool]] = {}
    for tool in tools:
        fn = tool["function"] if "function" in tool else tool
        schema = fn["parameters"] if "parameters" in fn else fn.get("input_schema")
        if isinstance(schema, Mapping) and schema:
            out[fn["name"]] = (schema, True) if type(schema) is dict else (dict(schema), False)
        else:
            out[fn["name"]] = ({}, False)
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(_tool(), max_size=6))
def test_lazy_and_eager_readings_give_the_rule(tools: list[dict[str, Any]]) -> None:
    expected = _expected(tools)
    eager, lazy = tool_schemas(tools), ToolSchemas(tools)
    assert eager == {name: schema for name, (schema, _) in expected.items()} and list(eager or {}) == list(expected)
    assert list(lazy.names) == [t["function"]["name"] if "function" in t else t["name"] for t in tools]
    assert bool(lazy) == bool(tools) and len(lazy) == len(expected) and list(lazy) == list(expected)
    for name, (schema, given) in expected.items():
        assert name in lazy and lazy[name] == schema and lazy.get(name) is lazy[name]  # the same object after
        if given:
            assert lazy[name] is schema and (eager or {})[name] is schema  # a dict schema: the caller's own
    assert lazy.get("no such tool") is None and lazy.get("no such tool", 7) == 7 and "no such tool" not in lazy
    with pytest.raises(KeyError):
        lazy["no such tool"]
    assert lazy == eager  # a Mapping equal to the dict


@pytest.mark.parametrize("bad", [{"name": 3}, {"function": "x"}, "a string", {"function": {"name": None}},
                                 {"function": None}, [1], {"type": "function"}, None])
def test_a_tool_with_no_name_is_refused_as_the_list_is_read(bad: Any) -> None:
    for tools in ([bad], [{"name": "ok"}, bad], [{"function": {"name": "ok"}}, bad]):
        for reading in (tool_schemas, ToolSchemas, read_tools):
            with pytest.raises(ValueError, match="a tool needs a name"):
                reading(tools)


def test_no_tools_and_an_empty_list() -> None:
    assert read_tools(None) is None and tool_schemas(None) is None
    empty = read_tools([])
    assert empty is not None and not empty and len(empty) == 0 and dict(empty) == {}
    assert list(ToolSchemas(t for t in [{"name": "f"}])) == ["f"]  # any iterable, read once
    read = ToolSchemas([{"name": "f"}])
    assert read_tools(read) is read  # read already (once, at a request's edge): given back as it is


class _Recorded(Mapping[str, Any]):
    """A mapping that notes every key read from it."""

    def __init__(self, data: dict[str, Any], seen: list[str]):
        self._data, self._seen = data, seen

    def __getitem__(self, key: str) -> Any:
        self._seen.append(key)
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def test_a_schema_is_read_on_first_use_only_and_once() -> None:
    seen: list[str] = []
    tools = [{"type": "function", "function": _Recorded({"name": "f", "parameters": _SCHEMA}, seen)},
             {"type": "function", "function": _Recorded({"name": "g"}, seen)}]
    read = ToolSchemas(tools)
    assert seen == ["name", "name"]  # built: the names only
    assert "f" in read and bool(read) and seen == ["name", "name"]
    first = read["g"]
    assert first == {} and "parameters" in seen and seen.count("input_schema") == 1  # g's, none given
    del seen[:]
    assert read["g"] is first and read.get("g") is first and seen == []  # read once: the same object after
    assert read["f"] is _SCHEMA and seen == ["parameters"]


def test_the_list_is_copied_the_tools_are_not() -> None:
    tools: list[dict[str, Any]] = [{"name": "f", "parameters": {"type": "object"}}]
    read = ToolSchemas(tools)
    tools.append({"name": "g"})  # the caller's list changes: the read list does not
    assert list(read) == ["f"] and "g" not in read
