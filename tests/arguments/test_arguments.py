"""Relaxed JSON repair and schema coercion."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from streamparse.arguments.schema import (ArgumentError, call_from_object, close_open_brackets, coerce_value,
                                         declared_types, loads_relaxed, missing_required, tool_schemas)
from streamparse.arguments.xml_values import coerce_xml_value, strip_layout


@pytest.mark.parametrize("text,expected,repaired", [
    ('{"a": 1}', {"a": 1}, False),
    ('{"a": "x\ny"}', {"a": "x\ny"}, False),
    ("{'a': 'it\\'s'}", {"a": "it's"}, True),
    ("{a: 1, b: [1, 2,],}", {"a": 1, "b": [1, 2]}, True),
    ('{"a": True, "b": False, "c": None}', {"a": True, "b": False, "c": None}, True),
    ('{"a": {"b": [1, 2', {"a": {"b": [1, 2]}}, True),
    ('{"a": "unterminated', {"a": "unterminated"}, True),
    ('{"a": 1,', {"a": 1}, True),
    ('{"a":', {}, True),  # a key whose value was never written goes: nothing is invented for it
    ('{"a": 1, "b" :', {"a": 1}, True),
    ("{a: 1, bb:", {"a": 1}, True),
    ('```json\n{"a": 1}\n```', {"a": 1}, True),
    ("{'quote': \"say \\\"hi\\\"\", 'n': +5, 'f': .5}", {"quote": 'say "hi"', "n": 5, "f": 0.5}, True),
    ("[]", [], False),
    ("{}", {}, False),
])
def test_loads_relaxed(text: str, expected: object, repaired: bool) -> None:
    assert loads_relaxed(text) == (expected, repaired)


@pytest.mark.parametrize("text", ["{a b c}", "not json at all", "{'a': 1} trailing words"])
def test_loads_relaxed_rejects_what_it_cannot_read(text: str) -> None:
    with pytest.raises(ArgumentError):
        loads_relaxed(text)


def test_close_open_brackets_respects_strings() -> None:
    assert close_open_brackets('{"a": "[{", "b": [') == '{"a": "[{", "b": []}'


def test_call_from_object_shapes() -> None:
    assert call_from_object({"name": "f", "arguments": {"a": 1}}) == ("f", {"a": 1})
    assert call_from_object({"name": "f", "parameters": {"a": 1}}) == ("f", {"a": 1})
    assert call_from_object({"name": "f", "input": {"a": 1}}) == ("f", {"a": 1})
    assert call_from_object({"name": "f", "arguments": '{"a": 1}'}) == ("f", {"a": 1})
    assert call_from_object({"name": "f"}) == ("f", {})
    assert call_from_object({"type": "function", "function": {"name": "f", "arguments": "{}"}}) == ("f", {})
    for bad in ({"arguments": {}}, {"name": ""}, {"name": "f", "arguments": [1]}, [1]):
        with pytest.raises(ArgumentError):
            call_from_object(bad)


def test_tool_schemas_accepts_openai_bare_and_anthropic_shapes() -> None:
    schemas = tool_schemas([
        {"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}},
        {"name": "b", "parameters": {"type": "object", "required": ["x"]}},
        {"name": "c", "input_schema": {"type": "object"}},
    ])
    assert set(schemas or {}) == {"a", "b", "c"}
    assert tool_schemas(None) is None
    with pytest.raises(ValueError):
        tool_schemas([{"type": "function"}])


def test_tool_schemas_reads_each_schema_as_given_or_as_none() -> None:
    from types import MappingProxyType

    given = {"type": "object", "properties": {"x": {"type": "integer"}}}
    schemas = tool_schemas([
        {"name": "kept", "parameters": given},  # the same object (typing tables are found again by identity)
        {"name": "null", "parameters": None, "input_schema": {"type": "object"}},  # null is there: no schema
        {"name": "empty", "parameters": {}},
        {"name": "anthropic", "input_schema": given},
        {"name": "proxy", "parameters": MappingProxyType(given)},  # another mapping: copied into a dict
        {"name": "text", "parameters": "not a schema"},
        MappingProxyType({"name": "mapping", "parameters": given}),
    ])
    assert schemas is not None and schemas["kept"] is given and schemas["anthropic"] is given
    assert schemas["null"] == schemas["empty"] == schemas["text"] == {}
    assert type(schemas["proxy"]) is dict and schemas["proxy"] == given and schemas["mapping"] is given
    for bad in ({"name": 3}, {"function": "x"}, "a string", {"type": "function", "function": {"name": None}}):
        with pytest.raises(ValueError):
            tool_schemas([bad])  # type: ignore[list-item]


@pytest.mark.parametrize("raw,schema,expected", [
    ("5", {"type": "integer"}, 5),
    ("5.0", {"type": "integer"}, 5),
    ("5.5", {"type": "integer"}, "5.5"),
    ("2.5", {"type": "number"}, 2.5),
    ("TRUE", {"type": "boolean"}, True),
    ("null", {"type": "null"}, None),
    ("007", {"type": "string"}, "007"),
    ("42", {"type": ["integer", "null"]}, 42),
    ("42", {"anyOf": [{"type": "string"}, {"type": "integer"}]}, "42"),
    ('{"a": "1"}', {"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": 1}),
    ("[1, 2]", {"type": "array", "items": {"type": "string"}}, ["1", "2"]),
    ("text", None, "text"),
    ("maybe", {"type": "boolean"}, "maybe"),
])
def test_coerce_xml_value(raw: str, schema: dict | None, expected: object) -> None:
    assert coerce_xml_value(raw, schema) == expected


def test_coerce_value_keeps_allowed_types_and_recurses() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "number"}, "s": {"type": "string"}, "l": {"type": "array", "items": {"type": "integer"}}}}
    assert coerce_value({"n": 3, "s": 12, "l": ["1", 2], "extra": "x"}, schema) == {"n": 3, "s": "12", "l": [1, 2], "extra": "x"}


def test_missing_required() -> None:
    assert missing_required({"a": 1}, {"required": ["a", "b"]}) == ["b"]
    assert missing_required({}, None) == []


@pytest.mark.parametrize("broken, repaired", [
    ('[{"name": "s", "arguments": {"p": "x"}]', [{"name": "s", "arguments": {"p": "x"}}]),  # a brace left out
    ('[{"name": "s", "arguments": {"p": "x"}]]', [{"name": "s", "arguments": {"p": "x"}}]),  # `}]]` for `}}]`
    ('{"a": [1, 2}', {"a": [1, 2]}),
    ('{"a": 1}}', {"a": 1}),  # a closer with nothing to close
    ('{"a": "x\\"}]"', {"a": 'x"}]'}),  # brackets inside a string are text
])
def test_mismatched_closers_are_repaired(broken: str, repaired: object) -> None:
    """Seen from a 0.5B model in tools_array, xlam and hunyuan answers (tests/proxy/test_real_model_tools.py)."""
    assert loads_relaxed(broken) == (repaired, True)


def test_bracket_repair_is_linear_on_deep_mismatches() -> None:
    text = "[" * 50_000 + "}" * 50_000  # each closer skips nothing; every one is dropped (a space), every [ closed
    assert close_open_brackets(text) == "[" * 50_000 + " " * 50_000 + "]" * 50_000


def test_a_dropped_closer_never_joins_the_words_around_it() -> None:
    assert close_open_brackets('{"a": tru]e}') == '{"a": tru e}'
    with pytest.raises(ArgumentError):
        loads_relaxed('{"a": tru]e}')


_NUMERIC_SCHEMAS = [{"type": "integer"}, {"type": "number"}, {"type": ["integer", "null"]}, {"type": ["boolean", "integer"]},
                    {"type": ["number", "array"]}, {"anyOf": [{"type": "integer"}, {"type": "object"}]}]


@settings(max_examples=300)
@given(st.one_of(st.from_regex(r"\s*-?[0-9]{1,25}\s*", fullmatch=True), st.text("0123456789-+. e\n٣²", max_size=20)),
       st.sampled_from(_NUMERIC_SCHEMAS), st.booleans())
def test_an_xml_value_typed_as_a_number_is_what_coerce_value_makes_of_it(raw: str, schema: dict[str, object], layout: bool) -> None:
    """coerce_xml_value takes a plain decimal integer straight to int; it must agree with the general path
    in value and type (leading zeros, '-0', 25 digits, non-ASCII digits, spaces with and without layout)."""
    value = strip_layout(raw) if layout else raw
    if "null" in declared_types(schema) and value.strip().lower() in ("null", "none"):
        return
    typed, general = coerce_xml_value(raw, schema, layout, declared_types(schema)), coerce_value(value, schema)
    assert typed == general and type(typed) is type(general)
