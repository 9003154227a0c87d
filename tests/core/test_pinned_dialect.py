"""A dialect the operator pins (exactly one named) is read as its engine parser reads it (issue 18 §1).

Auto-detection reads prose-like forms (bare JSON at a line start, ``[f(x=1)]``, ``[{"name": …}]``,
``{"tool_calls": …}``) only for declared tools. Pinned, those forms are calls with no tools declared;
with tools declared, a call to an undeclared name still stays text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import streamparse as sp
from helpers import TOOLS, assert_chunking_invariant

# (pinned dialect or an engine's name for it, model output, calls it holds)
BARE_FORMS: list[tuple[str, str, list[tuple[str, dict[str, Any]]]]] = [
    ("llama3_json", 'Sure.\n{"name": "lookup", "parameters": {"q": "x"}}', [("lookup", {"q": "x"})]),
    ("llama3_json", '{"name": "a", "parameters": {}}; {"name": "b", "parameters": {"n": 2}}', [("a", {}), ("b", {"n": 2})]),
    ("llama4_json", '{"name": "lookup", "parameters": {"q": "x"}}', [("lookup", {"q": "x"})]),
    ("pythonic", '[lookup(q="x"), count(n=-2, flags=[True, None])]', [("lookup", {"q": "x"}),
                                                                      ("count", {"n": -2, "flags": [True, None]})]),
    ("llama4_pythonic", "[ping()]", [("ping", {})]),
    ("xlam", '[{"name": "lookup", "arguments": {"q": "x"}}]', [("lookup", {"q": "x"})]),
    ("tool_calls_json", '{"tool_calls": [{"name": "lookup", "arguments": {"q": "x"}}]}', [("lookup", {"q": "x"})]),
]


def _pinned(dialect: str, text: str, tools: Any = None) -> tuple[str, list[tuple[str, Any]]]:
    return assert_chunking_invariant(text, tools, dialects=[dialect])


@pytest.mark.parametrize(("dialect", "text", "expected"), BARE_FORMS, ids=lambda v: v if isinstance(v, str) and len(v) < 20 else None)
def test_a_pinned_dialect_reads_its_bare_forms_without_tools(dialect: str, text: str, expected: list[Any]) -> None:
    _, found = _pinned(dialect, text)
    assert found == expected


@pytest.mark.parametrize(("dialect", "text", "expected"), BARE_FORMS, ids=lambda v: v if isinstance(v, str) and len(v) < 20 else None)
def test_auto_detection_keeps_its_gates_without_tools(dialect: str, text: str, expected: list[Any]) -> None:
    content, found = assert_chunking_invariant(text, None)
    assert found == [] and content == text


def test_two_dialects_named_are_not_pinned() -> None:
    text = '{"name": "lookup", "parameters": {"q": "x"}}'
    assert assert_chunking_invariant(text, None, dialects=["llama3_json", "hermes"]) == (text, [])


def test_pinned_with_tools_keeps_undeclared_names_as_text() -> None:
    text = '[get_weather(city="Paris"), launch(target="moon")]'
    content, found = _pinned("pythonic", text, TOOLS)
    assert "launch" not in [name for name, _ in found] and 'launch(target="moon")' in content
    content, found = _pinned("llama3_json", '{"name": "launch", "parameters": {}}', TOOLS)
    assert found == [] and content == '{"name": "launch", "parameters": {}}'
    _, found = _pinned("llama3_json", '{"name": "get_weather", "parameters": {"city": "Oslo"}}', TOOLS)
    assert found == [("get_weather", {"city": "Oslo"})]


def test_pinned_prose_that_only_looks_like_a_call_stays_text() -> None:
    for dialect, text in [("pythonic", "[see the docs](http://x)"), ("pythonic", "[1, 2, 3]"),
                          ("llama3_json", '{"title": "not a call"}'), ("xlam", '[{"id": 1}]')]:
        content, found = _pinned(dialect, text)
        assert found == [] and content == text, dialect


def test_pinned_text_around_the_call_is_kept() -> None:
    text = 'Let me look.\n{"name": "lookup", "parameters": {"q": "ü"}}\nDone.'
    content, found = _pinned("llama3_json", text)
    assert found == [("lookup", {"q": "ü"})]
    assert content == "Let me look.\n\nDone."


@pytest.mark.parametrize("engine_name", ["llama3_json", "llama4_json", "llama4_pythonic", "pythonic", "hermes",
                                         "qwen3_xml", "qwen3_coder", "glm45", "kimi_k2", "deepseek_v3", "mistral"])
def test_engine_parser_names_are_accepted(engine_name: str) -> None:
    assert len(sp.dialects.resolve([engine_name])) == 1


def test_pinned_stream_arguments_agree_with_whole_calls() -> None:
    text = '[lookup(q="x")]'
    parser = sp.StreamParser(dialects=["pythonic"], stream_arguments=True)
    events = [e for ch in text for e in parser.feed(ch)] + parser.close()
    pieces = "".join(e.arguments_fragment for e in events if isinstance(e, sp.ToolCallDelta))
    assert json.loads(pieces) == {"q": "x"}


@pytest.mark.parametrize(("dialect", "text", "expected"), [
    ("pythonic", 'Here is the call: [lookup(q="x")]', [("lookup", {"q": "x"})]),
    ("llama3_json", 'Result: {"name": "lookup", "parameters": {"q": "x"}} ok', [("lookup", {"q": "x"})]),
])
def test_a_pinned_dialect_reads_its_forms_mid_line_and_auto_detection_does_not(dialect: str, text: str,
                                                                               expected: list[Any]) -> None:
    content, found = _pinned(dialect, text)
    assert found == expected and content == text.split(("[" if dialect == "pythonic" else "{"), 1)[0] + (" ok" if text.endswith(" ok") else "")
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    assert assert_chunking_invariant(text, tools) == (text, [])  # auto: mid-line prose stays prose
