"""``calls_in_reasoning`` (issue 18 §3): a well-formed call to a declared tool written inside reasoning
leaves as a call; the reasoning around it stays reasoning. Off by default.

Rules under test: only marker-opened forms count inside reasoning (not bare JSON or ``[f(x)]`` at a line
start); a block that is not a call goes back to the reasoning, never to the content; a block inside
reasoning ends where the reasoning does, so the answer after ``</think>`` is never swallowed.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import streamparse as sp
from budget import examples
from helpers import TOOLS, feed_chunks

HERMES = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
QWEN3 = "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>"


def outcome(text: str, size: int | list[int], tools: Any = TOOLS, **options: Any) -> tuple[str, str, list[tuple[str, str]], list[str]]:
    result = sp.ParseResult(feed_chunks(text, size, tools, **options))
    return (result.reasoning, result.content, [(c.name, c.arguments) for c in result.tool_calls],
            [d.code for d in result.diagnostics])


def whole(text: str, tools: Any = TOOLS, **options: Any) -> tuple[str, str, list[tuple[str, str]], list[str]]:
    return outcome(text, max(len(text), 1), tools, **options)


def test_off_by_default_the_call_stays_reasoning() -> None:
    text = f"<think>Let me check. {HERMES} ok</think>Answer."
    reasoning, content, calls, _ = whole(text)
    assert calls == [] and reasoning == f"Let me check. {HERMES} ok" and content == "Answer."


def test_a_call_inside_reasoning_leaves_and_the_reasoning_around_it_stays() -> None:
    text = f"<think>Let me check. {HERMES} Then answer.</think>It is sunny."
    reasoning, content, calls, _ = whole(text, calls_in_reasoning=True)
    assert calls == [("get_weather", '{"city": "Paris"}')]
    assert reasoning == "Let me check.  Then answer." and content == "It is sunny."


def test_xml_calls_and_calls_after_reasoning_keep_their_order() -> None:
    text = f"<think>first {QWEN3} mid</think>then {HERMES}"
    reasoning, content, calls, _ = whole(text, calls_in_reasoning=True)
    assert calls == [("get_weather", '{"city": "Oslo"}'), ("get_weather", '{"city": "Paris"}')]
    assert reasoning == "first  mid" and content == "then "


def test_an_undeclared_tool_inside_reasoning_stays_reasoning_with_a_diagnostic() -> None:
    block = '<tool_call>{"name": "launch", "arguments": {}}</tool_call>'
    reasoning, content, calls, codes = whole(f"<think>maybe {block} no</think>ok", calls_in_reasoning=True)
    assert calls == [] and reasoning == f"maybe {block} no" and content == "ok"
    assert "unknown_tool" in codes


def test_without_tools_nothing_in_reasoning_is_a_call() -> None:
    text = f"<think>{HERMES}</think>ok"
    assert whole(text, None, calls_in_reasoning=True)[2] == []


def test_a_broken_block_ends_with_the_reasoning_and_the_answer_survives() -> None:
    text = '<think>try <tool_call>{"name": "get_weather", "arguments": {"city": </think>The answer.'
    reasoning, content, calls, codes = whole(text, calls_in_reasoning=True)
    assert calls == [] and content == "The answer."
    assert reasoning == 'try <tool_call>{"name": "get_weather", "arguments": {"city": '
    assert codes  # the refused block is reported


def test_line_start_forms_are_not_read_inside_reasoning() -> None:
    text = '<think>\n{"name": "get_weather", "parameters": {"city": "Rome"}}\n[get_weather(city="Rome")]\n</think>x'
    reasoning, content, calls, _ = whole(text, calls_in_reasoning=True)
    assert calls == [] and content == "x" and "Rome" in reasoning


def test_start_in_reasoning_templates_count_too() -> None:
    reasoning, content, calls, _ = whole(f"plan {HERMES}</think>done", calls_in_reasoning=True, start_in_reasoning=True)
    assert calls == [("get_weather", '{"city": "Paris"}')] and reasoning == "plan " and content == "done"


PIECES = ["<think>", "</think>", "plan ", "\n", "<", "</thi", HERMES, QWEN3, HERMES[:30], " ok ", "{", "x < y"]


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=10).map("".join), st.data())
def test_any_chunking_gives_the_same_result(text: str, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12, unique=True))
    expected = whole(text, calls_in_reasoning=True)
    assert outcome(text, cuts, calls_in_reasoning=True) == expected
    assert outcome(text, 1, calls_in_reasoning=True) == expected


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=10).map("".join))
def test_nothing_is_lost_or_invented(text: str) -> None:
    reasoning, content, calls, _ = whole(text, calls_in_reasoning=True)
    off_reasoning, off_content, off_calls, _ = whole(text)
    # Each call taken from the reasoning removes exactly its block from the reasoning; the content is unchanged.
    assert content == off_content
    assert len(reasoning) <= len(off_reasoning)
    assert len(calls) >= len(off_calls)
