"""Every dialect: one call, several calls, text around, unicode, escaped quotes, nested values."""

from __future__ import annotations

import json
import pytest

from helpers import assert_chunking_invariant, calls, content
from samples import ARGUMENTS, RENDER, RENDER_SEVERAL, qwen3


@pytest.mark.parametrize("style", sorted(RENDER))
@pytest.mark.parametrize("case", sorted(ARGUMENTS))
def test_single_call(style: str, case: str) -> None:
    name, args = ARGUMENTS[case]
    text = RENDER[style](name, args)
    text_out, found = assert_chunking_invariant(text)
    assert found == [(name, args)]
    assert text_out.strip() == ""


@pytest.mark.parametrize("style", sorted(RENDER))
def test_several_calls_with_text_around(style: str) -> None:
    render = RENDER[style]
    first = ("get_weather", {"city": "Paris"})
    second = ("configure", {"count": 2, "options": {"deep": {"deeper": [1, 2]}}})
    text = "Before.\n" + render(*first) + "\nBetween.\n" + render(*second) + "\nAfter."
    text_out, found = assert_chunking_invariant(text)
    assert found == [first, second]
    assert text_out == "Before.\n\nBetween.\n\nAfter."


@pytest.mark.parametrize("style", sorted(RENDER_SEVERAL))
def test_several_calls_in_one_block(style: str) -> None:
    expected = [ARGUMENTS[c] for c in ("unicode", "nested", "escaped_quotes", "typed")]
    text = "Before.\n" + RENDER_SEVERAL[style](expected) + "\nAfter."
    text_out, found = assert_chunking_invariant(text)
    assert found == expected
    assert text_out == "Before.\n\nAfter."


def test_tools_array_several_elements_are_emitted_one_by_one() -> None:
    import streamparse as sp
    from helpers import TOOLS

    text = '<tools>[{"name": "get_weather", "arguments": {"city": "A"}}, {"name": "get_weather", "arguments": {"city": "B"}}]</tools>'
    parser = sp.StreamParser(TOOLS)
    first_end = text.index("}}") + 2
    events = parser.feed(text[:first_end])
    assert [e.name for e in events if e.type == "tool_call"] == ["get_weather"]
    events = parser.feed(text[first_end:]) + parser.close()
    assert [json.loads(e.arguments)["city"] for e in events if e.type == "tool_call"] == ["B"]
    assert "".join(e.text for e in events if e.type == "text") == ""


def test_mistral_array_of_two() -> None:
    text = '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "A"}}, {"name": "search_recipes", "arguments": {"query": "q"}}] ok'
    assert calls(text) == [("get_weather", {"city": "A"}), ("search_recipes", {"query": "q"})]
    assert content(text) == " ok"


def test_bare_tool_calls_with_dotted_names() -> None:
    text = 'Calling.\n{"tool_calls": [{"name": "server.method", "arguments": {}}, {"name": "get_weather", "arguments": {"city": "X"}}]}'
    assert calls(text) == [("server.method", {}), ("get_weather", {"city": "X"})]
    assert content(text) == "Calling.\n"


def test_bare_tool_calls_with_an_unknown_name_stays_text() -> None:
    text = '{"tool_calls": [{"name": "server.method", "arguments": {}}, {"name": "nope", "arguments": {}}]}'
    assert calls(text) == []
    assert content(text) == text


@pytest.mark.parametrize("label", ["json", "python", "", "xml", "tool_code"])
def test_bare_call_in_any_fence(label: str) -> None:
    text = f"Here:\n```{label}\n" + '{"name": "get_weather", "parameters": {"city": "Lima"}}\n```\nDone.'
    assert calls(text) == [("get_weather", {"city": "Lima"})]
    assert content(text) == "Here:\n\nDone."


def test_fence_around_ordinary_code_stays_text() -> None:
    text = "Code:\n```json\n{\"a\": 1, \"name\": \"get_weather\"}\n```\n```python\nprint('<tool_call>')\n```\n"
    assert assert_chunking_invariant(text) == (text, [])


def test_fence_around_a_non_call_block_stays_text() -> None:
    text = '```json\n{"name": "not_a_tool", "arguments": {}}\n```\n'
    assert assert_chunking_invariant(text) == (text, [])


def test_qwen3_lenient_value_endings_and_xml_characters() -> None:
    text = (
        "<tool_call>\n<function=write_file>\n<parameter=path>\na.html\n"
        "<parameter=content>\n<p>a < b && c > d</p>\n\n</function>\n</tool_call>"
    )
    assert calls(text) == [("write_file", {"path": "a.html", "content": "<p>a < b && c > d</p>\n"})]


def test_qwen3_value_keeps_inner_newlines_and_only_one_layout_newline_is_removed() -> None:
    text = "<function=write_file><parameter=path>p</parameter><parameter=content>\n\nline1\nline2\n\n</parameter></function>"
    assert calls(text) == [("write_file", {"path": "p", "content": "\nline1\nline2\n"})]


def test_qwen3_values_typed_by_schema() -> None:
    text = qwen3("configure", {"count": "17", "ratio": "2.5", "enabled": "True", "nothing": "null",
                               "options": '{"k": [1, 2]}', "items": "[1, 'a']", "code": "00123"})
    assert calls(text) == [("configure", {"count": 17, "ratio": 2.5, "enabled": True, "nothing": None,
                                          "options": {"k": [1, 2]}, "items": [1, "a"], "code": "00123"})]


def test_qwen3_without_schema_values_are_strings() -> None:
    text = qwen3("anything", {"n": "5", "flag": "true"})
    assert calls(text, tools=None) == [("anything", {"n": "5", "flag": "true"})]


def test_qwen3_several_functions_in_one_tool_call() -> None:
    text = "<tool_call>\n<function=get_weather>\n<parameter=city>A</parameter>\n</function>\n<function=get_weather>\n<parameter=city>B</parameter>\n</function>\n</tool_call>after"
    text_out, found = assert_chunking_invariant(text)
    assert found == [("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})]
    assert text_out == "after"


def test_qwen3_closed_by_tool_call_without_function_close() -> None:
    text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nA\n</parameter>\n</tool_call>x"
    assert assert_chunking_invariant(text) == ("x", [("get_weather", {"city": "A"})])
