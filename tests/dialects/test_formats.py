"""Per-format edge cases, after what the serving engines (vLLM, SGLang, llama.cpp) check in their own tests.

Every example string here is written for this file. Expected results follow streamparse's promises
(README): text outside blocks is verbatim, a block that does not become a call comes back as text
(verbatim, once, with a diagnostic), an unknown tool name is never a call, and chunking changes nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import streamparse as sp
from helpers import TOOLS, feed_chunks, summary
from samples import RENDER, RENDER_SEVERAL

EXTRA_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "get_time", "parameters": {
        "type": "object", "properties": {"timezone": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "register_user", "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "profile", "parameters": {"type": "object", "properties": {
        "nick": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "prefs": {"anyOf": [{"type": "object"}, {"type": "null"}]},
        "age": {"type": ["integer", "null"]},
    }}}},
]
T = TOOLS + EXTRA_TOOLS

DS_CALLS, DS_CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
DS_CALL, DS_CALL_END, DS_SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
KIMI_SEC, KIMI_SEC_END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
KIMI_CALL, KIMI_ARGS, KIMI_CALL_END = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"


def run(text: str, tools: Any = T, **options: Any) -> sp.ParseResult:
    """Parse whole, and check that one-character feeding agrees (text, reasoning, calls)."""
    result = sp.parse(text, tools, **options)
    parser = sp.StreamParser(tools, **options)
    events: list[sp.Event] = []
    for ch in text:
        events += parser.feed(ch)
    events += parser.close()
    slow = sp.ParseResult(events)
    assert (slow.content, slow.reasoning, [(c.name, c.parsed_arguments) for c in slow.tool_calls]) == (
        result.content, result.reasoning, [(c.name, c.parsed_arguments) for c in result.tool_calls])
    return result


def found(result: sp.ParseResult) -> list[tuple[str, Any]]:
    return [(c.name, c.parsed_arguments) for c in result.tool_calls]


def codes(result: sp.ParseResult) -> list[str]:
    return [d.code for d in result.diagnostics]


def assert_verbatim(text: str, tools: Any = T, **options: Any) -> sp.ParseResult:
    """Not a call: the text comes back exactly, and nothing else."""
    result = run(text, tools, **options)
    assert found(result) == []
    assert result.content == text
    return result


# =========================================================================== llama3_json

class TestLlama3Json:
    def test_python_tag_after_text(self) -> None:
        r = run('Let me look.\n<|python_tag|>{"name": "get_weather", "parameters": {"city": "Quito"}}')
        assert found(r) == [("get_weather", {"city": "Quito"})]
        assert r.content == "Let me look.\n"

    @pytest.mark.parametrize("sep", [";", "; ", " ; ", ";\n"])
    def test_several_calls_separated_by_semicolons(self, sep: str) -> None:
        text = ("<|python_tag|>" + '{"name": "get_weather", "parameters": {"city": "Lagos"}}' + sep
                + '{"name": "get_time", "parameters": {}}' + sep
                + '{"name": "search_recipes", "parameters": {"query": "jollof"}}')
        r = run(text)
        assert found(r) == [("get_weather", {"city": "Lagos"}), ("get_time", {}),
                            ("search_recipes", {"query": "jollof"})]
        assert r.content == ""

    def test_bare_semicolon_list_at_line_start(self) -> None:
        text = 'Calling:\n{"name": "get_time", "parameters": {"timezone": "UTC"}}; {"name": "get_weather", "parameters": {"city": "Oslo"}}'
        r = run(text)
        assert found(r) == [("get_time", {"timezone": "UTC"}), ("get_weather", {"city": "Oslo"})]
        assert r.content == "Calling:\n"

    def test_arguments_key_is_accepted_like_parameters(self) -> None:
        r = run('<|python_tag|>{"name": "get_weather", "arguments": {"city": "Lima"}}')
        assert found(r) == [("get_weather", {"city": "Lima"})]

    def test_bare_form_needs_tools(self) -> None:
        bare = '{"name": "get_weather", "parameters": {"city": "Lima"}}'
        assert_verbatim(bare, tools=None)
        tagged = run("<|python_tag|>" + bare, tools=None)
        assert found(tagged) == [("get_weather", {"city": "Lima"})]

    def test_bare_form_mid_line_is_prose(self) -> None:
        assert_verbatim('The JSON is {"name": "get_time", "parameters": {}} as you see.')

    def test_braces_and_escaped_quotes_inside_strings(self) -> None:
        query = 'a {value} [complex] "He said \\"hi {w}\\""'
        r = run("<|python_tag|>" + json.dumps({"name": "search_recipes", "parameters": {"query": query}}))
        assert found(r) == [("search_recipes", {"query": query})]

    def test_trailing_prose_with_braces_keeps_the_call(self) -> None:
        text = '{"name": "get_time", "parameters": {}}\nTrailing {weird} and {"query": "x"} text'
        r = run(text)
        assert found(r) == [("get_time", {})]
        assert r.content == '\nTrailing {weird} and {"query": "x"} text'

    def test_object_without_name_is_text(self) -> None:
        assert_verbatim('{"parameters": {"city": "x"}}\n')

    def test_unreadable_body_is_text(self) -> None:
        text = '<|python_tag|>{"name": "get_weather", "parameters": {city name here}'
        r = assert_verbatim(text)
        assert r.diagnostics


# =========================================================================== pythonic

class TestPythonic:
    def test_python_literals(self) -> None:
        text = ("[register_user(name='Ana Lopes', age=41, home={'city': 'Porto', \"zip\": '4000'}, "
                "manager=None, active=True, banned=False, tags=['a', \"b\", [1, 2.5]], score=-3)]")
        r = run(text)
        assert found(r) == [("register_user", {
            "name": "Ana Lopes", "age": 41, "home": {"city": "Porto", "zip": "4000"}, "manager": None,
            "active": True, "banned": False, "tags": ["a", "b", [1, 2.5]], "score": -3})]
        assert r.content == ""

    def test_both_quote_kinds_and_escaped_quotes(self) -> None:
        text = ("[get_weather(city='Martha\\'s Vineyard'), "
                "write_file(path=\"say \\\"hi\\\".txt\", content='tab\\there\\nnew line')]")
        r = run(text)
        assert found(r) == [("get_weather", {"city": "Martha's Vineyard"}),
                            ("write_file", {"path": 'say "hi".txt', "content": "tab\there\nnew line"})]

    def test_empty_call_and_empty_containers(self) -> None:
        r = run("[get_time(), register_user(extra={}, steps=[])]")
        assert found(r) == [("get_time", {}), ("register_user", {"extra": {}, "steps": []})]

    def test_text_around(self) -> None:
        r = run("Sure.\n[get_weather(city='Kyiv')]\nDone.")
        assert found(r) == [("get_weather", {"city": "Kyiv"})]
        assert r.content == "Sure.\n\nDone."

    def test_llama4_wrapper(self) -> None:
        r = run("Checking.<|python_start|>[get_weather(city='Seoul', metric=False)]<|python_end|> ok")
        assert found(r) == [("get_weather", {"city": "Seoul", "metric": False})]
        assert r.content == "Checking. ok"

    def test_bare_list_needs_tools_but_the_wrapper_does_not(self) -> None:
        assert_verbatim("[get_weather(city='Seoul')]", tools=None)
        assert found(run("<|python_start|>[get_weather(city='Seoul')]<|python_end|>", tools=None)) == [
            ("get_weather", {"city": "Seoul"})]

    def test_implicit_string_concatenation_and_unicode_escapes(self) -> None:
        r = run("[get_weather(city='Rio ' \"de Janeiro\", days=3), search_recipes(query='caf\\u00e9 \U0001F600')]")
        assert found(r) == [("get_weather", {"city": "Rio de Janeiro", "days": 3}), ("search_recipes", {"query": "café 😀"})]

    @pytest.mark.parametrize("literal, value", [
        ("'''two\nlines'''", "two\nlines"),
        ('"""say "hi" """', 'say "hi" '),
        ("u'plain'", "plain"),
        ("r'C:\\new'", "C:\\new"),
    ])
    def test_triple_quoted_and_prefixed_strings(self, literal: str, value: str) -> None:
        r = run(f"[write_file(path='a.txt', content={literal})]")
        assert found(r) == [("write_file", {"path": "a.txt", "content": value})]

    @pytest.mark.parametrize("text", [
        "How can I help you today?",
        "See [get_weather(city='x')] in the docs.",  # not at a line start
        "[nope(city='x')]",  # unknown tool
        "[get_weather(city=some_variable)]",  # a name, not a literal
        "[get_weather(city='a' + 'b')]",  # an expression
        "[get_weather('Paris')]",  # positional argument
        "[get_weather(city='Paris')",  # list never closed
        "[get_weather(city='Paris'), get_time(]",  # mismatched brackets
        "[register_user(x=1e999)]",  # not representable in JSON
    ])
    def test_not_a_call_stays_text(self, text: str) -> None:
        assert_verbatim(text)


# =========================================================================== deepseek v3 / v3.1

def ds_v3_item(name: str, args_json: str) -> str:
    return f"{DS_CALL}function{DS_SEP}{name}\n```json\n{args_json}\n```{DS_CALL_END}"


def ds_v31_item(name: str, args_json: str) -> str:
    return f"{DS_CALL}{name}{DS_SEP}{args_json}{DS_CALL_END}"


class TestDeepSeekV3:
    def test_text_before(self) -> None:
        r = run("Let me check the weather." + DS_CALLS + ds_v3_item("get_weather", '{"city": "Tokyo", "days": 2}') + DS_CALLS_END)
        assert found(r) == [("get_weather", {"city": "Tokyo", "days": 2})]
        assert r.content == "Let me check the weather."

    @pytest.mark.parametrize("between", ["", "\n"])
    def test_two_calls_with_and_without_newline_between(self, between: str) -> None:
        text = (DS_CALLS + ds_v3_item("get_weather", '{"city": "Nara"}') + between
                + ds_v3_item("search_recipes", '{"query": "ramen"}') + DS_CALLS_END + "\nDone.")
        r = run(text)
        assert found(r) == [("get_weather", {"city": "Nara"}), ("search_recipes", {"query": "ramen"})]
        assert r.content == "\nDone."

    def test_empty_arguments_and_escapes(self) -> None:
        args = {"path": "C:\\Users\\me\\notes.txt", "content": 'He said "hello"\nline2 ✓'}
        text = DS_CALLS + ds_v3_item("get_time", "{}") + "\n" + ds_v3_item("write_file", json.dumps(args)) + DS_CALLS_END
        assert found(run(text)) == [("get_time", {}), ("write_file", args)]

    def test_pretty_printed_arguments(self) -> None:
        text = DS_CALLS + ds_v3_item("get_weather", '{\n  "city": "Kobe",\n  "metric": true\n}') + DS_CALLS_END
        assert found(run(text)) == [("get_weather", {"city": "Kobe", "metric": True})]

    def test_reasoning_before_calls(self) -> None:
        r = run("<think>User wants weather.</think>" + DS_CALLS + ds_v3_item("get_weather", '{"city": "Oita"}') + DS_CALLS_END)
        assert r.reasoning == "User wants weather."
        assert found(r) == [("get_weather", {"city": "Oita"})]
        assert r.content == ""

    def test_missing_call_begin_is_text(self) -> None:
        text = f'{DS_CALLS}function{DS_SEP}get_weather\n```json\n{{"city": "Tokyo"}}\n```{DS_CALLS_END}'
        assert_verbatim(text)

    def test_unknown_tool_is_text(self) -> None:
        text = "x" + DS_CALLS + ds_v3_item("book_flight", '{"to": "Tokyo"}') + DS_CALLS_END + "y"
        r = assert_verbatim(text)
        assert "unknown_tool" in codes(r)

    def test_truncated_arguments_are_text(self) -> None:
        text = "Looking." + DS_CALLS + DS_CALL + "function" + DS_SEP + 'get_weather\n```json\n{"city": "To'
        assert_verbatim(text)

    def test_unclosed_arguments_closed_by_the_item_end_are_repaired_with_a_diagnostic(self) -> None:
        # README: a repaired block is reported with a ``repaired`` diagnostic (hermes does this).
        text = DS_CALLS + ds_v3_item("get_weather", '{"city": "Tokyo"') + DS_CALLS_END
        r = run(text)
        assert found(r) == [("get_weather", {"city": "Tokyo"})]
        assert "repaired" in codes(r)


class TestDeepSeekV31:
    def test_text_before_and_raw_arguments(self) -> None:
        r = run("normal text" + DS_CALLS + ds_v31_item("anything", '{"x":1}') + DS_CALLS_END, tools=None)
        assert found(r) == [("anything", {"x": 1})]
        assert r.content == "normal text"

    def test_two_adjacent_calls_and_text_after(self) -> None:
        text = ("prefix " + DS_CALLS + ds_v31_item("get_weather", '{"city": "Hue"}')
                + ds_v31_item("search_recipes", '{"query": "pho"}') + DS_CALLS_END + " suffix")
        r = run(text)
        assert found(r) == [("get_weather", {"city": "Hue"}), ("search_recipes", {"query": "pho"})]
        assert r.content == "prefix  suffix"

    def test_thinking_mode_output_starts_inside_reasoning(self) -> None:
        text = "Need the weather.</think>Checking." + DS_CALLS + ds_v31_item("get_weather", '{"city": "Da Nang"}') + DS_CALLS_END
        r = run(text, start_in_reasoning=True)
        assert r.reasoning == "Need the weather."
        assert r.content == "Checking."
        assert found(r) == [("get_weather", {"city": "Da Nang"})]

    @pytest.mark.parametrize("text", [
        "Let me look that up." + DS_CALLS + "get_weather",
        "Let me look that up." + DS_CALLS + DS_CALL + "get_weather",
        "Let me look that up." + DS_CALLS + DS_CALL + "get_weather" + DS_SEP + '{"city": "x"',
        DS_CALLS + "get_weather" + DS_SEP + '{"city": "x"}' + DS_CALLS_END,  # no per-call markers
    ])
    def test_truncated_or_malformed_is_text(self, text: str) -> None:
        assert_verbatim(text)

    def test_unicode_arguments(self) -> None:
        text = DS_CALLS + ds_v31_item("get_weather", '{"city": "Hồ Chí Minh 🌴"}') + DS_CALLS_END
        assert found(run(text)) == [("get_weather", {"city": "Hồ Chí Minh 🌴"})]


# =========================================================================== kimi_k2

def kimi_item(call_id: str, args_json: str, space: str = "") -> str:
    return f"{KIMI_CALL}{call_id}{space}{KIMI_ARGS}{args_json}{KIMI_CALL_END}"


class TestKimiK2:
    def test_text_before_keeps_its_trailing_space(self) -> None:
        r = run("I'll check. " + KIMI_SEC + kimi_item("functions.get_weather:0", '{"city": "Beijing"}', " ") + KIMI_SEC_END)
        assert found(r) == [("get_weather", {"city": "Beijing"})]
        assert r.content == "I'll check. "

    @pytest.mark.parametrize("call_id", ["functions.get_weather:0", "get_weather:7"])
    def test_id_with_and_without_functions_prefix(self, call_id: str) -> None:
        r = run(KIMI_SEC + kimi_item(call_id, '{"city": "Xi\'an"}') + KIMI_SEC_END)
        assert found(r) == [("get_weather", {"city": "Xi'an"})]

    def test_dotted_tool_name(self) -> None:
        r = run(KIMI_SEC + kimi_item("functions.server.method:0", "{}") + KIMI_SEC_END)
        assert found(r) == [("server.method", {})]

    def test_singular_section_marker(self) -> None:
        text = "<|tool_call_section_begin|>" + kimi_item("functions.get_time:0", "{}") + "<|tool_call_section_end|>after"
        r = run(text)
        assert found(r) == [("get_time", {})]
        assert r.content == "after"

    def test_parallel_calls_and_markup_in_arguments(self) -> None:
        text = (KIMI_SEC + kimi_item("functions.write_file:0", '{"path": "i.html", "content": "<div>content</div>"}')
                + kimi_item("functions.get_weather:1", '{\n  "city": "Wuhan",\n  "days": 3\n}') + KIMI_SEC_END)
        r = run(text)
        assert found(r) == [("write_file", {"path": "i.html", "content": "<div>content</div>"}),
                            ("get_weather", {"city": "Wuhan", "days": 3})]
        assert r.content == ""

    def test_reasoning_then_content_then_calls(self) -> None:
        r = run("<think>plan</think>On it." + KIMI_SEC + kimi_item("functions.get_time:0", "{}") + KIMI_SEC_END)
        assert (r.reasoning, r.content, found(r)) == ("plan", "On it.", [("get_time", {})])

    def test_empty_section_and_unknown_tool_are_text(self) -> None:
        assert_verbatim(KIMI_SEC + " nothing inside " + KIMI_SEC_END)
        r = assert_verbatim(KIMI_SEC + kimi_item("functions.launch:0", "{}") + KIMI_SEC_END)
        assert "unknown_tool" in codes(r)

    def test_truncated_section_is_text(self) -> None:
        assert_verbatim("Sure. " + KIMI_SEC + KIMI_CALL + "functions.get_weather:0" + KIMI_ARGS + '{"city": "Bei')

    def test_unclosed_arguments_are_repaired_with_a_diagnostic(self) -> None:
        text = (KIMI_SEC + kimi_item("functions.get_weather:0", '{"city": "Beijing"')
                + kimi_item("functions.get_time:1", "{}") + KIMI_SEC_END)
        r = run(text)
        assert found(r) == [("get_weather", {"city": "Beijing"}), ("get_time", {})]
        assert "repaired" in codes(r)


# =========================================================================== glm45 / glm47

class TestGlm:
    @pytest.mark.parametrize("text", ["<tool_call>get_time</tool_call>", "<tool_call>get_time\n</tool_call>"])
    def test_zero_argument_call(self, text: str) -> None:
        r = run(text)
        assert found(r) == [("get_time", {})]
        assert r.content == ""

    def test_indented_layout_and_text_around(self) -> None:
        text = ("Sure. <tool_call>get_weather\n    <arg_key>city</arg_key>\n    <arg_value>Dallas</arg_value>\n"
                "    <arg_key>days</arg_key>\n    <arg_value>3</arg_value>\n    </tool_call> done")
        r = run(text)
        assert found(r) == [("get_weather", {"city": "Dallas", "days": 3})]
        assert r.content == "Sure.  done"

    def test_values_typed_by_schema(self) -> None:
        text = ("<tool_call>get_weather<arg_key>city</arg_key><arg_value>1234</arg_value>"
                "<arg_key>days</arg_key><arg_value>4</arg_value><arg_key>metric</arg_key><arg_value>true</arg_value></tool_call>")
        assert found(run(text)) == [("get_weather", {"city": "1234", "days": 4, "metric": True})]

    def test_json_values_for_object_array_number_null(self) -> None:
        text = ("<tool_call>configure\n<arg_key>options</arg_key>\n<arg_value>{\"a\": [1, {\"b\": null}]}</arg_value>\n"
                "<arg_key>items</arg_key>\n<arg_value>[\"x\", 2]</arg_value>\n<arg_key>ratio</arg_key>\n<arg_value>1.5</arg_value>\n"
                "<arg_key>nothing</arg_key>\n<arg_value>null</arg_value>\n</tool_call>")
        assert found(run(text)) == [("configure", {"options": {"a": [1, {"b": None}]}, "items": ["x", 2],
                                                   "ratio": 1.5, "nothing": None})]

    def test_without_schema_values_are_strings(self) -> None:
        text = "<tool_call>get_weather<arg_key>days</arg_key><arg_value>5</arg_value></tool_call>"
        assert found(run(text, tools=None)) == [("get_weather", {"days": "5"})]

    def test_adjacent_glm47_calls_with_unicode_and_markup_characters(self) -> None:
        text = ("<tool_call>get_weather<arg_key>city</arg_key><arg_value>北京</arg_value></tool_call>"
                "<tool_call>write_file<arg_key>path</arg_key><arg_value>a.md</arg_value>"
                "<arg_key>content</arg_key><arg_value>a <b> & \"q\"</arg_value></tool_call>")
        r = run(text)
        assert found(r) == [("get_weather", {"city": "北京"}), ("write_file", {"path": "a.md", "content": 'a <b> & "q"'})]

    def test_reasoning_and_text_between_calls(self) -> None:
        text = ("<think>I need the weather.</think>\n\nI will check.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n"
                "<arg_value>Paris</arg_value>\n</tool_call>\n\nMeanwhile another.\n\n<tool_call>get_time\n</tool_call>")
        r = run(text)
        assert r.reasoning == "I need the weather."
        assert found(r) == [("get_weather", {"city": "Paris"}), ("get_time", {})]
        assert r.content == "\n\nI will check.\n\n\nMeanwhile another.\n\n"

    @pytest.mark.parametrize("text", [
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Dallas</arg_value>",  # never closed
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Dal",
        "<tool_call>launch<arg_key>city</arg_key><arg_value>Dallas</arg_value></tool_call>",  # unknown tool
    ])
    def test_unclosed_or_unknown_is_text(self, text: str) -> None:
        assert_verbatim(text)


# =========================================================================== openai (gpt-oss harmony)

H_CALL = "<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{args}<|call|>"
MARKUP = ("<|channel|>", "<|message|>", "<|start|>", "<|end|>", "<|call|>", "<|return|>", "<|constrain|>", "to=functions")


def no_markup(s: str) -> bool:
    return not any(m in s for m in MARKUP)


class TestHarmony:
    def test_analysis_is_reasoning_and_nothing_leaks(self) -> None:
        text = ("<|channel|>analysis<|message|>User asks weather. Need tool.<|end|><|start|>assistant"
                + H_CALL.format(name="get_weather", args='{"city":"Tokyo"}'))
        r = run(text)
        assert r.reasoning == "User asks weather. Need tool."
        assert found(r) == [("get_weather", {"city": "Tokyo"})]
        assert r.content == ""

    def test_final_channel_is_content(self) -> None:
        text = ("<|channel|>analysis<|message|>Simple.<|end|><|start|>assistant<|channel|>final<|message|>"
                "It is 21°C in Tokyo.<|return|>")
        r = run(text)
        assert (r.reasoning, r.content, found(r)) == ("Simple.", "It is 21°C in Tokyo.", [])

    def test_call_then_final_answer(self) -> None:
        text = (H_CALL.format(name="get_time", args="{}")
                + "<|start|>assistant<|channel|>final<|message|>Done.<|return|>")
        r = run(text)
        assert found(r) == [("get_time", {})]
        assert r.content == "Done."

    def test_commentary_preamble_is_content(self) -> None:
        text = ("<|channel|>commentary<|message|>Let me check.<|end|><|start|>assistant"
                + H_CALL.format(name="get_weather", args='{"city":"Osaka"}'))
        r = run(text)
        assert r.content == "Let me check."
        assert found(r) == [("get_weather", {"city": "Osaka"})]

    @pytest.mark.parametrize("head", [
        "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>",
        "<|start|>assistant to=functions.get_weather<|channel|>commentary<|constrain|>json<|message|>",
        "<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>",
        "<|channel|>commentary to=functions.get_weather<|message|>",  # no content type
    ])
    def test_header_variants(self, head: str) -> None:
        r = run("<|channel|>analysis<|message|>think<|end|>" + head + '{\n"city": "Nagoya"\n}<|call|>')
        assert found(r) == [("get_weather", {"city": "Nagoya"})]
        assert r.content == ""
        assert r.reasoning == "think"

    def test_several_calls(self) -> None:
        text = (H_CALL.format(name="get_weather", args='{"city": "Sendai"}') + "<|start|>assistant"
                + H_CALL.format(name="search_recipes", args='{"query": "gyutan"}'))
        r = run(text)
        assert found(r) == [("get_weather", {"city": "Sendai"}), ("search_recipes", {"query": "gyutan"})]
        assert no_markup(r.content) and r.content == ""

    def test_call_stop_token_stripped_by_the_server(self) -> None:
        text = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Kyoto\"}"
        r = run(text)
        assert found(r) == [("get_weather", {"city": "Kyoto"})]
        assert r.content == ""

    def test_unknown_recipient_is_text(self) -> None:
        r = assert_verbatim(H_CALL.format(name="launch", args="{}"))
        assert "unknown_tool" in codes(r)

    def test_truncated_arguments_do_not_become_a_call(self) -> None:
        # Cut off by max_tokens in the middle of the JSON: the body is not complete (README: such a block
        # comes back as text); an end-of-stream stop token only completes a *complete* body.
        text = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Kyo'
        r = run(text)
        assert found(r) == []
        assert r.content == text


# =========================================================================== seed_oss

def seed_call(name: str, params: dict[str, str]) -> str:
    body = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in params.items())
    return f"<seed:tool_call>\n<function={name}>\n{body}</function>\n</seed:tool_call>"


class TestSeedOss:
    def test_seed_think_is_reasoning_and_an_example_inside_it_is_not_a_call(self) -> None:
        example = seed_call("get_weather", {"city": "Example"})
        text = ("<seed:think>An example would be " + example + " but I need Barcelona.</seed:think>\n"
                + seed_call("get_weather", {"city": "Barcelona, Spain", "days": "2"}))
        r = run(text)
        assert r.reasoning == "An example would be " + example + " but I need Barcelona."
        assert found(r) == [("get_weather", {"city": "Barcelona, Spain", "days": 2})]
        assert r.content == "\n"

    def test_budget_reflection_inside_thinking(self) -> None:
        text = ("<seed:think>\n</seed:cot_budget_reflect>\nThe current thinking budget is 0.\n</seed:think>\n"
                + seed_call("get_weather", {"city": "Oslo"}))
        r = run(text)
        assert "thinking budget" in r.reasoning
        assert found(r) == [("get_weather", {"city": "Oslo"})]
        assert r.content == "\n"

    def test_text_around_and_two_blocks(self) -> None:
        text = "First.\n" + seed_call("get_weather", {"city": "Rome"}) + "\n" + seed_call("get_time", {}) + "tail"
        r = run(text)
        assert found(r) == [("get_weather", {"city": "Rome"}), ("get_time", {})]
        assert r.content == "First.\n\ntail"

    def test_values_typed_by_schema_and_strings_without(self) -> None:
        text = seed_call("configure", {"count": "12", "enabled": "false", "items": "[1, 2]", "code": "0012"})
        assert found(run(text)) == [("configure", {"count": 12, "enabled": False, "items": [1, 2], "code": "0012"})]
        assert found(run(seed_call("get_weather", {"days": "3"}), tools=None)) == [("get_weather", {"days": "3"})]

    def test_multiline_value_keeps_its_lines(self) -> None:
        code = "def f():\n    if a < b:\n        return \"ok\""
        text = seed_call("write_file", {"path": "f.py", "content": code})
        assert found(run(text)) == [("write_file", {"path": "f.py", "content": code})]
        # The newline after the opening tag and the one before the closing tag are layout (README).
        text = seed_call("write_file", {"path": "f.py", "content": "\n" + code + "\n"})
        assert found(run(text)) == [("write_file", {"path": "f.py", "content": code})]

    @pytest.mark.parametrize("text", [
        "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Oslo",
        seed_call("launch", {"city": "Oslo"}),
    ])
    def test_truncated_or_unknown_is_text(self, text: str) -> None:
        assert_verbatim(text)


# =========================================================================== minimax_m2

def mm_invoke(name: str, params: dict[str, str]) -> str:
    body = "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in params.items())
    return f'<invoke name="{name}">\n{body}</invoke>\n'


def mm_block(*invokes: str) -> str:
    return "<minimax:tool_call>\n" + "".join(invokes) + "</minimax:tool_call>"


class TestMiniMaxM2:
    def test_text_before_and_schema_typing(self) -> None:
        r = run("Let me check. " + mm_block(mm_invoke("get_weather", {"city": "Seattle", "days": "5"})))
        assert found(r) == [("get_weather", {"city": "Seattle", "days": 5})]
        assert r.content == "Let me check. "

    def test_without_schema_values_stay_strings(self) -> None:
        text = mm_block(mm_invoke("get_weather", {"city": "Seattle", "days": "5", "metric": "true"}))
        assert found(run(text, tools=None)) == [("get_weather", {"city": "Seattle", "days": "5", "metric": "true"})]

    def test_two_invokes_in_one_block(self) -> None:
        text = mm_block(mm_invoke("get_weather", {"city": "Reno"}), mm_invoke("search_recipes", {"query": "chili"}))
        assert found(run(text)) == [("get_weather", {"city": "Reno"}), ("search_recipes", {"query": "chili"})]

    def test_all_typed_parameters(self) -> None:
        text = mm_block(mm_invoke("configure", {"count": "7", "ratio": "0.25", "enabled": "false", "items": '[1, "a"]',
                                                "options": '{"k": {"n": null}}', "code": "0042", "nothing": "null"}))
        assert found(run(text)) == [("configure", {"count": 7, "ratio": 0.25, "enabled": False, "items": [1, "a"],
                                                   "options": {"k": {"n": None}}, "code": "0042", "nothing": None})]

    def test_nullable_any_of(self) -> None:
        values = mm_block(mm_invoke("profile", {"nick": "Alice", "prefs": '{"theme": "dark", "fontSize": 14}', "age": "33"}))
        assert found(run(values)) == [("profile", {"nick": "Alice", "prefs": {"theme": "dark", "fontSize": 14}, "age": 33})]
        nulls = mm_block(mm_invoke("profile", {"nick": "null", "prefs": "null", "age": "null"}))
        assert found(run(nulls)) == [("profile", {"nick": None, "prefs": None, "age": None})]

    def test_output_starting_inside_thinking(self) -> None:
        text = "The user wants weather.\n</think>\n\nLet me check.\n" + mm_block(mm_invoke("get_weather", {"city": "Boise"}))
        r = run(text, start_in_reasoning=True)
        assert r.reasoning == "The user wants weather.\n"
        assert r.content == "\n\nLet me check.\n"
        assert found(r) == [("get_weather", {"city": "Boise"})]

    def test_markup_and_unicode_in_values(self) -> None:
        text = mm_block(mm_invoke("write_file", {"path": "ü.html", "content": "<p>a < b && \"c\"</p>"}))
        assert found(run(text)) == [("write_file", {"path": "ü.html", "content": "<p>a < b && \"c\"</p>"})]

    @pytest.mark.parametrize("text", [
        '<minimax:tool_call><invoke name="get_weather"><parameter name="city">Sea',
        mm_block(mm_invoke("launch", {"city": "Seattle"})),
    ])
    def test_truncated_or_unknown_is_text(self, text: str) -> None:
        assert_verbatim(text)


# =========================================================================== granite / hunyuan / phi4_mini / xlam

class TestJsonArrayFormats:
    def test_granite_pretty_printed_parallel_with_space(self) -> None:
        text = ('<|tool_call|> [\n  {"name": "get_weather", "arguments": {"city": "Tokyo"}},\n'
                '  {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}\n]')
        assert found(run(text)) == [("get_weather", {"city": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})]

    def test_granite_arguments_before_name_and_text_around(self) -> None:
        text = ('Let me check.\n<|tool_call|>[{"arguments": {"city": "Tokyo"}, "name": "get_weather"}, '
                '{"arguments": {"timezone": "UTC"}, "name": "get_time"}]\nOne moment.')
        r = run(text)
        assert found(r) == [("get_weather", {"city": "Tokyo"}), ("get_time", {"timezone": "UTC"})]
        assert r.content == "Let me check.\n\nOne moment."

    def test_hunyuan_inside_answer_with_text_around(self) -> None:
        text = ('<answer>\nI will call the tool now. <tool_calls>[{"name": "get_weather", "arguments": {"city": "Boston"}}, '
                '{"name": "configure", "arguments": {"options": {"l1": {"l2": {"l3": {"value": 123}}}}}}]</tool_calls>\n</answer>')
        r = run(text)
        assert found(r) == [("get_weather", {"city": "Boston"}),
                            ("configure", {"options": {"l1": {"l2": {"l3": {"value": 123}}}}})]
        assert r.content == "<answer>\nI will call the tool now. \n</answer>"

    def test_phi4_arrays_in_arguments_and_text_around(self) -> None:
        text = ('Let me check.\nfunctools[{"name": "configure", "arguments": {"items": ["a", "b", "c"], "options": {"x": [1, [2]]}}}]\n'
                "Anything else?")
        r = run(text)
        assert found(r) == [("configure", {"items": ["a", "b", "c"], "options": {"x": [1, [2]]}})]
        assert r.content == "Let me check.\n\nAnything else?"

    def test_phi4_empty_arguments_and_parameters_key(self) -> None:
        text = 'functools[{"name": "get_time", "arguments": {}}, {"name": "get_time", "parameters": {"timezone": "CET"}}]'
        assert found(run(text)) == [("get_time", {}), ("get_time", {"timezone": "CET"})]

    def test_xlam_fenced_with_text(self) -> None:
        text = ("I'll help you with that.\n```json\n[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Dallas\"}}, "
                "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Orlando\"}}]\n```\nOK?")
        r = run(text)
        assert found(r) == [("get_weather", {"city": "Dallas"}), ("get_weather", {"city": "Orlando"})]
        assert r.content == "I'll help you with that.\n\nOK?"

    def test_xlam_needs_tools_and_line_start(self) -> None:
        block = '[{"name": "get_weather", "arguments": {"city": "Dallas"}}]'
        assert_verbatim(block, tools=None)
        assert_verbatim("Values: [1, 2] and " + block)

    @pytest.mark.parametrize("block", [
        '[{"name": "get_weather", "arguments": {"city": "Dallas"}}]',  # xlam
        "[get_weather(city='Dallas')]",  # pythonic
        '{"name": "get_weather", "parameters": {"city": "Dallas"}}',  # llama3_json, bare
    ])
    def test_bare_forms_directly_after_reasoning(self, block: str) -> None:
        r = run("<think>I will help.</think>" + block)
        assert r.reasoning == "I will help."
        assert found(r) == [("get_weather", {"city": "Dallas"})]
        assert r.content == ""

    def test_bare_forms_on_a_new_line_after_reasoning(self) -> None:
        r = run('<think>I will help.</think>\n[{"name": "get_weather", "arguments": {"city": "Dallas"}}]')
        assert (r.reasoning, r.content, found(r)) == ("I will help.", "\n", [("get_weather", {"city": "Dallas"})])

    @pytest.mark.parametrize("text", [
        '<|tool_call|> [{"name": "get_weather", "arguments": {',
        "<|tool_call|>[]",
        '<tool_calls>[{"name": "launch", "arguments": {"city": "Boston"}}]</tool_calls>',
        "functools[] This is just text",
        "functools[ This is just text ]",
        'functools{"name": "get_time"}',
        'functools[{"name": "get_weather", "arguments": {',
        "import functools\nfunctools.reduce(f, [1, 2])",
        '[{"name": "launch", "arguments": {}}]',
        "This is a test",
    ])
    def test_malformed_unknown_or_prose_is_text(self, text: str) -> None:
        assert_verbatim(text)


# =========================================================================== hermes, function_tag, mistral_v11

class TestHermesFunctionTagMistral:
    def test_hermes_array_and_two_objects_in_one_tag(self) -> None:
        arr = '<tool_call>[{"name": "get_time", "arguments": {}}, {"name": "get_weather", "arguments": {"city": "Nice"}}]</tool_call>'
        two = '<tool_call>\n{"name": "get_time", "arguments": {}}\n{"name": "get_weather", "arguments": {"city": "Nice"}}\n</tool_call>'
        for text in (arr, two):
            r = run("a\n" + text + "\nb")
            assert found(r) == [("get_time", {}), ("get_weather", {"city": "Nice"})]
            assert r.content == "a\n\nb"

    def test_hermes_end_tag_inside_a_string_value(self) -> None:
        args = {"path": "x.xml", "content": "<tool_call>inner</tool_call> text"}
        r = run("<tool_call>" + json.dumps({"name": "write_file", "arguments": args}) + "</tool_call>")
        assert found(r) == [("write_file", args)]
        assert r.content == ""

    def test_function_equals_and_name_attribute_forms(self) -> None:
        text = ('<function=get_weather>{"city": "Bern"}</function> and '
                '<function name="search_recipes">{"query": "rösti"}</function>')
        r = run(text)
        assert found(r) == [("get_weather", {"city": "Bern"}), ("search_recipes", {"query": "rösti"})]
        assert r.content == " and "

    def test_function_equals_with_unknown_name_is_text(self) -> None:
        assert_verbatim('<function=launch>{"target": "moon"}</function>')

    def test_mistral_v11_without_args_marker(self) -> None:
        r = run('Sure.[TOOL_CALLS]get_weather{"city": "Lyon", "days": 2}')
        assert found(r) == [("get_weather", {"city": "Lyon", "days": 2})]
        assert r.content == "Sure."

    def test_mistral_v11_unknown_name_is_text(self) -> None:
        assert_verbatim('[TOOL_CALLS]launch{"target": "moon"}')


# =========================================================================== rejected blocks keep their closers

@pytest.mark.parametrize("text", [
    '<{"name": "launch", "arguments": {}}> after',
    "<|python_start|>[launch(a=1)]<|python_end|> after",
    "<|python_start|>[get_weather(city=foo)]<|python_end|> after",
    '```json\n<tool_call>{"name": "launch", "arguments": {}}</tool_call>\n```\nafter',
    "```xml\n<function=launch>\n<parameter=a>\n1\n</parameter>\n</function>\n```\nafter",
])
def test_rejected_block_keeps_its_closer(text: str) -> None:
    assert_verbatim(text)


# =========================================================================== unknown tools, every style

@pytest.mark.parametrize("style", sorted(RENDER))
def test_unknown_tool_name_is_kept_verbatim(style: str) -> None:
    text = "Before.\n" + RENDER[style]("launch_rocket", {"target": "moon"}) + "\nAfter."
    r = run(text)
    assert found(r) == []
    assert r.content == text


# =========================================================================== truncation, every style

@pytest.mark.parametrize("style", sorted(RENDER))
def test_every_prefix_is_text_or_the_complete_call(style: str) -> None:
    """Cut a rendered call anywhere: either nothing is a call and every character comes back,
    or the call is there with its full arguments (never a call with cut-off arguments)."""
    name, args = "get_weather", {"city": "Paris", "days": 12}
    block = RENDER[style](name, args)
    text = "Hi.\n" + block
    for cut in range(len("Hi.\n") + 1, len(text)):
        prefix = text[:cut]
        r = sp.parse(prefix, T)
        if r.tool_calls:
            assert found(r) == [(name, args)], f"cut at {cut}: {prefix!r}"
            # What is text is the prose plus, at most, the unfinished tail (whitespace, a partial closer).
            assert r.content.startswith("Hi.\n") and prefix.endswith(r.content[len("Hi.\n"):]), f"cut at {cut}"
        else:  # every character comes back, but for harmony's role header, which is markup dropped by design
            assert r.content in (prefix, prefix.replace("<|start|>assistant", "", 1)), f"cut at {cut}: {prefix!r}"


# =========================================================================== split markers, every style

def _split_text(style: str) -> str:
    return "Hi <b>.\n" + RENDER[style]("get_weather", {"city": "Zürich", "days": 2}) + "\nBye."


@pytest.mark.parametrize("style", sorted(RENDER))
def test_every_two_way_split_and_char_by_char_match_parse(style: str) -> None:
    text = _split_text(style)
    whole = sp.parse(text, T)
    expected = (whole.content, [(c.name, json.loads(c.arguments)) for c in whole.tool_calls])
    assert expected[1] == [("get_weather", {"city": "Zürich", "days": 2})]
    assert summary(feed_chunks(text, 1, T)) == expected
    for cut in range(1, len(text)):
        assert summary(feed_chunks(text, [cut], T)) == expected, f"split at {cut}: {text[:cut]!r} | {text[cut:]!r}"


@pytest.mark.parametrize("style", sorted(RENDER_SEVERAL))
def test_several_in_one_block_split_anywhere(style: str) -> None:
    expected_calls = [("get_time", {}), ("get_weather", {"city": "Zürich"})]
    text = "Go:\n" + RENDER_SEVERAL[style](expected_calls) + "\nok"
    whole = summary(feed_chunks(text, len(text), T))
    assert whole == ("Go:\n\nok", expected_calls)
    assert summary(feed_chunks(text, 1, T)) == whole
    for cut in range(1, len(text)):
        assert summary(feed_chunks(text, [cut], T)) == whole, f"split at {cut}"


def test_reasoning_and_channels_are_chunking_invariant() -> None:
    text = ("<|channel|>analysis<|message|>Plan: call.<|end|><|start|>assistant"
            + H_CALL.format(name="get_time", args="{}")
            + "<|start|>assistant<|channel|>final<|message|>Done.<|return|>")
    whole = sp.parse(text, T)
    for cut in range(1, len(text)):
        p = sp.StreamParser(T)
        r = sp.ParseResult(p.feed(text[:cut]) + p.feed(text[cut:]) + p.close())
        assert (r.reasoning, r.content, found(r)) == (whole.reasoning, whole.content, found(whole)), f"split at {cut}"
    assert (whole.reasoning, whole.content, found(whole)) == ("Plan: call.", "Done.", [("get_time", {})])
