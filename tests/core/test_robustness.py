"""Robustness: hostile shapes (deep nesting, long runs, huge blocks, many tools) give correct,
chunking-independent results and never raise. No timing assertions here: linearity is
shown by bench/test_bench_robustness.py; a memory bound is a correctness property and is here.
"""

from __future__ import annotations

import json
import random
import tracemalloc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamparse as sp
from budget import examples
from helpers import TOOLS, feed_chunks, summary

Outcome = tuple[str, list[tuple[str, Any]]]


def whole(text: str, tools: Any = TOOLS, **options: Any) -> sp.ParseResult:
    return sp.parse(text, tools, **options)


def outcome(result: sp.ParseResult) -> Outcome:
    return result.content, [(c.name, json.loads(c.arguments)) for c in result.tool_calls]


def stream(deltas: list[str], tools: Any = TOOLS, **options: Any) -> tuple[sp.StreamParser, list[sp.Event]]:
    parser = sp.StreamParser(tools, **options)
    events: list[sp.Event] = []
    for d in deltas:
        events += parser.feed(d)
    return parser, events


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


# --------------------------------------------------------------------------- 1. deep nesting

def _arr(depth: int) -> str:
    return "[" * depth + "]" * depth


def _obj(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


NESTED_SHAPES = {
    "hermes_unknown_name": lambda v: '<tool_call>{"name":"x","arguments":{"a":' + v + "}}</tool_call>",
    "hermes": lambda v: '<tool_call>{"name":"get_weather","arguments":{"a":' + v + "}}</tool_call>",
    "hermes_unclosed": lambda v: '<tool_call>{"name":"get_weather","arguments":{"a":' + v[: len(v) // 2],
    "bare_json": lambda v: 'Text.\n{"name": "get_weather", "arguments": {"a": ' + v + "}}\nMore.",
    "bare_json_unclosed": lambda v: '{"name": "get_weather", "arguments": {"a": ' + v[: len(v) // 2],
    "tools_array": lambda v: '<tools>[{"name": "get_weather", "arguments": {"a": ' + v + "}}]</tools>",
    "tools_array_nested_element": lambda v: "<tools>[" + v + "]</tools>",
    "qwen3_xml": lambda v: "<tool_call>\n<function=get_weather>\n<parameter=a>\n" + v
                           + "\n</parameter>\n</function>\n</tool_call>",
    "qwen3_xml_configure": lambda v: "<tool_call>\n<function=configure>\n<parameter=items>\n" + v
                                     + "\n</parameter>\n</function>\n</tool_call>",
    "pythonic": lambda v: "[get_weather(a=" + v + ")]",
    "pythonic_unclosed": lambda v: "[get_weather(a=" + v[: len(v) // 2],
    "mistral": lambda v: '[TOOL_CALLS][{"name": "get_weather", "arguments": {"a": ' + v + "}}]",
    "name_tag": lambda v: '<get_weather>{"a": ' + v + "}</function>",
    "kimi": lambda v: "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
                      '{"a": ' + v + "}<|tool_call_end|><|tool_calls_section_end|>",
}


@pytest.mark.parametrize("depth", [987, 10**5])
@pytest.mark.parametrize("nest", ["array", "object"])
@pytest.mark.parametrize("shape", sorted(NESTED_SHAPES))
def test_deep_nesting_never_raises_and_never_loses_text(shape: str, nest: str, depth: int) -> None:
    value = _arr(depth) if nest == "array" else _obj(depth)
    text = NESTED_SHAPES[shape](value)
    result = whole(text)
    got = outcome(result)
    assert summary(feed_chunks(text, 7)) == got
    if result.tool_calls:
        assert len(result.tool_calls) == 1
        assert result.tool_calls[0].name == "get_weather" or result.tool_calls[0].name == "configure"
        # whatever is not the call is the text around it, not a piece of the block
        assert result.content in ("", "Text.\n\nMore.")
    else:
        assert result.content == text
        assert result.diagnostics, "a block kept as text says why"


# --------------------------------------------------------------------------- 2. formerly quadratic inputs

N = 100_000
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'


@pytest.mark.parametrize("opener", ["<tool_call>", "[TOOL_CALLS]", "<tools>", "<|python_tag|>", "```json\n"])
@pytest.mark.parametrize("run", [" ", "\n"])
def test_opener_then_long_whitespace_is_text(opener: str, run: str) -> None:
    text = opener + run * N
    assert outcome(whole(text)) == (text, [])
    parser, events = stream(pieces(text, 7))
    assert sp.ParseResult(events).content == text, "nothing is held back once the head has failed"
    assert parser.held_text == ""
    assert summary(events + parser.close()) == (text, [])


def test_call_then_many_newlines_are_released_while_streaming() -> None:
    text = CALL + "\n" * N
    assert outcome(whole(text)) == ("\n" * N, [("get_weather", {"city": "Paris"})])
    parser, events = stream(pieces(text, 7))
    before_close = sp.ParseResult(events)
    assert [c.name for c in before_close.tool_calls] == ["get_weather"]
    # at most the optional-closer gap (MAX_GAP) may wait for more text
    assert len(before_close.content) >= N - 64 - 7
    assert summary(events + parser.close()) == ("\n" * N, [("get_weather", {"city": "Paris"})])


@pytest.mark.parametrize("spaces", [1000, N])
def test_fenced_json_with_long_run_of_spaces_in_a_string(spaces: int) -> None:
    city = "A" + " " * spaces + "B"
    text = "Here:\n```json\n" + json.dumps({"name": "get_weather", "arguments": {"city": city}}) + "\n```\nDone."
    expected = ("Here:\n\nDone.", [("get_weather", {"city": city})])
    assert outcome(whole(text)) == expected
    assert summary(feed_chunks(text, 7)) == expected
    assert summary(feed_chunks(text, 4096)) == expected


def _call_obj(i: int) -> str:
    return json.dumps({"name": "get_weather", "arguments": {"city": f"C{i}"}})


def test_tools_array_with_a_non_call_then_2000_calls() -> None:
    text = "<tools>[1, " + ", ".join(_call_obj(i) for i in range(2000)) + "]</tools>"
    result = whole(text, max_calls=10_000)
    got = outcome(result)
    assert got[1] == [("get_weather", {"city": f"C{i}"}) for i in range(2000)]
    # the element that is not a call is kept as text, once; nothing else but punctuation
    assert got[0].count("1") == 1
    assert got[0].strip(" ,[]") == "1" or got[0].replace(",", "").replace(" ", "") == "[1]"
    assert summary(feed_chunks(text, 7, max_calls=10_000)) == got
    assert summary(feed_chunks(text, 997, max_calls=10_000)) == got


def test_tools_array_2000_calls_past_max_calls_keeps_the_rest_as_text() -> None:
    text = "<tools>[1, " + ", ".join(_call_obj(i) for i in range(2000)) + "]</tools>"
    result = whole(text)  # default max_calls=1000
    assert len(result.tool_calls) == 1000
    assert result.content.count('"name"') == 1000
    assert summary(feed_chunks(text, 7)) == outcome(result)


def _many_tools(n: int) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": f"tool_{i}", "parameters": {"type": "object", "properties": {}}}}
            for i in range(n)] + TOOLS


def test_ten_thousand_tools_name_tag() -> None:
    tools = _many_tools(10_000)
    text = ("Before <b>bold</b> a < b.\n<tool_9999>{\"a\": 1}</function> mid <tool_0>{\"b\": [2]}</tool_0>"
            " and <tool_10000>{\"c\": 3}</function> end <get_weather>{\"city\": \"Oslo\"}</get_weather>")
    expected = ("Before <b>bold</b> a < b.\n mid  and <tool_10000>{\"c\": 3}</function> end ",
                [("tool_9999", {"a": 1}), ("tool_0", {"b": [2]}), ("get_weather", {"city": "Oslo"})])
    assert outcome(whole(text, tools)) == expected
    for size in (1, 4, 7):
        assert summary(feed_chunks(text, size, tools)) == expected


def test_ten_thousand_tools_prose_streams_through() -> None:
    tools = _many_tools(10_000)
    prose = "The quick <b>brown</b> fox <tool_ jumps <tool_99 over <tool_99999> the dog. " * 200
    parser, events = stream(pieces(prose, 4), tools)
    assert len(parser.held_text) < 64
    assert summary(events + parser.close()) == (prose, [])


# --------------------------------------------------------------------------- 3. feed("") changes nothing

EMPTY_FEED_TEXTS = [
    '<tool_call>{"name": "write_file", "arguments": {"path": "a\\\\", "content": "say \\"hi\\" \\\\\\" \\u00e9"}}</tool_call>',
    "[write_file(path='a\\\\', content='it\\'s \\\\')]",
    "Hi <think>hmm</think> <tool_call>\n<function=write_file>\n<parameter=path>\nx\n</parameter>\n"
    "<parameter=content>\na \\\" b\n</parameter>\n</function>\n</tool_call> bye",
    '```json\n{"name": "write_file", "arguments": {"path": "\\\\\\"", "content": "\\\\"}}\n```\ntail',
]


@pytest.mark.parametrize("text", EMPTY_FEED_TEXTS)
def test_empty_feed_anywhere_changes_nothing(text: str) -> None:
    expected = outcome(whole(text))
    assert expected[1], "the sample holds a call"
    for i in range(len(text) + 1):
        parser, events = stream([text[:i], "", text[i:], ""])
        assert summary(events + parser.close()) == expected, f"cut at {i}: {text[:i]!r} | {text[i:]!r}"
    # an empty delta between every two characters
    parser, events = stream([x for ch in text for x in (ch, "")])
    assert summary(events + parser.close()) == expected


def test_empty_feed_between_halves_of_an_escape() -> None:
    head = '<tool_call>{"name": "write_file", "arguments": {"path": "p", "content": "a'
    tail = '"}}</tool_call>'
    for body in ('\\"', "\\\\", '\\\\\\"', "\\n\\"):
        text = head + body + ("" if body.endswith("\\") and body.count("\\") % 2 else "") + tail
        expected = outcome(whole(text))
        for i in range(len(head), len(head) + len(body) + 1):
            parser, events = stream([text[:i], "", "", text[i:]])
            assert summary(events + parser.close()) == expected, f"cut at {i}"
            parser, events = stream([text[:i], "", text[i : i + 1], "", text[i + 1 :]])
            assert summary(events + parser.close()) == expected, f"cut at {i}, {i + 1}"


# --------------------------------------------------------------------------- 4. no duplicated text

K = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
U = '{"name": "launch_rockets", "arguments": {"n": 3}}'
NON_CALLS = [U, "1", '"zzz"', "[" + U + "]", "null", '{"arguments": {}}']


@pytest.mark.parametrize("wrap", [("[TOOL_CALLS][", "]"), ("<tools>[", "]</tools>"), ("<tool_call>[", "]</tool_call>"),
                                  ("<|tool_call|>[", "]"), ("<tool_calls>[", "]</tool_calls>")])
@pytest.mark.parametrize("junk", NON_CALLS)
@pytest.mark.parametrize("order", ["junk_first", "junk_last", "junk_between"])
def test_non_call_element_next_to_a_call_appears_once(wrap: tuple[str, str], junk: str, order: str) -> None:
    elements = {"junk_first": [junk, K], "junk_last": [K, junk], "junk_between": [K, junk, K]}[order]
    text = "Go: " + wrap[0] + ", ".join(elements) + wrap[1] + " ok"
    result = whole(text)
    got = outcome(result)
    n_calls = elements.count(K)
    assert got[1] == [("get_weather", {"city": "Paris"})] * n_calls
    assert got[0].count(junk) == 1, got[0]
    assert got[0].count('"get_weather"') == 0
    assert got[0].startswith("Go: ") and got[0].endswith(" ok")
    assert any(d.code in ("unknown_tool", "rejected") for d in result.diagnostics)
    for size in (1, 3, 7):
        assert summary(feed_chunks(text, size)) == got


@pytest.mark.parametrize("wrap", [("<tool_call>", "</tool_call>"), ("<|python_tag|>", "")])
def test_several_objects_one_unknown_appears_once(wrap: tuple[str, str]) -> None:
    sep = "; " if wrap[0] == "<|python_tag|>" else ""
    for elements in ([U, K], [K, U], [K, U, K]):
        text = wrap[0] + sep.join(elements) + wrap[1]
        got = outcome(whole(text))
        assert got[0].count(U) == 1, (text, got)
        assert len(got[1]) == elements.count(K)
        assert summary(feed_chunks(text, 2)) == got


# --------------------------------------------------------------------------- 5. max_block_chars, any chunking

def _block_of_length(n: int) -> str:
    pre, post = '<tool_call>{"name": "get_weather", "arguments": {"city": "', '"}}</tool_call>'
    return pre + "P" * (n - len(pre) - len(post)) + post


LIMIT_BLOCKS = {
    "hermes124": _block_of_length(124),
    "qwen3": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
    "pythonic": '[get_weather(city="Paris", days=3)]',
    "bare": '{"name": "get_weather", "arguments": {"city": "Paris"}}',
    "tools2": "<tools>[" + K + ", " + K.replace("Paris", "Oslo") + "]</tools>",
    "fenced": "```json\n" + K + "\n```",
    "mistral2": "[TOOL_CALLS][" + K + ", " + K + "]",
    "kimi": "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
            '{"city": "Rome"}<|tool_call_end|><|tool_calls_section_end|>',
    "glm": "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Lima</arg_value>\n</tool_call>",
}


def _diag_codes(events: list[sp.Event]) -> list[str]:
    return [e.code for e in events if isinstance(e, sp.Diagnostic)]


@pytest.mark.parametrize("name", sorted(LIMIT_BLOCKS))
def test_max_block_chars_is_chunking_independent(name: str) -> None:
    block = LIMIT_BLOCKS[name]
    assert name != "hermes124" or len(block) == 124
    text = "Hi.\n" + block + "\nBye."
    rng = random.Random(name)
    for limit in range(max(1, len(block) - 24), len(block) + 7):
        result = whole(text, max_block_chars=limit)
        expected = outcome(result)
        codes = [d.code for d in result.diagnostics]
        if limit == len(block) - 24:
            assert "block_too_large" in codes, limit
        if limit >= len(block):
            assert expected[1], limit
        chunkings: list[Any] = [1, 2, 3, 5, 7, 13] + [rng.sample(range(1, len(text)), rng.randint(1, 12)) for _ in range(4)]
        for size in chunkings:
            events = feed_chunks(text, size, max_block_chars=limit)
            assert summary(events) == expected, f"limit {limit}, chunking {size}"
            assert _diag_codes(events) == codes, f"limit {limit}, chunking {size}"


@pytest.mark.parametrize("limit", range(100, 131))
def test_max_block_chars_124_char_block(limit: int) -> None:
    block = _block_of_length(124)
    expected = outcome(whole(block, max_block_chars=limit))
    completes_at = block.index("}}</tool_call>") + 2  # the call leaves here, before its end tag
    assert bool(expected[1]) == (limit >= completes_at)
    if not expected[1]:
        assert expected[0] == block
    for size in (1, 2, 3, 5, 7, 13, 123, 124, 125):
        assert summary(feed_chunks(block, size, max_block_chars=limit)) == expected, f"chunk size {size}"


@pytest.mark.parametrize("tail", ["", "\n", " \nBye."])
def test_complete_block_within_the_limit_is_not_reported_too_large(tail: str) -> None:
    for name, block in sorted(LIMIT_BLOCKS.items()):
        for limit in (len(block), len(block) + 1):
            result = whole(block + tail, max_block_chars=limit)
            assert result.tool_calls, (name, limit)
            assert "block_too_large" not in [d.code for d in result.diagnostics], (name, limit, block + tail)


def test_parse_of_a_3mb_call_is_rejected_like_streaming() -> None:
    big = '<tool_call>{"name": "write_file", "arguments": {"path": "a", "content": "' + "x" * 3_000_000 + '"}}</tool_call>'
    text = "Start\n" + big + "\nEnd " + CALL
    result = whole(text)
    assert [d.code for d in result.diagnostics][:1] == ["block_too_large"]
    expected = ("Start\n" + big + "\nEnd ", [("get_weather", {"city": "Paris"})])
    assert outcome(result) == expected
    for size in (4096, 65536, 1 << 20):
        assert summary(feed_chunks(text, size)) == expected


# --------------------------------------------------------------------------- 6. memory

MIB = 1 << 20
_VALUE = ("lorem ipsum dolor\n" * (MIB // 18 + 1))[:MIB]
_HERMES_VALUE = _VALUE[: (MIB - 200) * 18 // 19]  # each 18-char line is 19 chars once JSON-escaped
_QWEN3_VALUE = _VALUE[: MIB - 200]
MEMORY_CASES = {
    "hermes": ('<tool_call>{"name": "write_file", "arguments": {"path": "a.txt", "content": '
               + json.dumps(_HERMES_VALUE) + "}}</tool_call>", _HERMES_VALUE),
    "qwen3": ("<tool_call>\n<function=write_file>\n<parameter=path>\na.txt\n</parameter>\n<parameter=content>\n"
              + _QWEN3_VALUE + "\n</parameter>\n</function>\n</tool_call>", _QWEN3_VALUE),
}


@pytest.mark.parametrize("name", sorted(MEMORY_CASES))
def test_one_mib_block_streamed_in_4_char_deltas_peaks_below_8x(name: str) -> None:
    text, value = MEMORY_CASES[name]
    assert MIB - 300 < len(text) <= MIB  # a ~1 MiB block, under the default limit
    deltas = pieces(text, 4)
    whole(CALL)  # warm caches (marker table, grammars) outside the measurement
    tracemalloc.start()
    try:
        parser, events = stream(deltas)
        events += parser.close()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    calls = sp.ParseResult(events).tool_calls
    assert [c.name for c in calls] == ["write_file"]
    assert calls[0].parsed_arguments["content"].strip("\n") == value.strip("\n")
    assert peak <= 8 * len(text), f"peak {peak / len(text):.1f}x the block"


# --------------------------------------------------------------------------- 7. parse() never raises on any str

_ALPHABET = list("{}[]()<>\"'\\:;,=`|/ \n\tabcxyz019._-") + ["é", "東", "🌧", "\x00", "\ufeff", "｜", "▁", "\u2028"]
_MARKERS = ["<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter=", "[TOOL_CALLS]", "<tools>",
            "<think>", "<|python_tag|>", "<|channel|>", "to=functions.", "get_weather", '"name"', '"arguments"', "```json\n"]


def _random_str(rng: random.Random) -> str:
    out = []
    for _ in range(rng.randint(0, 60)):
        r = rng.random()
        if r < 0.6:
            out.append(rng.choice(_ALPHABET))
        elif r < 0.8:
            out.append(rng.choice(_MARKERS))
        else:  # any code point that makes a valid str (no lone surrogates)
            c = rng.randint(0, 0x10FFFF)
            out.append(chr(c) if not 0xD800 <= c <= 0xDFFF else "x")
    return "".join(out)


def test_parse_never_raises_on_random_strings() -> None:
    rng = random.Random(7)
    for _ in range(examples(5000)):
        text = _random_str(rng)
        for tools in (TOOLS, None):
            result = whole(text, tools)
            assert isinstance(result.content, str)
            # and streaming in random pieces doesn't raise either
            cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, 5)))
            feed_chunks(text, cuts, tools)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",))))
def test_parse_never_raises_hypothesis(text: str) -> None:
    for tools in (TOOLS, None):
        whole(text, tools)


_HUGE = "1" + "0" * 5000  # past Python's 4300-digit limit for int()


@pytest.mark.parametrize("text", [
    '<tool_call>{"name": "get_weather", "arguments": {city: %s}}</tool_call>' % _HUGE,
    '<tool_call>{"name": "get_weather", "arguments": {"city": %s}}</tool_call>' % _HUGE,
    '<tool_call>{"name": "get_weather", "arguments": {"city": 1e999}}</tool_call>',
    '<tool_call>{"name": "get_weather", "arguments": {"city": -Infinity}}</tool_call>',
    '<tool_call>{"name": "get_weather", "arguments": {"city": NaN}}</tool_call>',
    "[get_weather(city=%s)]" % _HUGE,
    "[get_weather(city=1e999)]",
])
def test_numbers_json_cannot_carry_are_never_a_call_and_never_raise(text: str) -> None:
    """int() refuses 5000 digits and 1e999 is inf: either would crash the decode or write invalid JSON."""
    for tools in (None, TOOLS):
        result = sp.parse(text, tools)
        assert result.tool_calls == [] and result.content == text


def test_an_out_of_range_xml_value_stays_a_string() -> None:
    schema_tool = [{"type": "function", "function": {"name": "count", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer"}, "x": {"type": "number"}}}}}]
    text = f"<tool_call>\n<function=count>\n<parameter=n>\n{_HUGE}\n</parameter>\n<parameter=x>\n1e999\n</parameter>\n</function>\n</tool_call>"
    (call,) = sp.parse(text, schema_tool).tool_calls
    assert json.loads(call.arguments) == {"n": _HUGE, "x": "1e999"}


# --------------------------------------------------------------------------- whitespace after a complete call

@pytest.mark.parametrize("dialect", ["qwen3_coder", "seed_oss", "minimax_m2", "claude_xml", "deepseek_v32", "kimi_k3"])
def test_whitespace_after_a_complete_tagged_call_waits_no_longer_than_a_held_tail(dialect: str) -> None:
    """A call complete inside its block (values and item closed: Qwen3's ``</function>``, ``</invoke>``...), then
    20,000 newlines and no block end: the call leaves once the whitespace passes the gap budget (64), and from
    then on every newline leaves as it comes; streamed in any pieces, the same as the whole text."""
    from streamparse.core.gaps import MAX_GAP
    from streamparse.dialects.render import render

    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    rendered = render(dialect, "get_weather", {"city": "Paris"})
    call, block_end = rendered.rsplit("\n", 1)  # the block's end on its own last line
    parser = sp.StreamParser(tools, dialects=[dialect])
    assert not [e for e in parser.feed(call) if isinstance(e, sp.ToolCall)]  # what follows the item closer decides
    released, longest_wait, call_at = 0, 0, None
    for n in range(1, 20_001):
        events = parser.feed("\n")
        released += sum(e.text.count("\n") for e in events if isinstance(e, sp.TextDelta))
        if call_at is None and any(isinstance(e, sp.ToolCall) for e in events):
            call_at = n
        longest_wait = max(longest_wait, n - released)
    assert call_at == MAX_GAP + 1 and longest_wait <= MAX_GAP and released == 20_000
    for ending in ("", block_end, "Done.", "\n" + rendered):
        for gap in (MAX_GAP, MAX_GAP + 1, 3 * MAX_GAP, 20_000):
            text = call + "\n" * gap + ending
            result = sp.parse(text, tools, dialects=[dialect])
            whole = (result.content, [(c.name, json.loads(c.arguments)) for c in result.tool_calls])
            assert whole[1][0] == ("get_weather", {"city": "Paris"})
            for size in (1, 3, 64, 65):
                assert summary(feed_chunks(text, size, tools, dialects=[dialect])) == whole, (ending, gap, size)
