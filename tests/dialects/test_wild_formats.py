"""Formats seen in the wild (issue 30, §4): Claude-style XML, <tool_use> blocks, Llama 3.1's built-in calls, and the
two named-only ones, Functionary v3.2 and ReAct.

Every case is read whole and fed in pieces of 1, 2, 3 and 7 characters, and all readings must agree. Around the
calls: the text before and after is kept, several calls come out in order, a call to a tool nobody declared stays
text, and markup quoted inside a string value stays in the value. The named-only dialects are never read in auto
mode (no dialects given), only when named. The dialects that share an opener with these (``olmo3``'s
``<function_calls>``, ``llama3_json``'s ``<|python_tag|>``) keep reading their own forms.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamparse as sp
from budget import examples
from helpers import TOOLS, feed_chunks, summary
from streamparse.arguments.grammar import load_grammar
from streamparse.dialects import ALIASES, DIALECTS, REGISTRY, resolve
from streamparse.dialects.render import NAMED_ONLY_RENDERERS, RENDERERS, render
from streamparse.prompting.requests import PROMPT_DIALECTS, prompt_request

WILD = ["claude_xml", "tool_use", "llama31_builtin", "functionary_v32", "react"]
NAMED_ONLY = ["functionary_v32", "react"]
SIZES = (1, 2, 3, 7)

Calls = list[tuple[str, Any]]


def read(text: str, tools: Any = TOOLS, **options: Any) -> tuple[str, Calls]:
    """(content, calls) of ``text`` read whole; every chunking in ``SIZES`` must read the same."""
    whole = summary(feed_chunks(text, max(len(text), 1), tools, **options))
    for size in SIZES:
        assert summary(feed_chunks(text, size, tools, **options)) == whole, f"pieces of {size}"
    return whole


def named(dialect: str) -> dict[str, Any]:
    """The options that read ``dialect``: auto mode, unless it is named-only."""
    return {"dialects": [dialect]} if dialect in NAMED_ONLY else {}


# --------------------------------------------------------------------------- the registry

def test_each_format_is_declared_with_its_grammar_template_renderer_and_sources() -> None:
    from streamparse.arguments.grammar import grammar_text

    for dialect in WILD:
        d = DIALECTS[dialect]
        assert d.grammar == dialect and "Source:" in grammar_text(dialect)
        assert dialect in PROMPT_DIALECTS
        assert dialect in (NAMED_ONLY_RENDERERS if dialect in NAMED_ONLY else RENDERERS)
        assert d.named_only == (dialect in NAMED_ONLY)
    names = list(DIALECTS)
    start = names.index(WILD[0])
    assert names[start : start + len(WILD)] == WILD  # appended after every earlier declaration (issue 42's follow)


def test_auto_mode_leaves_the_named_only_dialects_out_and_naming_one_brings_it_in() -> None:
    auto = resolve(None)
    assert set(auto) == {d for d in DIALECTS if d not in NAMED_ONLY}
    assert REGISTRY.resolve(None) == auto
    assert resolve(["functionary", "react_json"]) == ["functionary_v32", "react"]  # aliases name them too
    assert ALIASES["langchain_react"] == "react" and ALIASES["claude"] == "claude_xml"


# --------------------------------------------------------------------------- one call, text around, every chunking

ONE = {  # dialect -> a call to get_weather as the model writes it
    "claude_xml": '<function_calls>\n<invoke name="get_weather">\n<parameter name="city">Lyon</parameter>\n'
                  '<parameter name="days">3</parameter>\n</invoke>\n</function_calls>',
    "tool_use": '<tool_use>\n  <name>get_weather</name>\n  <arguments>{"city": "Lyon", "days": 3}</arguments>\n</tool_use>',
    "llama31_builtin": '<|python_tag|>get_weather.call(city="Lyon", days=3)<|eom_id|>',
    "functionary_v32": '>>>get_weather\n{"city": "Lyon", "days": 3}',
    "react": 'Action: get_weather\nAction Input: {"city": "Lyon", "days": 3}',
}


@pytest.mark.parametrize("dialect", WILD)
def test_one_call_with_text_before_and_after(dialect: str) -> None:
    text = "Let me look that up.\n" + ONE[dialect] + "\nI will report back."
    assert read(text, **named(dialect)) == ("Let me look that up.\n\nI will report back.",
                                            [("get_weather", {"city": "Lyon", "days": 3})])
    assert [c.dialect for c in sp.parse(text, TOOLS, **named(dialect)).tool_calls] == [dialect]


@pytest.mark.parametrize("dialect", WILD)
def test_pinned_and_without_tools_the_call_is_still_read(dialect: str) -> None:
    content, found = read(ONE[dialect], None, dialects=[dialect])
    assert content == "" and found == [("get_weather", {"city": "Lyon", "days": "3" if dialect == "claude_xml" else 3})]


SEVERAL = {  # dialect -> two calls, in one block where the format allows it
    "claude_xml": '<function_calls>\n<invoke name="get_weather">\n<parameter name="city">Oslo</parameter>\n</invoke>\n'
                  '<invoke name="search_recipes">\n<parameter name="query">soup</parameter>\n</invoke>\n</function_calls>',
    "tool_use": '<tool_use><name>get_weather</name><arguments>{"city": "Oslo"}</arguments></tool_use>\n'
                '<tool_use><name>search_recipes</name><arguments>{"query": "soup"}</arguments></tool_use>',
    "llama31_builtin": '<|python_tag|>get_weather.call(city="Oslo")<|eom_id|>\n'
                       "<|python_tag|>search_recipes.call(query='soup')<|eom_id|>",
    "functionary_v32": '>>>get_weather\n{"city": "Oslo"}>>>search_recipes\n{"query": "soup"}',
    "react": 'Thought: two things to do.\nAction: get_weather\nAction Input: {"city": "Oslo"}\n'
             'Action: search_recipes\nAction Input: {"query": "soup"}',
}


@pytest.mark.parametrize("dialect", WILD)
def test_several_calls_come_out_in_order(dialect: str) -> None:
    content, found = read("On it.\n" + SEVERAL[dialect], **named(dialect))
    assert found == [("get_weather", {"city": "Oslo"}), ("search_recipes", {"query": "soup"})]
    assert content.strip() == ("On it.\nThought: two things to do." if dialect == "react" else "On it.")


UNDECLARED = {dialect: text.replace("get_weather", "launch_rocket") for dialect, text in ONE.items()}


@pytest.mark.parametrize("dialect", WILD)
def test_a_call_to_an_undeclared_tool_stays_text(dialect: str) -> None:
    text = "Before.\n" + UNDECLARED[dialect] + "\nAfter."
    assert read(text, **named(dialect)) == (text, [])
    assert read(text, dialects=[dialect]) == (text, [])


# --------------------------------------------------------------------------- markup quoted in a value

QUOTED = {  # dialect -> markup of its own (and of its neighbours) that a string value quotes
    "claude_xml": 'x </parameter> y </invoke> z </function_calls> <invoke name="a"> w',
    "tool_use": "x </arguments> y </name> z </tool_use> <tool_use><name>a</name> w",
    "llama31_builtin": 'x <|eom_id|> y ") z <|python_tag|>b.call(q=1) w',
    "functionary_v32": 'x >>>all\n y >>>get_weather\n{"city": "Q"} w',
    "react": 'x\nAction: get_weather\nAction Input: {"city": "Q"}\nObservation: w',
}


@pytest.mark.parametrize("dialect", WILD)
def test_markup_quoted_inside_a_string_value_stays_in_the_value(dialect: str) -> None:
    args = {"path": "notes.md", "content": QUOTED[dialect]}
    text = "Writing it.\n" + render(dialect, "write_file", args) + "\nDone."
    assert read(text, **named(dialect)) == ("Writing it.\n\nDone.", [("write_file", args)])


@pytest.mark.parametrize("dialect", WILD)
def test_streamed_arguments_join_to_the_whole_value(dialect: str) -> None:
    args = {"path": "notes.md", "content": QUOTED[dialect]}
    text = render(dialect, "write_file", args)
    for size in (*SIZES, len(text)):
        events = feed_chunks(text, size, TOOLS, dialects=[dialect], stream_arguments=True)
        pieces = "".join(e.arguments_fragment for e in events if isinstance(e, sp.ToolCallDelta))
        assert json.loads(pieces) == args and summary(events) == ("", [("write_file", args)]), size


def test_claude_xml_value_keeps_its_own_closers_when_written_by_hand() -> None:
    value = "if a < b:\n    print('</parameter> stays')"  # (a newline next to a value's tag is layout, as in MiniMax)
    text = ('<function_calls><invoke name="write_file"><parameter name="path">a.py</parameter>'
            f'<parameter name="content">{value}</parameter></invoke></function_calls>')
    assert read(text) == ("", [("write_file", {"path": "a.py", "content": value})])


# --------------------------------------------------------------------------- renderers: complete exactly at their offset

@pytest.mark.parametrize("dialect", WILD)
@pytest.mark.parametrize("args", [{"city": "Zürich", "days": 2, "metric": True}, {}, {"city": 'say "hi"\n<b>'}])
def test_the_renderer_reads_back_and_the_call_leaves_at_its_offset(dialect: str, args: dict[str, Any]) -> None:
    table = NAMED_ONLY_RENDERERS if dialect in NAMED_ONLY else RENDERERS
    text, end = table[dialect]("get_weather", args)
    parser = sp.StreamParser(TOOLS, **named(dialect))
    assert not [e for e in parser.feed(text[: end - 1]) if isinstance(e, sp.ToolCall)]
    done = [e for e in parser.feed(text[end - 1 : end]) if isinstance(e, sp.ToolCall)]
    assert [(c.name, json.loads(c.arguments)) for c in done] == [("get_weather", args)]


WRITE = [{"type": "function", "function": {"name": "write_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}}]
MARKERS = ["<function_calls>", "</function_calls>", "<invoke", "</invoke>", "<parameter", "</parameter>", "<tool_use>",
           "</tool_use>", "<name>", "</arguments>", "<|python_tag|>", "<|eom_id|>", ".call(", ">>>", ">>>all\n",
           "Action:", "Action Input:", "{", "}", '"', "'", "\\", "\n"]
WORDS = st.text(alphabet="ab yz=\n", max_size=5)


@pytest.mark.parametrize("dialect", WILD)
@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_value_made_of_markup_parses_back_to_what_was_rendered(dialect: str, data: st.DataObject) -> None:
    parts = data.draw(st.lists(st.tuples(WORDS, st.sampled_from(MARKERS), WORDS), min_size=1, max_size=4))
    text_values = DIALECTS[dialect].text_values
    # (an item's closer then the block's end, quoted in a raw-text value, is the value's: a value never closed holds
    # the block's end until the end of the stream, as one met in a value)
    value = " ".join(f"{a}{m}{b}" for a, m, b in parts).strip() or "v"
    if text_values:  # raw-text values: layout and the raw-text rules (see test_quoted_markup)
        value = "w " + value.replace("\n", " ") + " w"
    args = {"path": "a.py", "content": value}
    text = render(dialect, "write_file", args)
    size = data.draw(st.integers(1, 9))
    for chunk in (len(text), size):
        assert summary(feed_chunks(text, chunk, WRITE, dialects=[dialect])) == ("", [("write_file", args)]), (text, chunk)


# --------------------------------------------------------------------------- named only

PLAIN = {
    "react": 'Thought: I should look.\nAction: get_weather\nAction Input: {"city": "Paris"}\nObservation:',
    "functionary_v32": 'Sure.\n>>>get_weather\n{"city": "Paris"}',
}


@pytest.mark.parametrize("dialect", NAMED_ONLY)
def test_auto_mode_leaves_a_named_only_format_as_text_even_with_tools(dialect: str) -> None:
    text = PLAIN[dialect]
    assert read(text) == (text, [])  # no dialects given, tools given
    assert sp.parse(text, TOOLS).tool_calls == []
    assert sp.parse(text).tool_calls == []


@pytest.mark.parametrize("dialect", NAMED_ONLY)
def test_naming_a_named_only_format_reads_it(dialect: str) -> None:
    for dialects in ([dialect], [dialect, "hermes"], [DIALECTS[dialect].aliases[0]], [*resolve(None), dialect]):
        content, found = read(PLAIN[dialect], dialects=dialects)
        assert found == [("get_weather", {"city": "Paris"})], dialects
        assert "get_weather" not in content


def test_a_prompted_named_only_dialect_is_read_back_and_the_others_stay_out() -> None:
    payload = {"messages": [{"role": "user", "content": "weather?"}], "tools": TOOLS}
    prompted = prompt_request(payload, "react")
    assert prompted.dialects[0] == "react" and "functionary_v32" not in prompted.dialects
    result = sp.parse(PLAIN["react"], prompted.tools, **prompted.parser_options())
    assert [(c.name, c.parsed_arguments) for c in result.tool_calls] == [("get_weather", {"city": "Paris"})]
    other = prompt_request(payload, "hermes")
    assert not set(NAMED_ONLY) & set(other.dialects)


def test_react_reads_a_line_start_action_and_leaves_the_rest_of_the_loop_as_text() -> None:
    text = ('Question: the weather in Rome?\nThought: I need the weather.\nAction: get_weather\n'
            'Action Input: {"city": "Rome"}\nObservation: sunny\nThought: done.\nFinal Answer: It is sunny.')
    content, found = read(text, dialects=["react", "hermes"])
    assert found == [("get_weather", {"city": "Rome"})]
    assert content == ("Question: the weather in Rome?\nThought: I need the weather.\n\nObservation: sunny\n"
                       "Thought: done.\nFinal Answer: It is sunny.")


def test_react_input_that_is_not_a_json_object_stays_text() -> None:
    text = "Action: search_recipes\nAction Input: soup with leeks"
    assert read(text, dialects=["react"]) == (text, [])


def test_react_mid_line_is_read_only_when_react_is_the_one_dialect_named() -> None:
    text = 'I will now act. Action: get_weather\nAction Input: {"city": "Rome"}'
    assert read(text, dialects=["react", "hermes"]) == (text, [])
    assert read(text, dialects=["react"]) == ("I will now act. ", [("get_weather", {"city": "Rome"})])


def test_functionary_all_opens_plain_content_and_calls_follow_back_to_back() -> None:
    text = '>>>all\nChecking both.>>>get_weather\n{"city": "Rome"}>>>get_weather\n{"city": "Milan"}'
    assert read(text, dialects=["functionary_v32"]) == (
        "Checking both.", [("get_weather", {"city": "Rome"}), ("get_weather", {"city": "Milan"})])
    assert read(">>>all\nJust text, no call.", dialects=["functionary"]) == ("Just text, no call.", [])


def test_functionary_leaves_prose_arrows_and_a_python_prompt_alone() -> None:
    text = "In the REPL:\n>>> print(1)\nand >>>> quoted mail >>> lines"
    assert read(text, dialects=["functionary_v32"]) == (text, [])


# --------------------------------------------------------------------------- Claude-style XML

def test_claude_bare_invoke_without_the_wrapper() -> None:
    text = 'Sure.\n<invoke name="get_weather">\n<parameter name="city">Kyiv</parameter>\n</invoke>\nDone.'
    assert read(text) == ("Sure.\n\nDone.", [("get_weather", {"city": "Kyiv"})])
    assert [c.dialect for c in sp.parse(text, TOOLS).tool_calls] == ["claude_xml"]


def test_claude_values_are_typed_by_the_schema() -> None:
    text = ('<function_calls><invoke name="configure"><parameter name="count">7</parameter>'
            '<parameter name="enabled">false</parameter><parameter name="items">[1, "two"]</parameter>'
            '<parameter name="code">007</parameter></invoke></function_calls>')
    assert read(text) == ("", [("configure", {"count": 7, "enabled": False, "items": [1, "two"], "code": "007"})])


def test_olmo3_still_owns_function_calls_followed_by_python_lines() -> None:
    text = '<function_calls>\nget_weather(city="Paris", days=2)\n</function_calls>'
    assert read(text) == ("", [("get_weather", {"city": "Paris", "days": 2})])
    assert [c.dialect for c in sp.parse(text, TOOLS).tool_calls] == ["olmo3"]
    assert [c.dialect for c in sp.parse(ONE["claude_xml"], TOOLS).tool_calls] == ["claude_xml"]


def test_the_wrapper_followed_by_prose_stays_text() -> None:
    text = "Write <function_calls> then <invoke> elements, as the docs say."
    assert read(text) == (text, [])


@settings(max_examples=examples(200), deadline=None)
@given(name=st.from_regex(r"[a-z_][a-z0-9_]{0,9}", fullmatch=True),
       params=st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,9}", fullmatch=True),
                              st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1,
                                      max_size=30).filter(lambda v: "<" not in v and v.strip() == v and v),
                              max_size=4))
def test_claude_decoder_agrees_with_its_grammar(name: str, params: dict[str, str]) -> None:
    item = f'<invoke name="{name}">\n' + "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in params.items())
    item += "</invoke>"
    call = next(load_grammar("claude_xml").parse(item).find_data("call"))  # Lark's own reading of the grammar
    by_grammar = (str(call.children[0]).split('"')[1],
                  {str(p.children[0]).split('"')[1]: str(p.children[1]) for p in call.find_data("param")})
    assert DIALECTS["claude_xml"].decode(item, None) == ([by_grammar], False) == ([(name, params)], False)


# --------------------------------------------------------------------------- <tool_use>

@pytest.mark.parametrize("name_tag, args_tag", [("name", "arguments"), ("name", "input"), ("tool_name", "tool_input"),
                                                ("tool_name", "parameters"), ("NAME", "Arguments")])
def test_tool_use_spellings_in_the_wild(name_tag: str, args_tag: str) -> None:
    text = (f'<tool_use>\n<{name_tag}>get_weather</{name_tag}>\n<{args_tag}>{{"city": "Lima"}}</{args_tag}>\n'
            "</tool_use>")
    assert read("Ok.\n" + text) == ("Ok.\n", [("get_weather", {"city": "Lima"})])


def test_tool_use_without_arguments_and_cut_before_its_closing_tag() -> None:
    assert read("<tool_use><name>search_recipes</name></tool_use>") == ("", [("search_recipes", {})])
    assert read('<tool_use><name>get_weather</name><arguments>{"city": "Lima"}</arguments>') == (
        "", [("get_weather", {"city": "Lima"})])  # a stop sequence may strip </tool_use>


def test_tool_use_in_prose_is_prose() -> None:
    text = "Anthropic answers with a <tool_use> block; see the docs."
    assert read(text) == (text, [])


# --------------------------------------------------------------------------- Llama 3.1 built-in tools

BUILTIN = [
    {"type": "function", "function": {"name": "brave_search", "parameters": {
        "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}},
    {"type": "function", "function": {"name": "wolfram_alpha", "parameters": {
        "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}},
    {"type": "function", "function": {"name": "code_interpreter", "parameters": {
        "type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}}},
]


@pytest.mark.parametrize("text, expected", [
    # Meta's prompt-format examples
    ('<|python_tag|>brave_search.call(query="current weather in Menlo Park, California")<|eom_id|>',
     ("brave_search", {"query": "current weather in Menlo Park, California"})),
    ('<|python_tag|>wolfram_alpha.call(query="solve x^3 - 4x^2 + 6x - 24 = 0")<|eom_id|>',
     ("wolfram_alpha", {"query": "solve x^3 - 4x^2 + 6x - 24 = 0"})),
    # llama.cpp's test-chat.cpp, and the stop token stripped by a server
    ("<|python_tag|>code_interpreter.call(code=\"print('hey')\")", ("code_interpreter", {"code": "print('hey')"})),
])
def test_llama31_builtin_calls_as_meta_and_llama_cpp_write_them(text: str, expected: tuple[str, Any]) -> None:
    assert read(text, BUILTIN) == ("", [expected])
    assert [c.dialect for c in sp.parse(text, BUILTIN).tool_calls] == ["llama31_builtin"]


def test_llama3_json_still_owns_the_python_tag_followed_by_an_object() -> None:
    text = '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}'
    assert read(text) == ("", [("get_weather", {"city": "Paris"})])
    assert [c.dialect for c in sp.parse(text, TOOLS).tool_calls] == ["llama3_json"]


def test_llama31_raw_code_and_a_call_without_call_stay_text() -> None:
    for text in ('<|python_tag|>print("hi")<|eom_id|>', "<|python_tag|>import math\nprint(math.pi)<|eom_id|>"):
        assert read(text, BUILTIN) == (text, [])


def test_llama31_builtin_arguments_hold_python_and_json_literals() -> None:
    text = "<|python_tag|>configure.call(count=3, enabled=True, nothing=None, options={'a': [1, null]})<|eom_id|>"
    assert read(text) == ("", [("configure", {"count": 3, "enabled": True, "nothing": None,
                                              "options": {"a": [1, None]}})])


def test_the_new_grammars_build() -> None:
    for dialect in WILD:
        assert load_grammar(DIALECTS[dialect].grammar) is not None
