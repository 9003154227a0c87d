"""Never a wrong call, never silently (issue 18, section 5).

Promises under test, in both modes (whole calls, and ``stream_arguments=True``):
- a call's joined argument fragments always form one JSON object, the same as its final arguments;
- no exception escapes, however deep the model nests its arguments;
- a call never carries a value the model did not write (no ``null`` for a value never written);
- a call whose written arguments cannot be read is text plus a Diagnostic, never an empty call;
- text that is not a call comes back once, in order, as written.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import streamparse as sp
from helpers import TOOLS
from samples import RENDER
from streamparse.core.stream_json import MAX_DEPTH

MODES = [False, True]


def events_of(text: str, stream: bool, size: int = 0, tools: Any = TOOLS) -> list[sp.Event]:
    parser = sp.StreamParser(tools, stream_arguments=stream)
    step = size or max(len(text), 1)
    out: list[sp.Event] = []
    for i in range(0, len(text), step):
        out += parser.feed(text[i : i + step])
    return out + parser.close()


def joined_fragments(events: list[sp.Event]) -> dict[int, str]:
    joined: dict[int, str] = {}
    for ev in events:
        if isinstance(ev, sp.ToolCallDelta):
            joined[ev.index] = joined.get(ev.index, "") + ev.arguments_fragment
    return joined


def assert_fragments_form_the_arguments(events: list[sp.Event]) -> None:
    joined = joined_fragments(events)
    for call in (ev for ev in events if isinstance(ev, sp.ToolCall)):
        assert isinstance(json.loads(call.arguments), dict), call
        if call.index in joined:
            assert joined[call.index] == call.arguments


# --------------------------------------------------------------------------- 1. fragments always form an object

UNREAD_ARGUMENTS = [
    '<tool_call>{"name": "get_weather"</tool_call>',
    '<tool_call>{"name": "get_weather", "rguments": {"city": "Paris"}}</tool_call>',
    '<tool_call>{"name":"search_recipes"',
    '<tool_call>{"name":"search_recipes", "arguments": "',
    '<tool_call>{"name":"search_recipes", "arguments": ',
    '{"name": "get_weather", "rguments": {"city": "Paris"}}',
]


@pytest.mark.parametrize("text", UNREAD_ARGUMENTS)
@pytest.mark.parametrize("size", [0, 1, 5])
def test_streamed_fragments_always_join_into_a_json_object(text: str, size: int) -> None:
    events = events_of(text, True, size)
    assert_fragments_form_the_arguments(events)
    for call in (ev for ev in events if isinstance(ev, sp.ToolCall)):
        assert call.arguments != ""


@pytest.mark.parametrize("text", UNREAD_ARGUMENTS)
def test_streaming_a_call_with_no_readable_arguments_gives_what_whole_mode_gives(text: str) -> None:
    whole = sp.ParseResult(events_of(text, False))
    streamed = sp.ParseResult(events_of(text, True, 3))
    assert streamed.content == whole.content
    assert [(c.name, json.loads(c.arguments)) for c in streamed.tool_calls] == \
        [(c.name, json.loads(c.arguments)) for c in whole.tool_calls]


def test_a_cut_off_call_object_with_only_a_name_stays_text_in_stream_mode() -> None:
    text = '<tool_call>{"name":"search_recipes"'
    result = sp.ParseResult(events_of(text, True, 2))
    assert result.tool_calls == [] and result.content == text
    assert result.diagnostics


def test_stream_mode_starts_a_json_call_only_once_its_arguments_object_opens() -> None:
    parser = sp.StreamParser(TOOLS, stream_arguments=True)
    assert not [e for e in parser.feed('<tool_call>{"name": "get_weather", ') if isinstance(e, sp.ToolCallStart)]
    started = parser.feed('"arguments": {"city": "Pa')
    assert [e.name for e in started if isinstance(e, sp.ToolCallStart)] == ["get_weather"]
    rest = parser.feed('ris"}}</tool_call>') + parser.close()
    assert_fragments_form_the_arguments(started + rest)


# --------------------------------------------------------------------------- 2. deep nesting never raises

JSON_RENDERERS = sorted(name for name in RENDER if not name.startswith(("pythonic", "qwen3", "glm", "seed", "minimax")))


def _deep(depth: int, kind: str) -> str:
    return ('{"a":' * depth + "1" + "}" * depth) if kind == "object" else "[" * depth + "]" * depth


@pytest.mark.parametrize("dialect", JSON_RENDERERS)
@pytest.mark.parametrize("kind", ["object", "array"])
@pytest.mark.parametrize("stream", MODES)
def test_arguments_nested_a_thousand_deep_never_raise(dialect: str, kind: str, stream: bool) -> None:
    text = RENDER[dialect]("configure", {"options": "@DEEP@", "count": 2})
    if '"@DEEP@"' not in text:
        pytest.skip("the arguments are written inside a string")
    text = text.replace('"@DEEP@"', _deep(1000, kind))
    events = events_of(text, stream, 97)
    assert_fragments_form_the_arguments(events)
    for call in (ev for ev in events if isinstance(ev, sp.ToolCall)):
        assert "@DEEP@" not in call.arguments


def test_a_streamed_value_nested_too_deep_is_left_out_and_reported() -> None:
    text = '<tool_call>{"name": "configure", "arguments": {"count": 2, "options": ' + _deep(1000, "object") + \
        ', "code": "x"}}</tool_call>'
    events = events_of(text, True, 64)
    [call] = [ev for ev in events if isinstance(ev, sp.ToolCall)]
    assert call.arguments.count("{") <= MAX_DEPTH  # what is deeper was left out: any JSON reader can read the rest
    arguments = json.loads(call.arguments)
    assert (arguments["count"], arguments["code"]) == (2, "x")
    assert ":1}" not in call.arguments.replace(" ", "")  # the innermost value, a thousand deep
    assert "too_deep" in [ev.code for ev in events if isinstance(ev, sp.Diagnostic)]
    assert_fragments_form_the_arguments(events)


def test_a_value_nested_just_under_the_streaming_limit_is_kept_whole() -> None:
    inner = _deep(MAX_DEPTH - 3, "array")
    text = '<tool_call>{"name": "configure", "arguments": {"items": ' + inner + "}}</tool_call>"
    [call] = [ev for ev in events_of(text, True, 50) if isinstance(ev, sp.ToolCall)]
    assert call.arguments.replace(" ", "") == '{"items":' + inner + "}"


# --------------------------------------------------------------------------- 3. no invented values once started

def test_glm_value_missing_its_closer_is_left_out_not_null() -> None:
    text = "<tool_call>get_weather\n<arg_key>days</arg_key>\n<arg_value>3/arg_value>\n</tool_call>"
    whole = sp.ParseResult(events_of(text, False))
    assert whole.tool_calls == [] and whole.content == text  # whole-call mode rejects it
    events = events_of(text, True, 4)
    calls = [ev for ev in events if isinstance(ev, sp.ToolCall)]
    for call in calls:  # once started it may end as a call, with what was written only
        assert "days" not in json.loads(call.arguments)
        assert "null" not in call.arguments
    assert "incomplete" in [ev.code for ev in events if isinstance(ev, sp.Diagnostic)]
    assert_fragments_form_the_arguments(events)


@pytest.mark.parametrize("body, expected", [
    ('{"city": }', {}),
    ('{"city": "Paris", "days": }', {"city": "Paris"}),
    ('{"city"}', {}),
    ('{"days", "city": "Rome"}', {"city": "Rome"}),
    ('{"city": "Oslo", "days"', {"city": "Oslo"}),
])
def test_a_streamed_member_with_no_written_value_is_left_out(body: str, expected: dict[str, Any]) -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": ' + body + "</tool_call>"
    for size in (1, 3, 100):
        events = events_of(text, True, size)
        calls = [ev for ev in events if isinstance(ev, sp.ToolCall)]
        assert [json.loads(c.arguments) for c in calls] == [expected]
        assert_fragments_form_the_arguments(events)


def test_a_cut_off_streamed_call_keeps_only_what_was_written() -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Par'
    events = events_of(text, True, 2)
    [call] = [ev for ev in events if isinstance(ev, sp.ToolCall)]
    assert json.loads(call.arguments) == {"city": "Par"}
    assert "incomplete" in [ev.code for ev in events if isinstance(ev, sp.Diagnostic)]


# --------------------------------------------------------------------------- 4. written but unread arguments

@pytest.mark.parametrize("key", ["rguments", "argumnets", "arguments ", "Arguments", "params", "city"])
@pytest.mark.parametrize("stream", MODES)
def test_arguments_under_an_unread_key_are_text_with_a_diagnostic(key: str, stream: bool) -> None:
    text = '<tool_call>{"name": "get_weather", ' + json.dumps(key) + ': {"city": "Paris"}}</tool_call>'
    result = sp.ParseResult(events_of(text, stream, 7))
    assert result.tool_calls == []
    assert result.content == text
    assert any(d.code == "rejected" for d in result.diagnostics)


def test_a_call_with_only_a_name_and_metadata_still_reads_as_a_call_without_arguments() -> None:
    result = sp.parse('<tool_call>{"name": "get_weather", "type": "function", "id": "c1"}</tool_call>', TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == [("get_weather", {})]


# --------------------------------------------------------------------------- 6. text once, in order, as written

CALL_P = '{"name": "get_weather", "arguments": {"city": "P"}}'


@pytest.mark.parametrize("text, expected", [
    ("<tool_call>[" + CALL_P + "x{y]</tool_call>", "x{y]"),
    ("<tool_call>[" + CALL_P + ", {y}, z]</tool_call>", "{y}, z]"),
    ("<tool_call>[" + CALL_P + ", x{y}, z {a} " + CALL_P + ", w]</tool_call>", ", x{y}, z {a} , w]"),
    ("<tool_call>[x{y}, z " + CALL_P + "]</tool_call>", "[x{y}, z ]"),
])
@pytest.mark.parametrize("stream", MODES)
def test_text_in_a_call_block_comes_back_in_the_order_written(text: str, expected: str, stream: bool) -> None:
    for size in (1, 4, len(text)):
        result = sp.ParseResult(events_of(text, stream, size))
        assert result.content == expected
        assert [c.name for c in result.tool_calls] == ["get_weather"] * text.count(CALL_P)


def test_an_unknown_tool_in_an_array_block_keeps_the_whole_block_as_written() -> None:
    text = '<tool_call>[{"name":"e","arguments":{}}x{y]</tool_call>'
    for stream in MODES:
        result = sp.ParseResult(events_of(text, stream, 3))
        assert result.content == text and result.tool_calls == []


# --------------------------------------------------------------------------- found by the fuzz (tests/fuzzing.py)

def test_a_repaired_block_never_gives_null_for_a_value_cut_off_after_its_key() -> None:
    text = '<tool_calls>[{"name": "search_recipes", "arguments": {"query": ]]]]</tool_calls>'
    for stream in MODES:
        result = sp.ParseResult(events_of(text, stream, 5))
        for call in result.tool_calls:
            assert "null" not in call.arguments


def test_a_call_block_released_by_the_size_limit_before_its_call_started_leaves_nothing_behind() -> None:
    text = ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "São Paulo", "days": 3, "metric": true}}\n'
            "</tool_call><tool_call>")
    deltas = ['<tool_call>\n{"name": "get_weather", "arguments": {"city": "São Paulo", "days": 3', "",
              ', "metric": true}}', "\n</tool_call><tool_", "call>"]
    parser = sp.StreamParser(TOOLS, stream_arguments=True, max_block_chars=51)
    events = [ev for d in deltas for ev in parser.feed(d)] + parser.close()
    assert sp.ParseResult(events).content == sp.parse(text, TOOLS, stream_arguments=True, max_block_chars=51).content


def test_arguments_written_as_text_and_given_to_the_one_string_parameter_are_reported() -> None:
    text = '<tool_call>{"name": "search_recipes", "arguments": "pasta with {tomato"}</tool_call>'
    for stream in MODES:
        result = sp.ParseResult(events_of(text, stream, 6))
        assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == \
            [("search_recipes", {"query": "pasta with {tomato"})]
        assert [d.details.get("raw_arguments") for d in result.diagnostics if d.code == "repaired"] == \
            ["pasta with {tomato"]


# --------------------------------------------------------------------------- 5. Qwen3 / Seed-OSS malformed parameter heads

QWEN3_MISSING_BRACKET = "<tool_call>\n<function=get_weather>\n<parameter=city\nParis\n</parameter>\n</function>\n</tool_call>"
QWEN3_BARE_HEAD = ("<tool_call>\n<function=get_weather>\n<parameter=city>\nChicago\n</parameter>\n"
                   "<parameter>unit=celsius</parameter>\n</function>\n</tool_call>")


def test_streamed_fragments_stop_at_a_malformed_parameter_head() -> None:
    parser = sp.StreamParser(TOOLS, stream_arguments=True)
    cut = QWEN3_BARE_HEAD.index("</function>")
    events = [ev for piece in (QWEN3_BARE_HEAD[:cut - 20], QWEN3_BARE_HEAD[cut - 20 : cut]) for ev in parser.feed(piece)]
    sent = "".join(ev.arguments_fragment for ev in events if isinstance(ev, sp.ToolCallDelta))
    assert sent.startswith('{"city": "Chicago') and "celsius" not in sent and "<parameter" not in sent


def test_streamed_fragments_stop_at_a_parameter_key_holding_a_line_break() -> None:
    parser = sp.StreamParser(TOOLS, stream_arguments=True)
    cut = QWEN3_MISSING_BRACKET.index("</function>")
    events = parser.feed(QWEN3_MISSING_BRACKET[:cut])
    sent = "".join(ev.arguments_fragment for ev in events if isinstance(ev, sp.ToolCallDelta))
    assert "Paris" not in sent and "\\n" not in sent


@pytest.mark.parametrize("text", [QWEN3_MISSING_BRACKET, QWEN3_BARE_HEAD,
                                  QWEN3_BARE_HEAD.replace("<tool_call>", "<seed:tool_call>").replace("</tool_call>",
                                                                                                     "</seed:tool_call>")])
@pytest.mark.parametrize("stream", MODES)
def test_a_malformed_parameter_head_is_never_read_into_a_key_or_value(text: str, stream: bool) -> None:
    result = sp.ParseResult(events_of(text, stream, 5))
    for call in result.tool_calls:
        arguments = json.loads(call.arguments)
        assert all("\n" not in k and "<" not in k for k in arguments)
        assert all("<parameter" not in str(v) for v in arguments.values())
    assert result.diagnostics


def test_a_number_cut_off_by_the_end_of_the_stream_is_left_out_not_shortened() -> None:
    text = '<tool_call>{"name": "configure", "arguments": {"code": "x", "count": 12'
    for size in (1, 7, len(text)):
        [call] = [ev for ev in events_of(text, True, size) if isinstance(ev, sp.ToolCall)]
        assert json.loads(call.arguments) == {"code": "x"}


def test_a_number_ended_by_the_end_marker_is_kept() -> None:
    text = '<tool_call>{"name": "configure", "arguments": {"count": 12</tool_call>'
    [call] = [ev for ev in events_of(text, True, 4) if isinstance(ev, sp.ToolCall)]
    assert json.loads(call.arguments) == {"count": 12}


def test_a_parameter_head_longer_than_the_stream_limit_gives_the_same_call_for_any_chunking() -> None:
    text = "<tool_call>search_recipes\n<arg_key>query" + "]" * 600 + "</arg_key>\n<arg_value>x</arg_value>\n</tool_call>"
    whole = sp.ParseResult(events_of(text, True))
    for size in (50, 200, 333):
        streamed = sp.ParseResult(events_of(text, True, size))
        assert [(c.name, json.loads(c.arguments)) for c in streamed.tool_calls] == \
            [(c.name, json.loads(c.arguments)) for c in whole.tool_calls]
        assert streamed.content == whole.content


@pytest.mark.parametrize("text, expected", [
    ("<tool_call>\n<function=configure>\n<parameter=ratio>\n0.", {}),  # 0.5 cut after "0.": not 0.0
    ("<tool_call>\n<function=configure>\n<parameter=count>\n12\n</parameter>", {"count": 12}),  # its closer was read
    ("<tool_call>\n<function=configure>\n<parameter=code>\nabc", {"code": "abc"}),  # a string, as far as written
])
def test_an_xml_call_cut_off_keeps_only_complete_typed_values(text: str, expected: dict[str, Any]) -> None:
    for size in (1, 5, len(text)):
        events = events_of(text, True, size)
        assert [json.loads(ev.arguments) for ev in events if isinstance(ev, sp.ToolCall)] == [expected]
        assert_fragments_form_the_arguments(events)


def test_arguments_written_as_text_with_nowhere_to_go_keep_the_block_as_text() -> None:
    """``"arguments": "hello"`` for a tool with no one string parameter: a call with ``{}`` would drop what the
    model wrote, so the block stays text, in place, with a diagnostic saying why (streamed or whole, any chunking,
    arguments streamed or not)."""
    tools = [{"type": "function", "function": {"name": "do_thing", "parameters": {
        "type": "object", "properties": {"count": {"type": "integer"}}}}}]
    text = 'Sure. <tool_call>{"name": "do_thing", "arguments": "hello"}</tool_call> Done.'
    for stream_arguments in (False, True):
        for size in (1, 2, 5, 13, len(text)):
            parser = sp.StreamParser(tools, stream_arguments=stream_arguments)
            events = [ev for i in range(0, len(text), size) for ev in parser.feed(text[i:i + size])] + parser.close()
            result = sp.ParseResult(events)
            assert result.tool_calls == [] and result.content == text
            assert not any(isinstance(ev, sp.ToolCallDelta) for ev in events)
            assert [d.code for d in result.diagnostics] == ["rejected"]
            assert "'hello'" in result.diagnostics[0].message
    blank = sp.parse('<tool_call>{"name": "do_thing", "arguments": ""}</tool_call>', tools)
    assert [(c.name, c.arguments) for c in blank.tool_calls] == [("do_thing", "{}")]  # nothing written, nothing lost
