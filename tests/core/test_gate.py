"""The parser's one gate: a delta holding no character that a token live in the parser's state may begin with is
taken whole by that state's run (prose, a span's text, a value's text) without the machine, and the result is
exactly what the machine gives (same events in the same feeds, any chunking)."""

from __future__ import annotations

import dataclasses
import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import TOOLS, feed_chunks, summary
from streamparse import StreamParser, TextDelta

WEATHER = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
QWEN_HEAD = "Hi\n<tool_call>\n<function=get_weather>\n<parameter=city>\n"


_RUNS: dict[int, list[str]] = {}  # a spied parser's id -> the texts its machine read


class _Spied(StreamParser):
    """A parser whose machine's runs are recorded (the same layout: a parser can be made one in place)."""

    __slots__ = ()

    def _run(self, text: str, final: bool) -> Any:
        _RUNS[id(self)].append(text)
        return super()._run(text, final)


class Spy:
    """Counts the feeds that reach the state machine (``_run``)."""

    def __init__(self, parser: StreamParser) -> None:
        self.runs: list[str] = []
        _RUNS[id(parser)] = self.runs
        parser.__class__ = _Spied


def test_the_prose_fast_path_returns_an_ordinary_text_delta() -> None:
    # The fast path fills TextDelta's one field by hand: that must stay its only field.
    assert [f.name for f in dataclasses.fields(TextDelta)] == ["text"]
    parser = StreamParser(TOOLS)
    parser.feed("Hello")
    events = parser.feed(" world")
    assert events == [TextDelta(" world")]
    assert type(events[0]) is TextDelta and events[0].type == "text"
    assert repr(events[0]) == "TextDelta(text=' world')"


@pytest.mark.parametrize("bad", [None, b"bytes", 3, ["x"]])
def test_a_delta_that_is_not_a_str_is_refused_on_every_path(bad: Any) -> None:
    for head in ["Hello", "Hi\n", "a <", QWEN_HEAD, QWEN_HEAD + "x </fu", 'x\n{"name": "get_weather", "arguments": {"c']:
        parser = StreamParser(TOOLS)
        events = parser.feed(head)
        with pytest.raises(TypeError, match="delta must be str"):
            parser.feed(bad)
        assert parser.feed("") == []
        assert summary(events + parser.feed(" ok") + parser.close()) == summary(feed_chunks(head + " ok", 100))


@pytest.mark.parametrize("lines", [
    ["The ", "answer", " is", " 42, ", "for now."],
    ["Use a {", "dict} and", " a tuple", " mid-line"],
    ["x = a ", "+ b ", "if (a) ", "return (v: T) => v;"],
])
def test_prose_mid_line_with_no_marker_character_never_reaches_the_machine(lines: list[str]) -> None:
    parser = StreamParser(TOOLS)
    assert parser.feed("Hi ") == [TextDelta("Hi ")]  # (the stream's start is a line start: the machine reads it)
    spy = Spy(parser)
    out = [parser.feed(delta) for delta in lines]
    assert spy.runs == []
    assert out == [[TextDelta(delta)] for delta in lines]  # each delta leaves whole, at once


@pytest.mark.parametrize("lines", [
    ["Sure.\n", "The ", "answer", " is\n", "For ", "now.\n", "  Then", " more\n"],
    ["A <div>", "<b>bold</b>", " and ", "<span class='x'>", "</span>\n"],
    ["Use a {", "dict} and", " a [list] ", "mid-line.\n"],  # (a "]" ending a delta may begin MiniMax-M3's marker)
    ["x = a < b\n", "if (a <= b) ", "return <T,>(v: T) => v;\n"],
])
def test_prose_and_markup_that_cannot_be_a_marker_leave_at_once(lines: list[str]) -> None:
    parser = StreamParser(TOOLS)
    out = [parser.feed(delta) for delta in lines]
    assert out == [[TextDelta(delta)] for delta in lines]  # each delta leaves whole, at once


def test_a_marker_prefix_cut_by_a_delta_is_held_and_the_gate_waits_until_it_is_read() -> None:
    parser = StreamParser(TOOLS)
    assert parser.feed("a <") == [TextDelta("a ")]  # "<" may open <tool_call>: held
    assert parser.held_text == "<"
    spy = Spy(parser)
    assert parser.feed("div> b") == [TextDelta("<div> b")]  # (what is held comes first: the machine reads both)
    assert parser.held_text == "" and len(spy.runs) == 1
    assert parser.feed(" c") == [TextDelta(" c")] and len(spy.runs) == 1


def test_a_line_that_may_open_a_line_start_marker_is_held_until_it_cannot() -> None:
    parser = StreamParser(TOOLS)
    assert parser.feed("Ok.\nT") == [TextDelta("Ok.\n")]  # "T" may begin "to=functions."
    assert parser.feed("o") == []
    assert parser.feed("day") == [TextDelta("Today")]
    assert parser.feed("\nfunc") == [TextDelta("\n")]  # may begin "functools"
    assert parser.feed("ky") == [TextDelta("funcky")]


def test_a_brace_mid_line_is_prose_but_at_a_line_start_may_be_a_call() -> None:
    parser = StreamParser(TOOLS)
    spy = Spy(parser)
    assert parser.feed("Here is " + WEATHER + " as text.\n") == [TextDelta("Here is " + WEATHER + " as text.\n")]
    text, found = summary(parser.feed(WEATHER + "\n") + parser.close())
    assert found == [("get_weather", {"city": "Paris"})]


def test_a_pinned_dialect_reads_its_letter_initial_form_mid_line() -> None:
    text = "Sure. functools[" + WEATHER + "] done"
    pinned = summary(feed_chunks(text, 3, dialects=["phi4_mini"]))
    assert pinned == ("Sure.  done", [("get_weather", {"city": "Paris"})])
    assert summary(feed_chunks(text, len(text))) == (text, [])  # auto mode: line starts only


# Pieces chosen around the gates: marker prefixes cut anywhere, line starts, look-alikes and real calls.
PIECES = st.sampled_from([
    "<", "<t", "<to", "<tool_call>", "</tool_call>", "<div>", "<T>", "<{", "<|", "<|python_tag|>", "`", "```", "```json\n",
    "\n", "  ", "\t", "The ", "To ", "to=", "to=functions.get_weather ", "fun", "functools", "functools[", "]",
    "{", "}", "[", "[TOOL_CALLS]", WEATHER, "[" + WEATHER + "]", "<think>", "</think>", "a < b", "prose ", "é ",
])


@pytest.mark.parametrize("dialects", [None, ["phi4_mini"], ["llama3_json"], ["hermes"], ["openai"]])
@settings(max_examples=60, deadline=None)
@given(pieces=st.lists(PIECES, max_size=30), data=st.data())
def test_any_chunking_of_gate_edge_text_gives_the_whole_text_result(dialects: list[str] | None, pieces: list[str],
                                                                     data: st.DataObject) -> None:
    text = "".join(pieces)
    whole = summary(feed_chunks(text, max(len(text), 1), dialects=dialects))
    cuts = data.draw(st.lists(st.integers(min_value=1, max_value=max(len(text) - 1, 1)), max_size=20))
    assert summary(feed_chunks(text, cuts, dialects=dialects)) == whole
    assert summary(feed_chunks(text, 1, dialects=dialects)) == whole


@settings(max_examples=40, deadline=None)
@given(pieces=st.lists(PIECES.filter(lambda p: "think" not in p), max_size=30), data=st.data())
def test_text_that_holds_no_call_comes_back_verbatim(pieces: list[str], data: st.DataObject) -> None:
    text = "".join(p for p in pieces if WEATHER not in p)
    cuts = data.draw(st.lists(st.integers(min_value=1, max_value=max(len(text) - 1, 1)), max_size=20))
    content, found = summary(feed_chunks(text, cuts))
    if not found:
        assert content == text


def test_arguments_are_parsed_once_into_json() -> None:
    found = summary(feed_chunks("ok\n" + WEATHER, 4))[1]
    assert found == [("get_weather", json.loads(WEATHER)["arguments"])]


# ------------------------------------------------------------------ inside a block's body

def test_value_text_with_no_tag_character_never_reaches_the_machine_and_tags_always_do() -> None:
    parser = StreamParser(TOOLS)
    parser.feed(QWEN_HEAD)
    spy = Spy(parser)
    for delta in ["if a ", "and b", " # it ", "ok\n"]:
        assert parser.feed(delta) == []
    assert spy.runs == []  # the value's text: written as it is
    for delta in [" a < b", " <b>x</b>", " <para", "meter=x> </param", "eter> <tool"]:
        assert parser.feed(delta) == []
    assert len(spy.runs) == 5  # a "<" may begin a tag: the machine reads each delta holding one
    assert parser.feed("s> ok\n") == [] and len(spy.runs) == 5  # ("<tool" begins no tag here: nothing was held)
    events = parser.feed("</parameter>\n</function>\n</tool_call>") + parser.close()
    assert summary(events)[1] == [("get_weather", {"city": "if a and b # it ok\n a < b <b>x</b> <parameter=x> "
                                                           "</parameter> <tools> ok"})]


def test_json_string_text_with_no_quote_or_backslash_never_reaches_the_machine() -> None:
    parser = StreamParser(TOOLS)
    parser.feed('Hi\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa')
    spy = Spy(parser)
    for delta in ["ris, ", "{Fr[ance]} ", "<tool_call> "]:  # brackets and markup inside the string are its text
        assert parser.feed(delta) == []
    assert spy.runs == []
    assert parser.feed('\\"x') == [] and len(spy.runs) == 1  # an escape: the machine reads it
    events = parser.feed('"}}\n</tool_call>') + parser.close()
    assert summary(events)[1] == [("get_weather", {"city": 'Paris, {Fr[ance]} <tool_call> "x'})]


def test_a_block_near_its_limit_is_read_by_the_machine() -> None:
    parser = StreamParser(TOOLS, max_block_chars=100)
    parser.feed(QWEN_HEAD)  # (52 characters of the block: room for 47 more)
    spy = Spy(parser)
    parser.feed("x" * 10)
    assert spy.runs == []
    parser.feed("y" * 40)  # past the block's room: the machine cuts it where the limit falls
    assert len(spy.runs) == 1


def test_a_tag_cut_by_a_delta_is_held_and_read_whole_once_complete() -> None:
    parser = StreamParser(TOOLS)
    parser.feed(QWEN_HEAD + "Paris")
    assert parser.feed(" </fu") == []  # a possible </function>: held
    assert parser.feed("nk>") == []  # not a tag after all: part of the value
    # a value's closer is tentative: the machine reads what follows it, and the call waits for the block's end
    assert parser.feed("\n</parameter>\n</fu") == []
    assert parser.feed("nction>\n") == []
    events = parser.feed("</tool_call>")
    assert summary(events)[1] == [("get_weather", {"city": "Paris </funk>"})]


def test_a_streamed_xml_call_starts_in_the_feed_that_shows_a_parameter_after_its_name() -> None:
    parser = StreamParser(TOOLS, stream_arguments=True)
    assert parser.feed("Hi\n<tool_call>\n<function=get_wea") == [TextDelta("Hi\n")]
    assert parser.feed("ther>\n") == []  # the name is complete, but what follows it decides (``<function=f>{}``
    # is an item the whole reader refuses, so no call may start on the name alone)
    assert parser.feed("<param") == []  # a parameter's head, maybe
    started = parser.feed("eter=city>\n")
    assert [e.type for e in started] == ["tool_call_start", "tool_call_delta"]


# ------------------------------------------------------------------ the gate changes nothing

def _counter() -> Any:
    n = iter(range(10**9))
    return lambda: f"call_{next(n)}"


def _per_feed(text: str, cuts: list[int], fast: bool, **options: Any) -> list[list[Any]]:
    """The events of each feed (and of close), through feed() (the gate first) or straight through the machine."""
    parser = StreamParser(TOOLS, id_factory=_counter(), **options)
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(text)}), len(text)]
    out = []
    for a, b in zip(bounds, bounds[1:]):
        delta = text[a:b]
        out.append(parser.feed(delta) if fast else parser._run(parser._held + delta, final=False) if delta else [])
    out.append(parser.close())
    return out


LT_ARGS = {"city": "a <b> </par <c </function x</tool_ <parameter=y> z"}
NESTED_ARGS = {"city": 'q "x" \\ y\n', "days": [1, {"a": ["b", {"c": None}]}, "]}"], "o": {"k": "{[<"}}
SAMPLES = ["qwen3_xml", "qwen3_xml_unwrapped", "hermes", "glm45", "seed_oss", "minimax_m2", "mistral", "pythonic",
           "bare_json", "phi4_mini", "deepseek_v31", "kimi_k3", "harmony_channel", "gemma4", "functiongemma", "olmo3",
           "glm47", "hermes_array"]


@pytest.mark.parametrize("stream_arguments", [False, True])
@settings(max_examples=80, deadline=None)
@given(data=st.data(), pieces=st.lists(st.one_of(PIECES, st.sampled_from(SAMPLES), st.sampled_from(SAMPLES).map(
    lambda style: (style,))), max_size=12))
def test_the_gate_gives_the_same_events_in_the_same_feeds(stream_arguments: bool, data: st.DataObject,
                                                               pieces: list[Any]) -> None:
    from samples import RENDER

    def block(piece: Any) -> str:  # a sample's name: a call with markup in its value; (name,): nested arguments
        if isinstance(piece, tuple):
            return "\n" + RENDER[piece[0]]("get_weather", NESTED_ARGS) + "\n"
        return "\n" + RENDER[piece]("get_weather", LT_ARGS) + "\n" if piece in SAMPLES else piece

    text = "".join(map(block, pieces))
    rng = data.draw(st.randoms(use_true_random=False))
    cuts = list(itertools.accumulate(rng.randint(1, 9) for _ in range(len(text))))  # token-sized deltas
    assert _per_feed(text, cuts, True, stream_arguments=stream_arguments) == \
        _per_feed(text, cuts, False, stream_arguments=stream_arguments)


# ------------------------------------------------------------------ between items, and long marker prefixes

def test_whitespace_and_a_cut_end_tag_after_an_item_wait_for_the_end_tag() -> None:
    parser = StreamParser(TOOLS)
    assert summary(parser.feed(QWEN_HEAD + "Paris\n</parameter>\n</function>"))[1] == []  # what follows decides
    for delta in ["\n", "  \t", "</t", "ool_", "call"]:
        assert parser.feed(delta) == []
    assert parser.held_text == ""  # inside the block: nothing of it is prose yet
    rest = parser.feed(">\nDone.")
    assert summary(rest + parser.close()) == ("\nDone.", [("get_weather", {"city": "Paris"})])


def test_whitespace_and_a_cut_end_marker_after_a_json_call_wait_for_the_marker() -> None:
    parser = StreamParser(TOOLS)
    assert summary(parser.feed("Hi\n<tool_call>\n" + WEATHER))[1] == [("get_weather", {"city": "Paris"})]
    for delta in ["\n", " \t", "</t", "ool_", "call"]:
        assert parser.feed(delta) == []
    rest = parser.feed(">\nDone.") + parser.close()
    assert summary(rest) == ("\nDone.", [])


def test_whitespace_between_items_after_a_settled_item_keeps_the_next_item() -> None:
    parser = StreamParser(TOOLS)
    item = "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>"
    first = parser.feed("Hi\n<tool_call>\n" + item + "\n" + item)
    assert summary(first)[1] == [("get_weather", {"city": "Paris"})]  # the next item's head settled the first
    assert summary(parser.feed("\n</tool_call>"))[1] == [("get_weather", {"city": "Paris"})]


def test_a_second_item_after_whitespace_is_read_by_the_state_machine_once_its_tag_is_whole() -> None:
    parser = StreamParser(TOOLS)
    parser.feed("Hi\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>")
    assert parser.feed("\n<fun") == [] and parser.feed("cti") == []
    events = parser.feed("on=get_weather>\n<parameter=city>\nRome\n</parameter>\n</function>\n</tool_call>") + parser.close()
    assert summary(events) == ("", [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})])


def test_text_that_is_not_a_tag_between_items_ends_the_block_as_the_state_machine_says() -> None:
    text = "Hi\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n  </tox> after"
    whole = summary(feed_chunks(text, len(text)))
    assert whole[1] == [("get_weather", {"city": "Paris"})]
    for size in (1, 2, 3, 5):
        assert summary(feed_chunks(text, size)) == whole


def test_a_marker_prefix_longer_than_the_trigger_looks_is_held_until_it_cannot_be_one() -> None:
    parser = StreamParser(TOOLS)
    parser.feed("Hi.\n")
    assert parser.feed("<too") == [] and parser.feed("l_ca") == []
    assert parser.held_text == "<tool_ca"
    assert parser.feed("ke>") == [TextDelta("<tool_cake>")]  # not a marker after all: one text event


@pytest.mark.parametrize("tags", [
    ("</tool_call>",), ("<a", "<ab>"), ("<｜tool▁call▁begin｜>",), ("</invoke>", "</parameter>"),
])
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_the_gate_search_finds_every_place_a_tag_may_begin(tags: tuple[str, ...], data: st.DataObject) -> None:
    from streamparse.core.literals import first_characters, literals

    noise = st.text(st.sampled_from(list("<>/_=akK\u212a\u0130 \n") + [c for t in tags for c in (t + t.upper())]),
                    max_size=12)
    text = data.draw(noise)
    if first_characters(tags)(text) is None:  # no tag, nor a tag's start cut by the text's end
        reader = literals(tags)
        assert all(reader.at(text, k, len(text), False) is None for k in range(len(text)))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), names=st.lists(st.sampled_from(["get_weather", "search"]), min_size=1, max_size=3),
       gap=st.sampled_from(["", "\n", "\n\n  ", " " * 70, "\n</tool_", "\nx"]))
def test_several_items_in_one_block_give_the_same_events_in_the_same_feeds(data: st.DataObject, names: list[str],
                                                                           gap: str) -> None:
    from samples import RENDER_SEVERAL

    block = RENDER_SEVERAL["qwen3_one_block"]([(n, LT_ARGS) for n in names])
    text = "Hi\n" + block.replace("</function>\n<function=", "</function>" + gap + "<function=") + "\nbye"
    rng = data.draw(st.randoms(use_true_random=False))
    cuts = list(itertools.accumulate(rng.randint(1, 9) for _ in range(len(text))))
    assert _per_feed(text, cuts, True) == _per_feed(text, cuts, False)


@pytest.mark.parametrize("dialect, end", [("functiongemma", "<end_function_call>"), ("gemma4", "<tool_call|>")])
def test_a_long_string_delimiter_is_followed_with_the_end_marker_quoted_inside(dialect: str,
                                                                                                end: str) -> None:
    from samples import RENDER

    text = "Hi\n" + RENDER[dialect]("get_weather", {"city": f"a {end} b"}) + "\nDone."
    whole = summary(feed_chunks(text, len(text)))
    assert whole == ("Hi\n\nDone.", [("get_weather", {"city": f"a {end} b"})])
    for size in (1, 2, 3, 4, 7):
        assert summary(feed_chunks(text, size)) == whole


# ------------------------------------------------------------------ spans

SPAN_PIECES = st.sampled_from([
    "<think>", "</think>", "</THINK>", "</thi", "<|channel|>analysis<|message|>", "<|channel|>final<|message|>",
    "<|end|>", "<|start|>assistant", "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
    '{"city": "Paris"}', "<|call|>", "[THINK]", "[/THINK]", "<|channel>thought", "<channel|>", "<tool_call>",
    "</tool_call>", '{"name": "get_weather", "arguments": {"city": "Oslo"}}', "<", "[", "a < b ", "think ", "\n",
    "  ", "prose ", "é ", "K ", "<|im_end|>",
])


@pytest.mark.parametrize("options", [{}, {"start_in_reasoning": True}, {"start_in_response": True},
                                     {"calls_in_reasoning": True}, {"dialects": ["openai"]},
                                     {"start_in_reasoning": True, "dialects": ["hermes"]}])
@settings(max_examples=60, deadline=None)
@given(pieces=st.lists(SPAN_PIECES, max_size=24), data=st.data())
def test_a_span_s_text_taken_by_the_gate_gives_the_same_events_in_the_same_feeds(
        options: dict[str, Any], pieces: list[str], data: st.DataObject) -> None:
    text = "".join(pieces)
    rng = data.draw(st.randoms(use_true_random=False))
    cuts = list(itertools.accumulate(rng.randint(1, 9) for _ in range(len(text))))
    assert _per_feed(text, cuts, True, **options) == _per_feed(text, cuts, False, **options)


def test_reasoning_text_that_cannot_hold_its_closer_never_reaches_the_machine() -> None:
    parser = StreamParser(TOOLS)
    assert parser.feed("<think>") == []
    runs = Spy(parser).runs
    assert [e.text for e in parser.feed("so the user wants ")] == ["so the user wants "]  # type: ignore[union-attr]
    assert [e.type for e in parser.feed("a city")] == ["reasoning"]
    assert runs == []
    parser.feed(" </thi")  # a closer's first character: the machine reads it
    assert len(runs) == 1


def test_an_item_closer_written_with_a_kelvin_sign_inside_a_value_is_the_value_s_text_whatever_the_feeds() -> None:
    # MiniMax's </invoke> spelled with U+212A: the state machine's search inside a value folds ASCII case only
    head = '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">'
    for deltas in ([head, "Paris</invo\u212ae>\n"], [head, "Paris</invo\u212ae>\n", "more"]):
        text = "".join(deltas)
        parser = StreamParser(TOOLS, id_factory=_counter())
        streamed = [e for d in deltas for e in parser.feed(d)] + parser.close()
        assert summary(streamed) == summary(StreamParser(TOOLS, id_factory=_counter()).read_whole(text))
        assert _per_feed(text, [len(d) for d in itertools.accumulate(deltas)], True) == \
            _per_feed(text, [len(d) for d in itertools.accumulate(deltas)], False)
