"""The whole-text route (``core/whole.py``): for a complete answer it gives exactly the machine's events
(``feed(text) + close()`` on a fresh parser, ids drawn in the same order) or None having changed nothing;
and it is taken for plain prose around strict Hermes blocks, so it cannot pass by always declining."""

from __future__ import annotations

import itertools
import json
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from helpers import TOOLS
from samples import CALL_BLOCKS, LOOKALIKES, PROSE
from streamparse import StreamParser
from streamparse.core.events import Event, TextDelta, ToolCall
from streamparse.core.events import ParseResult
from streamparse.core.parser import parse
from streamparse.core.whole import FreshParser, whole_events
from streamparse.harness.bench_groups import one_call
from streamparse.harness.workloads import build_workload

SETTINGS = settings(max_examples=examples(600), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# TOOLS and a tool with an enum, a required argument and a nested object: typing that reports or changes values
ENUM_TOOL = {"type": "function", "function": {"name": "set_unit", "parameters": {
    "type": "object", "properties": {"unit": {"type": "string", "enum": ["metric", "imperial"]},
                                     "meta": {"type": "object", "properties": {"level": {"type": "integer"}}}},
    "required": ["unit"]}}}
ALL_TOOLS = TOOLS + [ENUM_TOOL]


def counter_ids() -> Callable[[], str]:
    count = itertools.count()
    return lambda: f"call_{next(count)}"


def machine(text: str, tools: Any = ALL_TOOLS, **options: Any) -> list[Event]:
    parser = StreamParser(tools, id_factory=counter_ids(), **options)
    return parser.feed(text) + parser.close()


def fast(text: str, tools: Any = ALL_TOOLS, **options: Any) -> list[Event] | None:
    """The whole-text route's answer; when it declines, the same parser must still give the machine's events
    (nothing was changed: no id drawn, no state moved)."""
    parser = StreamParser(tools, id_factory=counter_ids(), **options)
    events = whole_events(parser, text)
    if events is None:
        assert parser.feed(text) + parser.close() == machine(text, tools, **options)
    return events


def agrees(text: str, tools: Any = ALL_TOOLS, **options: Any) -> list[Event] | None:
    events = fast(text, tools, **options)
    assert events is None or events == machine(text, tools, **options)
    return events


# ----------------------------------------------------------------------------------------------- drawn answers

NAMES = st.sampled_from(["get_weather", "write_file", "search_recipes", "configure", "server.method", "set_unit",
                         "unknown_tool", "Get_Weather", " get_weather", ""])
KEYS = st.sampled_from(["city", "days", "metric", "path", "content", "query", "count", "ratio", "enabled", "nothing",
                        "options", "items", "code", "unit", "meta", "level", "extra"])
STRINGS = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["Paris", "São Paulo", "東京", "</tool_call>", "<tool_call>", "a\\b", 'say "hi"', "line\nbreak",
                     "tab\there", "{", "}]", "```", "<think>", "3", "true", "metric", "METRIC", "\u2028", "\x00"]),
)
SCALARS = st.one_of(STRINGS, st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False),
                    st.booleans(), st.none(), st.just(10**30))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(KEYS, inner, max_size=3)), max_leaves=6)
ARGUMENTS = st.dictionaries(KEYS, VALUES, max_size=4)
SPACES = st.sampled_from(["", "\n", " ", "\n\n", "\r\n", "\t", " " * 32, " " * 33, " " * 64, " " * 65, "\x0b", "\u3000"])


# Clean answers: prose that holds no marker and no line-start word, and strict blocks whose arguments fit their
# schema exactly (every required one written, each value of its declared type). The route must take them.
CLEAN_WORDS = st.sampled_from(["Sure", "here", "is", "what", "I", "found", "Paris", "weather", "ok.", "Done!", "(1)",
                               "a > b", "x = 1;", "é", "東京", "🌧", "#", "-", "*"])
CLEAN_PROSE = st.lists(st.one_of(CLEAN_WORDS, st.sampled_from([" ", "\n", "\n\n", "  "])), max_size=8).map("".join)
CLEAN_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


def _clean_calls() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    weather = st.fixed_dictionaries({"city": CLEAN_TEXT}, optional={"days": st.integers(0, 30), "metric": st.booleans()})
    write = st.fixed_dictionaries({"path": CLEAN_TEXT, "content": st.one_of(CLEAN_TEXT, STRINGS.filter(lambda s: "\x00" not in s))})
    recipes = st.fixed_dictionaries({}, optional={"query": CLEAN_TEXT})
    return st.one_of(weather.map(lambda a: ("get_weather", a)), write.map(lambda a: ("write_file", a)),
                     recipes.map(lambda a: ("search_recipes", a)))


@st.composite
def hermes_block(draw: st.DrawFn) -> str:
    """A Hermes block: half of them strict (a drawn call, drawn whitespace), the others varied in every part."""
    name, arguments = draw(st.one_of(_clean_calls(), st.tuples(NAMES, ARGUMENTS)))
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=draw(st.booleans()),
                      separators=draw(st.sampled_from([(", ", ": "), (",", ":"), (",\n  ", ": ")])))
    if draw(st.booleans()):
        return "<tool_call>" + draw(SPACES) + body + draw(SPACES) + "</tool_call>"
    key = draw(st.sampled_from(["arguments", "parameters", "input", "args", "function"]))
    shape = draw(st.sampled_from(["object", "string arguments", "array", "tool_calls", "nested"]))
    obj: Any = {"name": name, key: arguments}
    if shape == "string arguments":
        obj = {"name": name, "arguments": json.dumps(arguments)}
    elif shape == "array":
        obj = [obj]
    elif shape == "tool_calls":
        obj = {"tool_calls": [obj]}
    elif shape == "nested":
        obj = {"type": "function", "function": {"name": name, "arguments": arguments}}
    body = json.dumps(obj)
    opener = draw(st.sampled_from(["<tool_call>", "<tool_call>", "<TOOL_CALL>", "<tool_call >"]))
    closer = draw(st.sampled_from(["</tool_call>", "</tool_call>", "</TOOL_CALL>", "", "</tool_call"]))
    damage = draw(st.sampled_from(["none", "cut", "garbage", "comma", "two", "comment", "single quotes"]))
    if damage == "cut":
        body = body[: draw(st.integers(0, max(0, len(body) - 1)))]
    elif damage == "garbage":
        body += draw(st.sampled_from([" x", "}", ",", "]", " <b>"]))
    elif damage == "comma":
        body = body.replace("}", ",}", 1)
    elif damage == "two":
        body = body + "\n" + body
    elif damage == "comment":
        body = "// call\n" + body
    elif damage == "single quotes":
        body = body.replace('"', "'")
    return opener + draw(SPACES) + body + draw(SPACES) + closer


PROSE_PIECES = st.one_of(
    CLEAN_PROSE, CLEAN_PROSE, CLEAN_PROSE, PROSE, LOOKALIKES, CALL_BLOCKS,
    st.sampled_from(["\n", "\n\n", " ", "Sure.", "the weather", "t", "fu", "functools", "to=functions.get_weather",
                     '{"name": "get_weather", "arguments": {}}', "[get_weather(city='x')]", "[x", "<get_weather>",
                     "<function=get_weather>", "<|python_tag|>", "<seed:tool_call>", "```json\n", "`code`", "  ",
                     "\t", "\r", "<", "[", "{", "&"]),
)


@st.composite
def answers(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 5))):
        parts += draw(st.lists(PROSE_PIECES, max_size=3))
        parts.append(draw(hermes_block()))
    parts += draw(st.lists(PROSE_PIECES, max_size=3))
    return "".join(parts)


OPTIONS = st.sampled_from([{}, {}, {"dialects": ["hermes"]}, {"dialects": ["qwen25"]}, {"dialects": ["hermes", "qwen3_coder"]},
                           {"max_calls": 2}, {"stream_arguments": True}, {"start_in_reasoning": True},
                           {"calls_in_reasoning": True}, {"max_block_chars": 200}])
TOOL_LISTS = st.sampled_from([ALL_TOOLS, ALL_TOOLS, TOOLS, None, []])


@SETTINGS
@given(text=answers(), tools=TOOL_LISTS, options=OPTIONS)
def test_the_route_gives_the_machine_events_or_declines(text: str, tools: Any, options: dict[str, Any]) -> None:
    agrees(text, tools, **options)


@st.composite
def clean_answers(draw: st.DrawFn) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    text, calls = draw(CLEAN_PROSE), []
    for _ in range(draw(st.integers(0, 5))):
        name, arguments = draw(_clean_calls())
        body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=draw(st.booleans()))
        head, tail = draw(st.sampled_from(["\n", "", " ", "\n\n", "\r\n"])), draw(st.sampled_from(["\n", "", "  \n"]))
        text += f"<tool_call>{head}{body}{tail}</tool_call>" + draw(CLEAN_PROSE)
        calls.append((name, arguments))
    return text, calls


@SETTINGS
@given(answer=clean_answers(), options=st.sampled_from([{}, {"dialects": ["hermes"]}, {"calls_in_reasoning": True}]))
def test_clean_answers_take_the_route(answer: tuple[str, list[tuple[str, dict[str, Any]]]],
                                      options: dict[str, Any]) -> None:
    text, calls = answer
    events = agrees(text, ALL_TOOLS, **options)
    assert events is not None, text
    assert [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)] == calls
    assert [e.id for e in events if isinstance(e, ToolCall)] == [f"call_{k}" for k in range(len(calls))]


# ----------------------------------------------------------------------------------------------- examples

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>'


def test_the_bench_answers_take_the_route() -> None:
    for workload in (one_call("hermes"), build_workload("mixed:hermes")):
        events = agrees(workload.text, workload.tools)
        assert events is not None
        assert sum(isinstance(e, ToolCall) for e in events) == workload.text.count("<tool_call>")


@pytest.mark.parametrize("text", ["", "Just prose.", "Two\n\nparagraphs\n", CALL, "Before.\n" + CALL + "\nAfter.",
                                  CALL + CALL, CALL + "\n\n" + CALL + "\n", "x " + CALL + " y",
                                  '<tool_call>{"name": "write_file", "arguments": {"path": "a", "content": "</tool_call> <think>"}}</tool_call>',
                                  "<tool_call>" + " " * 32 + '{"name": "search_recipes", "arguments": {}}' + " " * 64 + "</tool_call>",
                                  "a <b>bold</b> word and [brackets] and {braces}\n" + CALL])
def test_plain_answers_take_the_route(text: str) -> None:
    assert agrees(text) is not None


def test_text_runs_are_one_event_each_and_the_block_whitespace_is_dropped() -> None:
    events = fast("Before.\n" + CALL + "\nAfter.")
    assert events == [TextDelta("Before.\n"),
                      ToolCall(0, "call_0", "get_weather", '{"city": "Paris", "days": 3}', "hermes"),
                      TextDelta("\nAfter.")]


@pytest.mark.parametrize("text", [
    "<think>hmm</think>" + CALL,  # a span
    CALL.replace('"days": 3', '"days": "3"'),  # coerced
    CALL.replace("Paris", "Paris\x01"),  # a raw control character in a string: read by the relaxed decoder only
    CALL.replace("get_weather", "get_time"),  # unknown tool
    CALL.replace('"city": "Paris", ', ""),  # missing required
    CALL[: -len("</tool_call>")],  # no closer
    CALL.replace("</tool_call>", "</TOOL_CALL>"),
    CALL + "\n<",  # a possible marker cut by the end: the machine holds it to close()
    CALL + "\n" + '{"name": "get_weather", "arguments": {"city": "Oslo"}}',  # bare JSON at a line start
    CALL + '{"name": "get_weather", "arguments": {"city": "Oslo"}}',  # the line counts as blank after a block
    "See [get_weather(city='Oslo')]\n" + CALL,  # mid-line pythonic call: reported
    "```json\n" + CALL + "\n```",  # a fence
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
    '<tool_call>\n[{"name": "get_weather", "arguments": {"city": "Paris"}}]\n</tool_call>',  # an array
    CALL.replace("}}\n", "}},\n"),  # a separator after the value
    CALL.replace('"days": 3', '"days": NaN'),
    CALL.replace("<tool_call>\n", "<tool_call>" + " " * 33),  # past the head's whitespace budget
    CALL.replace("}}\n", "}}" + " " * 65),  # past the gap before the end marker
])
def test_unusual_answers_fall_back(text: str) -> None:
    assert fast(text) is None


@pytest.mark.parametrize("options", [{"stream_arguments": True}, {"start_in_reasoning": True},
                                     {"start_in_response": True}, {"max_calls": 1}, {"max_block_chars": 50},
                                     {"dialects": ["qwen3_coder"]}])
def test_options_the_route_does_not_read_fall_back(options: dict[str, Any]) -> None:
    assert fast(CALL + "\n" + CALL, **options) is None


def test_a_pinned_hermes_and_no_tools_take_the_route() -> None:
    assert agrees(CALL, dialects=["hermes"]) is not None
    assert agrees(CALL, None) is not None
    assert agrees(CALL.replace("get_weather", "anything"), None) is not None  # no tools: any name goes


def test_ids_come_from_the_parser_factory_in_order_and_none_is_drawn_on_decline() -> None:
    drawn: list[str] = []

    def ids() -> str:
        drawn.append(f"id{len(drawn)}")
        return drawn[-1]

    parser = StreamParser(ALL_TOOLS, id_factory=ids)
    events = whole_events(parser, CALL + "\n" + CALL.replace("Paris", "Oslo"))
    assert [e.id for e in events or [] if isinstance(e, ToolCall)] == ["id0", "id1"] == drawn
    assert [e.index for e in events or [] if isinstance(e, ToolCall)] == [0, 1]
    parser = StreamParser(ALL_TOOLS, id_factory=ids)
    assert whole_events(parser, CALL + "<think>") is None
    assert drawn == ["id0", "id1"]


def test_a_used_parser_is_left_to_the_machine() -> None:
    parser = StreamParser(ALL_TOOLS)
    parser.feed("Hello")
    assert whole_events(parser, CALL) is None
    parser.feed(" <tool")
    assert whole_events(parser, CALL) is None


@pytest.mark.parametrize("text", ["hello", 'hi\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
                                  "<tool_call>{broken"])
def test_a_parser_that_read_a_whole_answer_is_closed_whichever_route_read_it(text: str) -> None:
    parser = StreamParser(TOOLS)
    parser.read_whole(text)
    with pytest.raises(RuntimeError):
        parser.feed("x")
    assert parser.close() == []


# ----------------------------------------------------------------------------------------------- parse() with no option

def test_the_fresh_parser_starts_as_a_parser_just_built() -> None:
    """``parse(text, tools)`` with no option reads a clean answer with ``FreshParser``, not a machine: each field
    ``whole_events`` reads is the one ``StreamParser(tools)`` starts with, and its table is the parser's."""
    for tools in (ALL_TOOLS, None, []):
        built, fresh = StreamParser(tools), FreshParser(tools)
        for name in ("_mode", "_resume", "_streaming", "_max_block", "_held", "_look", "_line_blank", "_closed"):
            assert getattr(fresh, name) == getattr(built, name), name
        assert fresh._table is built._table
        assert (fresh._factory.schemas, fresh._factory.max_calls, fresh._factory.count) == (
            built._factory.schemas, built._factory.max_calls, built._factory.count)
        assert fresh._factory.new_id is built._factory.new_id


@SETTINGS
@given(text=answers(), tools=TOOL_LISTS)
def test_parse_with_no_option_gives_the_machines_result(text: str, tools: Any) -> None:
    got, expected = parse(text, tools), ParseResult(machine(text, tools))
    assert (got.content, got.reasoning, [(d.code, d.message) for d in got.diagnostics]) == (
        expected.content, expected.reasoning, [(d.code, d.message) for d in expected.diagnostics])
    assert [(c.index, c.name, c.arguments) for c in got.tool_calls] == [
        (c.index, c.name, c.arguments) for c in expected.tool_calls]
    ids = [c.id for c in got.tool_calls]
    assert len(set(ids)) == len(ids) and all(len(i) == 29 and i.startswith("call_") for i in ids)


def test_parse_takes_the_fresh_route_for_a_clean_answer_and_the_machine_otherwise(monkeypatch: Any) -> None:
    import streamparse.core.parser as parser_mod

    built: list[Any] = []
    real = parser_mod.StreamParser

    class Counted(real):  # type: ignore[misc,valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            built.append(args)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(parser_mod, "StreamParser", Counted)
    assert [c.name for c in parse("Before.\n" + CALL, ALL_TOOLS).tool_calls] == ["get_weather"]
    assert built == []  # no machine for a clean answer
    assert parse('<tool_call>{"name": "nope", "arguments": {}}</tool_call>', ALL_TOOLS).content  # unknown: text
    assert len(built) == 1
