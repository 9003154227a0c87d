"""Markup quoted inside a value is the value's (issue 30, §2; DESIGN: "Markup quoted inside a value").

A coding agent writes files and tests about tool calls, so a value holds the dialect's own closers. A closer ends a
value only where what follows it fits the format; otherwise the call keeps the whole value and no text leaks. Here:
each tag dialect's own closers in the middle of a value, whole and streamed at every chunking; a property over every
dialect the renderer supports (its own markers inside string values, parsed back to what was rendered); and the
fallback when the stream ends right after a quoted closer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamparse as sp
from streamparse.dialects import DIALECTS
from streamparse.dialects.render import RENDERERS, render
from helpers import TOOLS, assert_chunking_invariant, feed_chunks, summary
from streamparse import ParseResult, StreamParser, parse

WRITE = [{"type": "function", "function": {"name": "write_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}}]


def _parse(text: str, dialect: str, chunk: int | None = None) -> tuple[str, list[tuple[str, Any]], list[str]]:
    events = feed_chunks(text, chunk or max(len(text), 1), WRITE, dialects=[dialect])
    content, found = summary(events)
    return content, found, [e.code for e in events if isinstance(e, sp.Diagnostic)]


def _block(dialect: str, value: str) -> str:
    return render(dialect, "write_file", {"path": "a.py", "content": value})


# ------------------------------------------------------------------ each tag dialect, its own closers mid-value

QUOTED = {  # dialect -> a value quoting its value closer, item closer and block end, each followed by more value
    "qwen3_coder": "x </parameter> y </function> z </tool_call> w\n</parameter>\n</function> v",
    "seed_oss": "x </parameter> y </function> z </seed:tool_call> w\n</parameter>\n</function> v",
    "minimax_m2": "x </parameter> y </invoke> z </minimax:tool_call> w\n</parameter>\n</invoke> v",
    "glm45": "x </arg_value> y </tool_call> z </arg_value>\n<arg_value>w </arg_key> v",
}


@pytest.mark.parametrize("dialect", sorted(QUOTED))
def test_a_value_quoting_its_dialects_closers_is_kept_whole_at_every_chunking(dialect: str) -> None:
    value = QUOTED[dialect]
    text = "Writing it.\n" + _block(dialect, value) + "\nDone."
    content, found = assert_chunking_invariant(text, WRITE, dialects=[dialect])
    assert found == [("write_file", {"path": "a.py", "content": value})]
    assert content == "Writing it.\n\nDone."


def test_the_issues_example_keeps_the_value_and_leaks_nothing() -> None:
    text = ("<tool_call>\n<function=write_file>\n<parameter=content>\nx </parameter> y </function> z\n</parameter>\n"
            "</function>\n</tool_call>")
    for size in range(1, 12):
        content, found, _ = _parse(text, "qwen3_coder", size)
        assert (content, found) == ("", [("write_file", {"content": "x </parameter> y </function> z"})]), size


@pytest.mark.parametrize("stream_arguments", [False, True])
@pytest.mark.parametrize("dialect", sorted(QUOTED))
def test_streamed_arguments_agree_with_the_whole_value(dialect: str, stream_arguments: bool) -> None:
    value = QUOTED[dialect]
    text = _block(dialect, value)
    for size in (1, 2, 5, 11):
        events = feed_chunks(text, size, WRITE, dialects=[dialect], stream_arguments=stream_arguments)
        calls = [e for e in events if isinstance(e, sp.ToolCall)]
        assert [json.loads(c.arguments) for c in calls] == [{"path": "a.py", "content": value}], size
        assert summary(events)[0] == ""


def test_a_call_is_not_emitted_while_a_later_character_could_change_its_value() -> None:
    parser = sp.StreamParser(WRITE, dialects=["qwen3_coder"])
    head = "<tool_call>\n<function=write_file>\n<parameter=content>\nx\n</parameter>\n</function>"
    assert not [e for e in parser.feed(head) if isinstance(e, sp.ToolCall)]  # " y" could still follow
    assert not [e for e in parser.feed("\n  ") if isinstance(e, sp.ToolCall)]
    done = parser.feed("</tool_call>")
    assert [(c.name, json.loads(c.arguments)) for c in done if isinstance(c, sp.ToolCall)] == [
        ("write_file", {"content": "x"})]


def test_a_parameter_head_after_a_closer_still_starts_the_next_parameter() -> None:
    text = ("<tool_call>\n<function=write_file>\n<parameter=content>\na </parameter> b\n</parameter>\n"
            "<parameter=path>\np\n</parameter>\n</function>\n</tool_call>")
    content, found = assert_chunking_invariant(text, WRITE, dialects=["qwen3_coder"])
    assert (content, found) == ("", [("write_file", {"content": "a </parameter> b", "path": "p"})])


# ------------------------------------------------------------------ the end of the stream decides

@pytest.mark.parametrize("tail,value,text_after", [
    # (a one-line value keeps the spaces around it: only newlines next to its tags are layout)
    ("x </parameter> y </function>", "x </parameter> y ", ""),  # the item's closer, then the end: it was real
    ("x </parameter> y </function> z", "x </parameter> y ", " z"),  # cut at the last closer that could end it
    ("x </tool_call>  ", "x ", "  "),  # the block's end, then only the end of the stream: real
    ("x </tool_call> after", "x ", " after"),  # inside a value, then more: fallback to it at the end
])
def test_a_stream_ending_after_a_quoted_closer_falls_back_and_says_so(tail: str, value: str, text_after: str) -> None:
    text = "<tool_call>\n<function=write_file>\n<parameter=content>\n" + tail
    whole = _parse(text, "qwen3_coder")
    assert whole[:2] == (text_after, [("write_file", {"content": value})])
    assert "repaired" in whole[2]
    for size in (1, 2, 3, 7):
        assert _parse(text, "qwen3_coder", size) == whole


def test_a_plain_call_cut_after_its_item_closer_needs_no_fallback_note() -> None:
    text = "<tool_call>\n<function=write_file>\n<parameter=content>\nx\n</parameter>\n</function>"
    assert _parse(text, "qwen3_coder") == ("", [("write_file", {"content": "x"})], [])


# ------------------------------------------------------------------ every dialect the renderer supports

def _markers(dialect: str) -> list[str]:
    """The dialect's own markup: openers, ends, closers, item, nest and value tags (and the issue's usual suspects)."""
    d = DIALECTS[dialect]
    out = {o.text.replace("{name}", "write_file") for o in d.openers}
    out |= {e.replace("{name}", "write_file") for e in (*d.end, *d.closers)}
    for pair in (d.item, d.nest):
        out |= set(pair or ())
    if d.values is not None:
        out |= {d.values.close, *(t.strip() for t in d.values.open)}
    if d.stream is not None and d.stream.item_close:
        out.add(d.stream.item_close)
    return sorted(m for m in out if m.strip())


# Dialects whose values can still be cut at a quoted marker, and why (issue 30 §2: left).
LEFT: dict[str, str] = {
    "minicpm5": "a bare call (no wrapper) ends at its closer wherever the tags do not balance, since prose may follow "
                "it; MiniCPM5 wraps such values in CDATA, which the tag body does not track as a quote yet",
    "minimax_m3": "every tag begins with the namespace marker, a special token a value never holds, so a value has no "
                  "quoting rule: the marker written into one by hand ends its element",
}

WORDS = st.text(alphabet="abc xyz=\n", min_size=0, max_size=6).map(lambda s: s.strip(" \n") or "v")


@pytest.mark.parametrize("dialect", sorted(RENDERERS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_dialects_own_markers_inside_string_values_parse_back_to_what_was_rendered(dialect: str,
                                                                                      data: st.DataObject) -> None:
    if dialect in LEFT:
        pytest.xfail(LEFT[dialect])
    markers = _markers(dialect)
    parts = data.draw(st.lists(st.tuples(WORDS, st.sampled_from(markers), WORDS), min_size=1, max_size=3))
    # a marker followed (after a space) by a word, which cannot follow a real closer in any format
    value = " ".join(f"{a} {m} {b}" for a, m, b in parts)
    args = {"path": "a.py", "content": value}
    text = render(dialect, "write_file", args)
    whole = summary(feed_chunks(text, len(text), WRITE, dialects=[dialect]))
    assert whole == ("", [("write_file", args)]), (dialect, text)
    size = data.draw(st.integers(1, 9))
    assert summary(feed_chunks(text, size, WRITE, dialects=[dialect])) == whole


@pytest.mark.parametrize("text, value", [
    ('<tool_call>\n<function=get_weather>\n<parameter=city>\nw </function> </tool_call> w\n</parameter>\n'
     '</function>\n</tool_call>', "w </function> </tool_call> w"),
    ('<function_calls>\n<invoke name="get_weather">\n<parameter name="city">w </invoke> </function_calls> w'
     '</parameter>\n</invoke>\n</function_calls>', "w </invoke> </function_calls> w"),
    ('<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">a</invoke>\n</minimax:tool_call>\nb'
     '</parameter>\n</invoke>\n</minimax:tool_call>', "a</invoke>\n</minimax:tool_call>\nb"),
])
def test_an_item_closer_and_the_block_end_quoted_in_a_value_are_the_value_s_when_the_tags_balance(
        text: str, value: str) -> None:
    # the value never closed before them: only the end of the stream could make them the call's end
    whole = parse(text, TOOLS)
    assert [(c.name, c.parsed_arguments) for c in whole.tool_calls] == [("get_weather", {"city": value})]
    for cut in range(1, len(text)):
        parser = StreamParser(TOOLS)
        streamed = ParseResult(parser.feed(text[:cut]) + parser.feed(text[cut:]) + parser.close())
        assert [(c.name, c.arguments) for c in streamed.tool_calls] == [(c.name, c.arguments) for c in whole.tool_calls]
        assert streamed.content == whole.content


@pytest.mark.parametrize("after", ["", "\nDone."])
def test_a_parameter_missing_its_closer_is_repaired_when_the_stream_ends(after: str) -> None:
    text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</function>\n</tool_call>" + after
    parser = StreamParser(TOOLS)
    events = parser.feed(text)
    assert not [e for e in events if e.type == "tool_call"]  # a later </parameter> could still make it a value's
    result = ParseResult(events + parser.close())
    assert [(c.name, c.parsed_arguments) for c in result.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert result.content == after and "repaired" in [d.code for d in result.diagnostics]
