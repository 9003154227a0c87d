"""A bare pythonic call written after text on its line stays text and is reported once (``mid_line``), right
after its ``(``, on any chunking, through the prose fast path or the state machine alike (issue 32 §2)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamparse as sp
from helpers import TOOLS, feed_chunks
from streamparse import Diagnostic, StreamParser, TextDelta

SURE = 'Sure: [get_weather(city="Paris")] ok'
REPORT = Diagnostic("mid_line", "get_weather: a pythonic call after text on the same line is read as text "
                    "(a bare call list starts a line)", "pythonic", {"name": "get_weather"})


def merged(events: list[sp.Event]) -> list[Any]:
    """Events with adjacent text joined (how a feed splits text is not a promise); ids left out."""
    out: list[Any] = []
    for ev in events:
        if isinstance(ev, (TextDelta, sp.ReasoningDelta)) and out and type(out[-1]) is type(ev):
            out[-1] = type(ev)(out[-1].text + ev.text)
        elif isinstance(ev, sp.ToolCall):
            out.append((ev.name, ev.arguments))
        else:
            out.append(ev)
    return out


def whole(text: str, tools: Any = TOOLS, **options: Any) -> list[Any]:
    return merged(feed_chunks(text, len(text) or 1, tools, **options))


def test_a_declared_call_after_text_stays_text_reported_after_its_paren() -> None:
    assert whole(SURE) == [TextDelta('Sure: [get_weather('), REPORT, TextDelta('city="Paris")] ok')]
    assert sp.parse(SURE, TOOLS).content == SURE and not sp.parse(SURE, TOOLS).tool_calls


@pytest.mark.parametrize("text, name", [
    ("see [server.method() now", "server.method"),  # dotted
    ("see [GET_WEATHER(x)", "get_weather"),  # any case, named as declared
    ("a\nb [write_file(path='x')]", "write_file"),
])
def test_the_name_rule_is_the_line_start_forms(text: str, name: str) -> None:
    diags = [d for d in sp.parse(text, TOOLS).diagnostics if d.code == "mid_line"]
    assert [d.details for d in diags] == [{"name": name}] and diags[0].dialect == "pythonic"
    assert sp.parse(text, TOOLS).content == text


@pytest.mark.parametrize("text, tools, options", [
    ("Sure: [area(r=1)]", TOOLS, {}),  # undeclared name
    ("Sure: [get_weather (city='x')]", TOOLS, {}),  # not "[NAME("
    ("Sure: [get_weather]", TOOLS, {}),
    ("Sure: [get_weather", TOOLS, {}),  # cut by the end of the stream
    ("Sure: [text](url) and [1]", TOOLS, {}),
    (SURE, None, {}),  # no tools
    (SURE, [], {}),
    (SURE, TOOLS, {"dialects": ["hermes"]}),  # pythonic not enabled
    (SURE, TOOLS, {"dialects": ["hermes", "xlam"]}),
    ("<think>Sure: [get_weather(city='x')]</think>ok", TOOLS, {}),  # reasoning: a span of its own
    ("<think>Sure: [get_weather(city='x')]</think>ok", TOOLS, {"calls_in_reasoning": True}),
    ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "x [get_weather(y)"}}\n</tool_call>', TOOLS, {}),
])
def test_no_report(text: str, tools: Any, options: dict[str, Any]) -> None:
    result = sp.parse(text, tools, **options)
    assert not [d for d in result.diagnostics if d.code == "mid_line"]
    for size in (1, 3, 7):
        assert merged(feed_chunks(text, size, tools, **options)) == whole(text, tools, **options)


def test_at_a_line_start_it_is_a_call_as_before() -> None:
    for text in ['[get_weather(city="Paris")]', 'Sure:\n[get_weather(city="Paris")]', '  [get_weather(city="Paris")]']:
        result = sp.parse(text, TOOLS)
        assert [(c.name, c.parsed_arguments) for c in result.tool_calls] == [("get_weather", {"city": "Paris"})]
        assert not result.diagnostics


def test_named_alone_it_is_read_anywhere_as_before() -> None:
    result = sp.parse(SURE, TOOLS, dialects=["pythonic"])
    assert [c.name for c in result.tool_calls] == ["get_weather"] and not result.diagnostics


def test_in_a_prose_code_fence_it_is_reported_as_any_line() -> None:
    """Fenced code lines are read as lines (a fenced line-start call is a call), so a mid-line one is reported."""
    text = "```python\nx = [get_weather(city) for city in cities]\n```\n"
    assert sp.parse(text, TOOLS).content == text
    assert [d.code for d in sp.parse(text, TOOLS).diagnostics] == ["mid_line"]


@pytest.mark.parametrize("text", [SURE, "a [get_weather(x) b [server.method(y) c", "x [get_wea [get_weather(",
                                  "Sure: [TOOL_CALLS [get_weather(", "ok [get_weatherx(1) [get_weather(2)",
                                  "one\ntwo [get_weather(a)\n[get_weather(city='P')]\nthree [configure("])
def test_split_anywhere_it_gives_the_events_of_the_whole_text(text: str) -> None:
    expected = whole(text)
    for i in range(len(text) + 1):
        for j in range(i, min(len(text), i + 12) + 1):
            assert merged(feed_chunks(text, [i, j])) == expected, (i, j)


def test_the_look_is_resolved_by_the_state_machine_and_the_prose_path_comes_back() -> None:
    parser = StreamParser(TOOLS)
    assert parser.feed("Sure: [get_wea") == [TextDelta("Sure: [get_wea")]  # nothing held
    assert parser.held_text == ""
    assert parser.feed("ther(") == [TextDelta("ther("), REPORT]
    assert parser._gate is parser._prose_gate  # prose again: the gate takes the next delta
    assert parser.feed(" more") == [TextDelta(" more")]


def test_brackets_that_name_no_tool_leave_as_text_in_the_feed_that_brings_them() -> None:
    parser = StreamParser(TOOLS)
    parser.feed("Hello")
    for delta in [" a [list] ", "and [1] ", "or [text](url)", " plain"]:  # (a "]" ending a delta may begin MiniMax-M3's marker)
        assert parser.feed(delta) == [TextDelta(delta)]
    assert parser.held_text == ""


_PIECES = st.sampled_from(["Sure: ", "[", "get_", "weather", "(", "city='P')", "]", "\n", " ", "server.method",
                           "[get_weather(", "x", "[TOOL_CALLS]", "<think>", "</think>", "```\n", "[1]", "GET_WEATHER"])


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=14), data=st.data())
def test_streamed_equals_whole_with_mid_line_calls(pieces: list[str], data: st.DataObject) -> None:
    text = "".join(pieces)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=8))
    options: dict[str, Any] = data.draw(st.sampled_from([{}, {"dialects": ["pythonic", "hermes"]}, {"stream_arguments": True}]))
    assert merged(feed_chunks(text, cuts, **options)) == whole(text, **options)
