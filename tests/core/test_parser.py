"""StreamParser behaviour: timing, holding back, gating, faults, limits."""

from __future__ import annotations

import json

import pytest

import streamparse as sp
from helpers import TOOLS, assert_chunking_invariant, calls, content, feed_chunks, summary

HERMES = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
QWEN3 = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"


def _feed_chars(parser: sp.StreamParser, text: str) -> list[list[sp.Event]]:
    return [parser.feed(ch) for ch in text]


# ---------------------------------------------------------------- public API shape

def test_events_have_the_documented_fields() -> None:
    result = sp.parse("Hi " + HERMES, TOOLS)
    assert result.content == "Hi "
    (call,) = result.tool_calls
    assert call.type == "tool_call" and call.index == 0 and call.id.startswith("call_")
    assert call.name == "get_weather" and json.loads(call.arguments) == {"city": "Paris"}
    assert call.parsed_arguments == {"city": "Paris"}
    assert sp.TextDelta("x").type == "text" and sp.ReasoningDelta("x").type == "reasoning"


def test_indexes_in_order_and_ids_unique_across_streams() -> None:
    ids = set()
    for _ in range(3):
        result = sp.parse(HERMES + QWEN3 + HERMES, TOOLS)
        assert [c.index for c in result.tool_calls] == [0, 1, 2]
        ids.update(c.id for c in result.tool_calls)
    assert len(ids) == 9


def test_id_factory_makes_ids_deterministic() -> None:
    counter = iter(range(100))
    result = sp.parse(HERMES * 2, TOOLS, id_factory=lambda: f"call_{next(counter)}")
    assert [c.id for c in result.tool_calls] == ["call_0", "call_1"]


def test_unknown_dialect_name_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown dialect"):
        sp.StreamParser(dialects=["nope"])


def test_feed_after_close_and_non_string_delta() -> None:
    parser = sp.StreamParser()
    with pytest.raises(TypeError):
        parser.feed(b"bytes")  # type: ignore[arg-type]
    parser.close()
    with pytest.raises(RuntimeError):
        parser.feed("x")
    assert parser.close() == []


# ---------------------------------------------------------------- timing: text early, calls on time

def test_plain_text_leaves_in_the_same_feed() -> None:
    parser = sp.StreamParser(TOOLS)
    for piece in ["Hello", " world", ", a ", "< b", " and", " <b>bold</b>", "!"]:
        events = parser.feed(piece)
        assert parser.held_text in ("", "<", "<b")
        if parser.held_text == "":
            assert events, piece
    assert summary(parser.close())[0] == ""


def test_held_tail_is_bounded_by_the_longest_marker() -> None:
    parser = sp.StreamParser(TOOLS)
    longest = max(len("<search_recipes>"), len("[TOOL_CALLS]"))
    for ch in "x <tool_ca <tools <function <sea <think " * 3:
        parser.feed(ch)
        assert len(parser.held_text) <= longest


@pytest.mark.parametrize("text,closing", [
    (HERMES, "}}"),  # a JSON call is complete at the end of its value: it does not wait for </tool_call>
    (QWEN3, "</tool_call>"),  # a value's closer is known for one only once what follows it is: the block's end
    ('<function>{"name": "get_weather", "parameters": {"city": "P"}}</function>', "}}"),
    ('<{"name": "get_weather", "arguments": {"city": "P"}}>', "}}"),
    ('<search_recipes>{"query": "pasta"}</search_recipes>', "}"),
    ('{"tool_calls": [{"name": "get_weather", "arguments": {"city": "P"}}]}', "]}"),
    ('{"name": "get_weather", "arguments": {"city": "P"}}', "}}"),
])
def test_call_is_emitted_by_the_feed_that_completes_it(text: str, closing: str) -> None:
    parser = sp.StreamParser(TOOLS)
    per_feed = _feed_chars(parser, text + " tail")
    emitted_at = [i for i, evs in enumerate(per_feed) if any(e.type == "tool_call" for e in evs)]
    assert emitted_at == [text.index(closing) + len(closing) - 1]
    assert not any(e.type == "tool_call" for e in parser.close())


def test_text_after_a_call_is_not_lost() -> None:
    text = "a" + HERMES + "b" + QWEN3 + "c\n" + '{"name": "get_weather", "arguments": {"city": "X"}}' + "\nd"
    text_out, found = assert_chunking_invariant(text)
    assert text_out == "ab" + "c\n\nd"
    assert len(found) == 3


def test_marker_sharing_a_delta_with_text() -> None:
    parser = sp.StreamParser(TOOLS)
    events = parser.feed("Sure!<tool_call>{\"name\": \"get_weather\", ")
    assert [(e.type, e.text) for e in events] == [("text", "Sure!")]
    events = parser.feed('"arguments": {"city": "x"}}</tool_call>Next sentence')
    assert [e.type for e in events] == ["tool_call", "text"]
    assert events[1].text == "Next sentence"


# ---------------------------------------------------------------- gating

def test_html_and_comparisons_pass_through() -> None:
    text = "if a < b and c > d: <b>bold</b> <div class='x'>y</div> <br/> <function x>"
    assert assert_chunking_invariant(text) == (text, [])


def test_special_tokens_are_text() -> None:
    text = "end<|im_end|><|endoftext|><|tool_call|>"
    assert assert_chunking_invariant(text) == (text, [])


def test_name_tag_only_for_provided_tools() -> None:
    text = '<search_recipes>{"query": "x"}</function> <other_tool>{"a": 1}</function>'
    text_out, found = assert_chunking_invariant(text)
    assert found == [("search_recipes", {"query": "x"})]
    assert text_out == ' <other_tool>{"a": 1}</function>'


def test_without_tools_tagged_blocks_parse_and_gated_forms_stay_text() -> None:
    tagged = '<tool_call>{"name": "anything", "arguments": {"x": 1}}</tool_call>'
    assert calls(tagged, tools=None) == [("anything", {"x": 1})]
    for gated in ['<search_recipes>{"query": "x"}</function>', '{"name": "get_weather", "arguments": {}}',
                  '{"tool_calls": [{"name": "get_weather", "arguments": {}}]}']:
        assert content(gated, tools=None) == gated
        assert calls(gated, tools=None) == []


def test_unknown_tool_name_is_kept_verbatim_with_a_diagnostic() -> None:
    text = 'x<tool_call>{"name": "launch_missiles", "arguments": {}}</tool_call>y'
    events = feed_chunks(text, 3)
    assert summary(events) == (text, [])
    assert [e.code for e in events if e.type == "diagnostic"] == ["unknown_tool"]


def test_bare_json_needs_line_start() -> None:
    text = 'Use {"name": "get_weather", "arguments": {"city": "x"}} like that'
    assert assert_chunking_invariant(text) == (text, [])


def test_json_in_prose_is_released_at_its_first_key() -> None:
    parser = sp.StreamParser(TOOLS)
    parser.feed('\n{"key": ')
    assert parser.held_text == ""


def test_dialects_restrict_detection() -> None:
    text = HERMES + QWEN3
    text_out, found = assert_chunking_invariant(text, dialects=["qwen3_xml"])
    assert found == [("get_weather", {"city": "Paris"})]
    assert text_out == HERMES


# ---------------------------------------------------------------- reasoning

def test_think_block_is_reasoning_and_never_parsed() -> None:
    text = f"<think>I could call {HERMES} maybe</think>Answer"
    events = feed_chunks(text, 2)
    result = sp.ParseResult(events)
    assert result.reasoning == f"I could call {HERMES} maybe"
    assert result.content == "Answer" and result.tool_calls == []


def test_start_in_reasoning_for_templates_that_open_think_in_the_prompt() -> None:
    result = sp.ParseResult(feed_chunks("thinking...</think>" + HERMES, 3, start_in_reasoning=True))
    assert result.reasoning == "thinking..." and len(result.tool_calls) == 1


@pytest.mark.parametrize("closer", ["</think>", "</seed:think>", "<|end|>"])
def test_start_in_reasoning_ends_at_any_enabled_reasoning_closer(closer: str) -> None:
    result = sp.ParseResult(feed_chunks("plan" + closer + "answer", 2, start_in_reasoning=True))
    assert (result.reasoning, result.content) == ("plan", "answer")


# ---------------------------------------------------------------- repair and faults

@pytest.mark.parametrize("body,expected", [
    ("{'name': 'get_weather', 'arguments': {'city': 'Rome'}}", {"city": "Rome"}),
    ("{name: \"get_weather\", arguments: {city: \"Rome\",},}", {"city": "Rome"}),
    ('{"name": "get_weather", "arguments": {"city": "Rome", "metric": True, "days": None}}', {"city": "Rome", "metric": True}),
    ('{"name": "get_weather", "arguments": {"city": "Rome"}', {"city": "Rome"}),
    ('{"name": "get_weather", "arguments": {"city": "line1\nline2"}}', {"city": "line1\nline2"}),
])
def test_repairs(body: str, expected: dict) -> None:
    (found,) = calls(f"<tool_call>{body}</tool_call>")
    assert found[0] == "get_weather"
    assert {k: v for k, v in found[1].items() if v is not None} == expected


def test_unparsable_block_is_text_with_a_diagnostic() -> None:
    text = "<tool_call>{this is: not [json</tool_call> after"
    events = feed_chunks(text, 5)
    assert summary(events) == (text, [])
    assert any(e.type == "diagnostic" and e.code == "rejected" for e in events)


def test_closing_tag_inside_a_json_string() -> None:
    text = '<tool_call>{"name": "write_file", "arguments": {"path": "a", "content": "x</tool_call>y"}}</tool_call>z'
    assert assert_chunking_invariant(text) == ("z", [("write_file", {"path": "a", "content": "x</tool_call>y"})])


def test_unterminated_block_with_complete_body_is_a_call_before_its_end_tag() -> None:
    parser = sp.StreamParser(TOOLS)
    events = parser.feed('<tool_call>{"name": "get_weather", "arguments": {"city": "P"}}')
    assert [e.name for e in events if e.type == "tool_call"] == ["get_weather"]
    assert summary(parser.close()) == ("", [])


def test_block_missing_only_its_final_brace_is_a_call_at_close() -> None:
    parser = sp.StreamParser(TOOLS)
    events = parser.feed('<tool_call>{"name": "get_weather", "arguments": {"city": "P"}')
    assert not any(e.type == "tool_call" for e in events)
    assert [e.name for e in parser.close() if e.type == "tool_call"] == ["get_weather"]


@pytest.mark.parametrize("text", [
    '<tool_call>{"name": "get_weather", "arguments": {"city": "P',
    '<tool_call>{"name": "get_weather"',
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis",
    "<tools>[",
    '```json\n{"name": "get_weather", "arguments": {"ci',
])
def test_unterminated_incomplete_block_is_text(text: str) -> None:
    assert assert_chunking_invariant(text) == (text, [])


def test_missing_required_argument_is_reported_not_fatal() -> None:
    events = feed_chunks('<tool_call>{"name": "get_weather", "arguments": {"days": 2}}</tool_call>', 4)
    assert [e.code for e in events if e.type == "diagnostic"] == ["missing_required"]
    assert summary(events)[1] == [("get_weather", {"days": 2})]


def test_json_arguments_are_coerced_to_the_schema() -> None:
    text = '<tool_call>{"name": "configure", "arguments": {"count": "3", "ratio": "1e3", "enabled": "false", "code": 7}}</tool_call>'
    assert calls(text) == [("configure", {"count": 3, "ratio": 1000.0, "enabled": False, "code": "7"})]


def test_ten_thousand_angle_brackets() -> None:
    text = "<" * 10_000 + "x" + "<" * 10
    parser = sp.StreamParser(TOOLS)
    out = []
    for i in range(0, len(text), 7):
        out += parser.feed(text[i : i + 7])
        assert len(parser.held_text) <= 16
    out += parser.close()
    assert summary(out) == (text, [])


def test_two_hundred_kb_argument() -> None:
    big = "".join(f"line {i}: \"quoted\" \\ <tag> </tool_call>\n" for i in range(5000))
    assert len(big) > 200_000
    text = "<tool_call>" + json.dumps({"name": "write_file", "arguments": {"path": "big.txt", "content": big}}) + "</tool_call>"
    assert summary(feed_chunks(text, 4)) == ("", [("write_file", {"path": "big.txt", "content": big})])
    xml = f"<tool_call>\n<function=write_file>\n<parameter=path>\nbig.txt\n</parameter>\n<parameter=content>\n{big.replace('</tool_call>', '')}\n</parameter>\n</function>\n</tool_call>"
    assert summary(feed_chunks(xml, 4))[1] == [("write_file", {"path": "big.txt", "content": big.replace("</tool_call>", "")})]


def test_block_over_the_limit_is_released_as_text() -> None:
    text = "<tool_call>" + json.dumps({"name": "write_file", "arguments": {"content": "x" * 500}}) + "</tool_call>after"
    events = feed_chunks(text, 10, max_block_chars=100)
    assert summary(events) == (text, [])
    assert [e.code for e in events if e.type == "diagnostic"] == ["block_too_large"]


def test_most_calls_limit() -> None:
    events = feed_chunks(HERMES * 3, 8, max_calls=2)
    text_out, found = summary(events)
    assert len(found) == 2 and text_out == HERMES
    assert [e.code for e in events if e.type == "diagnostic"] == ["too_many_calls"]


def test_aborted_opener_rescans_what_follows() -> None:
    text = "<tools>" + HERMES + "</tools>"
    text_out, found = assert_chunking_invariant(text)
    assert found == [("get_weather", {"city": "Paris"})]
    assert text_out == "<tools></tools>"


def test_missing_end_tag_before_more_prose() -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "P"}}\nI called it.'
    assert assert_chunking_invariant(text) == ("\nI called it.", [("get_weather", {"city": "P"})])


def test_parse_equals_streaming_for_the_builtin_examples() -> None:
    from streamparse.harness.examples import EXAMPLES

    for text in EXAMPLES.values():
        assert assert_chunking_invariant(text)[1]


def test_bare_call_missing_its_final_brace_does_not_hold_back_the_prose_after_it() -> None:
    text = '{"name": "get_weather", "arguments": {"city": "Paris"}\nLet me know.'
    assert assert_chunking_invariant(text) == ("\nLet me know.", [("get_weather", {"city": "Paris"})])
    parser = sp.StreamParser(TOOLS)
    events = parser.feed(text[: text.index("Let") + 1])
    assert [e.type for e in events if e.type != "diagnostic"] == ["tool_call", "text"]


def test_bare_tool_calls_missing_final_brace() -> None:
    text = '{"tool_calls": [{"name": "server.method", "arguments": {}}]\nok'
    assert assert_chunking_invariant(text) == ("\nok", [("server.method", {})])


def test_mistral_v11_name_args_form_and_gating() -> None:
    text = 'Sure.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]search_recipes[ARGS]{"query": "x"} done'
    assert assert_chunking_invariant(text) == (
        "Sure. done", [("get_weather", {"city": "Paris"}), ("search_recipes", {"query": "x"})])
    unknown = "[TOOL_CALLS]launch[ARGS]{}"
    assert assert_chunking_invariant(unknown) == (unknown, [])
    assert calls("[TOOL_CALLS]anything[ARGS]{'a': 1,}", tools=None) == [("anything", {"a": 1})]
    prose = "[TOOL_CALLS] is a marker"
    assert assert_chunking_invariant(prose) == (prose, [])
