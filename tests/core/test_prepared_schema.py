"""A tool's schema read once per parser (calls._Tool) gives what the per-value schema functions give."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from streamparse import arguments as args_mod
from streamparse.core.calls import CallFactory, _Tool, _read_tool
from streamparse.dialects import DIALECTS

_TYPE_NAMES = st.sampled_from(["string", "String", "str", "text", "integer", "int", "number", "float", "boolean",
                               "bool", "null", "object", "array", "any", "tuple"])
_PROP = st.one_of(
    st.builds(lambda t: {"type": t}, _TYPE_NAMES),
    st.builds(lambda ts: {"type": ts}, st.lists(_TYPE_NAMES, max_size=3)),
    st.builds(lambda a, b: {"anyOf": [{"type": a}, {"type": b}]}, _TYPE_NAMES, _TYPE_NAMES),
    st.builds(lambda e: {"enum": e}, st.lists(st.one_of(st.text(max_size=3), st.integers(), st.none()), max_size=3)),
    st.builds(lambda t: {"type": t, "items": {"type": "integer"}}, st.sampled_from(["array", "list"])),
    st.just({}), st.just(None), st.just("string"),
)
_KEYS = st.sampled_from(["a", "b", "c", "d"])
_SCHEMA = st.builds(
    lambda props, required, top: {**({"type": top} if top is not None else {}), "properties": props,
                                  "required": required},
    st.dictionaries(_KEYS, _PROP, max_size=4), st.lists(st.one_of(_KEYS, st.integers()), max_size=3),
    st.sampled_from([None, "object", "dict", "string", ["object", "null"]]))
_TEXT = st.sampled_from(["3", " 2.5 ", "\nTrue\n", "null", "None", "x", "[1, 2]", '{"k": 1}', "", "\n  two\n  lines\n"])
_VALUE = st.one_of(_TEXT, st.integers(), st.booleans(), st.none(), st.lists(st.integers(), max_size=2))


@settings(max_examples=300, deadline=None)
@given(_SCHEMA, st.dictionaries(st.one_of(_KEYS, st.sampled_from(["e"])), _VALUE, max_size=5))
def test_prepared_checks_match_the_schema_functions(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    tool = _Tool(schema)
    assert tool.mistyped(arguments) == args_mod.mistyped(arguments, schema)
    assert tool.required == [k for k in schema["required"] if isinstance(k, str)]
    props = schema["properties"]
    for key, value in arguments.items():
        if isinstance(value, str):
            for layout in (True, False):
                assert (args_mod.coerce_xml_value(value, props.get(key), layout, tool.types.get(key, []))
                        == args_mod.coerce_xml_value(value, props.get(key), layout))


@settings(max_examples=200, deadline=None)
@given(_SCHEMA, st.dictionaries(_KEYS, _VALUE, max_size=4))
def test_notes_are_the_schema_functions_in_order(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    factory = CallFactory({"f": schema}, 10, lambda: "id")
    d = DIALECTS["qwen3_coder"]
    notes = factory.notes(d, "f", arguments, enums=False)
    expected = [n for n in args_mod.mistyped(arguments, schema)]
    missing = args_mod.missing_required(arguments, schema)
    assert [(n.code, n.details.get("parameter")) for n in notes] == (
        [(code, path) for code, path, _ in expected] + ([("missing_required", None)] if missing else []))
    if missing:
        assert notes[-1].details["missing"] == missing


def test_xml_call_typed_once_per_tool_and_again_after_the_schema_changes() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
                              "required": ["n", "s", "t"]}
    factory = CallFactory({"f": schema}, 10, lambda: "id")
    d = DIALECTS["qwen3_coder"]
    item = "<function=f>\n<parameter=n>\n7\n</parameter>\n<parameter=s>\n8\n</parameter>\n</function>"
    events, count, failure = factory.from_item(d, item, None)
    assert failure is None and count == 1
    assert events[-1].arguments == '{"n": 7, "s": "8"}'
    assert [e.code for e in events[:-1]] == ["missing_required"] and events[0].details["missing"] == ["t"]
    factory.schemas = {"f": {"type": "object", "properties": {"n": {"type": "string"}}}}  # a new schema object
    events, _, _ = factory.from_item(d, item, None)
    assert [type(e).__name__ for e in events] == ["ToolCall"] and events[0].arguments == '{"n": "7", "s": "8"}'


def test_non_ascii_arguments_are_written_as_they_are() -> None:
    factory = CallFactory(None, 10, lambda: "id")
    item = "<function=f>\n<parameter=city>\nSão Paulo ✓\n</parameter>\n</function>"
    events, _, _ = factory.from_item(DIALECTS["qwen3_coder"], item, None)
    assert events[-1].arguments == '{"city": "São Paulo ✓"}'


class _Text(str):
    """A str subclass, as a decoder could hand over."""


@settings(max_examples=300, deadline=None)
@given(_SCHEMA, st.dictionaries(st.one_of(_KEYS, st.sampled_from(["e"])),
                                st.one_of(_TEXT, _TEXT.map(_Text), st.integers()), max_size=5),
       st.sampled_from(["qwen3_coder", "glm45"]))
def test_xml_values_are_typed_as_coerce_xml_value_types_them(schema: dict[str, Any], raw: dict[str, Any],
                                                             dialect: str) -> None:
    d = DIALECTS[dialect]
    props = schema["properties"]
    expected = {k: args_mod.coerce_xml_value(v, props.get(k), d.value_layout) if isinstance(v, str) else v
                for k, v in raw.items()}
    for schemas in ({"f": schema}, None):
        if schemas is None:
            expected = {k: args_mod.coerce_xml_value(v, None, d.value_layout) if isinstance(v, str) else v
                        for k, v in raw.items()}
        factory = CallFactory(schemas, 10, lambda: "id")
        if schemas is not None and _read_tool(schema).has_enum:
            continue  # enum spelling is review_values' business, checked elsewhere
        _, text, _ = factory._typed(d, "f", raw)
        assert json.loads(text) == expected and text == json.dumps(expected, ensure_ascii=False)


_JSON_VALUE = st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.booleans(), st.none(),
                        st.text(max_size=3), st.lists(st.integers(), max_size=2),
                        st.dictionaries(st.sampled_from(["k"]), st.integers(), max_size=1))


@settings(max_examples=400, deadline=None)
@given(_SCHEMA, st.dictionaries(st.one_of(_KEYS, st.sampled_from(["e"])), st.one_of(_JSON_VALUE, _TEXT), max_size=5),
       st.sampled_from(["hermes", "qwen3_coder"]))
def test_a_clean_call_is_typed_and_checked_as_the_full_review_types_and_checks_it(
        schema: dict[str, Any], arguments: dict[str, Any], dialect: str) -> None:
    """``_Tool.clean`` (one pass: every named value of a type typing keeps and checking passes, nothing required
    missing) lets ``_typed`` skip the review (JSON values) or the checks after typing (text values); where it
    says yes, the full review gives the same text and no note."""
    d = DIALECTS[dialect]
    quick = CallFactory({"f": schema}, 10, lambda: "id")
    full = CallFactory({"f": schema}, 10, lambda: "id")
    reviewing = _Tool(schema)
    reviewing.exact = None  # (clean() says no: the full review)
    full._tools["f"] = (schema, reviewing)
    expected = full._typed(d, "f", dict(arguments))
    if _Tool(schema).clean(arguments) and not d.text_values:
        assert expected[2] == [] and quick._typed(d, "f", dict(arguments)) == expected
    else:
        got = quick._typed(d, "f", dict(arguments))
        assert (got[0], got[1], [(n.code, n.message) for n in got[2]]) == (
            expected[0], expected[1], [(n.code, n.message) for n in expected[2]])


def test_clean_is_said_of_the_usual_call_and_not_of_one_with_something_to_say() -> None:
    tool = _Tool({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                  "required": ["city"]})
    assert tool.clean({"city": "Paris", "days": 3}) and tool.clean({"city": "Paris", "extra": [1]})
    assert not tool.clean({"days": 3})  # required missing
    assert not tool.clean({"city": "Paris", "days": "3"})  # typed to 3
    assert not tool.clean({"city": "Paris", "days": 2.5})  # mistyped
    assert _Tool({"type": "object", "properties": {"u": {"enum": ["a"]}}}).exact is None  # an enum is reviewed
