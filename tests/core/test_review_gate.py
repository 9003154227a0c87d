"""Review of issue 41's gate and machine (one gate beside one table-driven machine).

Two promises are checked here: a delta the gate lets through leaves exactly the events (in the same feed) the
machine would have given for it, and any chunking of a text reads as the whole text does. The edges tried are the
ones a gate built from a token's first character could get wrong: markers that do not begin with ``<`` (Mistral's
``[``, MiniMax-M3's ``]``), markers in another case, non-ASCII case folds (KELVIN SIGN, dotted capital I), string
delimiters longer than one character (Gemma 4, FunctionGemma), a span with no closer, streamed arguments, the
block size limit, calls read inside reasoning. The bracket body's one-match skip of plain text and whole strings
is checked against one-character feeds, where every match covers at most one character.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import TOOLS, feed_chunks, summary
from streamparse import StreamParser
from streamparse.dialects import DIALECTS, SPANS


def _ids() -> Any:
    counter = itertools.count()
    return lambda: f"call_{next(counter)}"


def _feeds(text: str, cuts: list[int], gated: bool, tools: Any = TOOLS, **options: Any) -> list[list[Any]]:
    """Each feed's events then close()'s: through ``feed`` (the gate decides), or always through the machine."""
    parser = StreamParser(tools, id_factory=_ids(), **options)
    edges = [0, *sorted({c for c in cuts if 0 < c < len(text)}), len(text)]
    result = []
    for start, stop in zip(edges, edges[1:]):
        delta = text[start:stop]
        if gated:
            result.append(parser.feed(delta))
        else:
            result.append(parser._run(parser._held + delta, final=False) if delta else [])
    result.append(parser.close())
    return result


def _whole(text: str, tools: Any = TOOLS, **options: Any) -> tuple[str, list[tuple[str, Any]]]:
    return summary(StreamParser(tools, **options).read_whole(text))


def _marker_texts() -> list[str]:
    """Every marker any dialect or span declares, as written, upper-cased and cut in two."""
    found: set[str] = set()
    for d in DIALECTS.values():
        found.update(o.text.replace("{name}", "get_weather") for o in d.openers)
        found.update(d.end or ())
        found.update(d.item or ())
        found.update(d.nest or ())
        found.update(d.strings)
        found.update(d.closers)
        if d.values is not None:
            found.update((*d.values.open, d.values.close, *d.values.next))
    for span in SPANS:
        found.add(span.opener)
        found.update(span.closers)
    pieces = []
    for m in sorted(found):
        pieces += [m, m.upper(), m[: len(m) // 2], m[len(m) // 2 :]]
    return pieces


TRICKY_ARGS = [
    {"city": "Paris"},
    {"city": "a <b> </par <c </function x</tool_ <parameter=y> z ]~ [/ ` ``` // /* */"},
    {"city": 'q "x" \\ y\n', "days": [1, {"a": ["b", {"c": None}]}, "]}"], "o": {"k": "{[<"}},
    {"city": "\u212a\u212a \u0130i \u017f \u0131 caf\u00e9"},
    {"code": "a\n\nb ] [ ) ( ' \\"},
]


def _rendered() -> list[str]:
    from samples import RENDER

    out = []
    for name in sorted(RENDER):
        for args in TRICKY_ARGS:
            try:
                out.append("\n" + RENDER[name]("get_weather", args) + "\n")
            except Exception:  # (a renderer that cannot write such a value: not a case here)
                continue
    return out


MARKERS = _marker_texts()
CHARACTERS = list("{}[]()\"'\\/*<>`~|=:,; \n\t") + ["\u212a", "\u0130", "\u0131", "\u017f", "\u00e9", "K", "k", "\n\n",
                                                       "```", "//", "/*", "*/", "prose ", "get_weather", "city"]
PIECES = st.one_of(st.sampled_from(MARKERS), st.sampled_from(_rendered()), st.sampled_from(CHARACTERS))
OPTIONS = st.sampled_from([
    {}, {"stream_arguments": True}, {"start_in_reasoning": True}, {"start_in_response": True},
    {"calls_in_reasoning": True}, {"calls_in_reasoning": True, "start_in_reasoning": True, "stream_arguments": True},
    {"max_block_chars": 80}, {"max_block_chars": 50, "stream_arguments": True},
])
DIALECT_CHOICE = st.one_of(st.none(), st.sampled_from(sorted(DIALECTS)).map(lambda name: [name]))


# ------------------------------------------------------------------ the gate changes nothing


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(PIECES, min_size=1, max_size=12), options=OPTIONS, dialects=DIALECT_CHOICE,
       with_tools=st.booleans(), data=st.data())
def test_a_delta_the_gate_takes_leaves_what_the_machine_would_in_the_same_feed(
        pieces: list[str], options: dict[str, Any], dialects: list[str] | None, with_tools: bool,
        data: st.DataObject) -> None:
    text = "".join(pieces)
    if dialects is not None:
        options = {**options, "dialects": dialects}
    rng = data.draw(st.randoms(use_true_random=False))
    cuts = list(itertools.accumulate(rng.randint(1, 8) for _ in range(len(text))))
    tools = TOOLS if with_tools else None
    assert _feeds(text, cuts, True, tools, **options) == _feeds(text, cuts, False, tools, **options)


@pytest.mark.parametrize("dialect, marker", [("minimax_m3", "]<]minimax[>[</invoke>"), ("mistral", "[TOOL_CALLS]")])
def test_markers_that_do_not_begin_with_a_bracket_of_angle_reach_the_machine(dialect: str, marker: str) -> None:
    from samples import RENDER

    text = "Hi\n" + RENDER[dialect]("get_weather", {"city": f"a {marker} b ]~ ["}) + "\nDone."
    whole = _whole(text)
    for size in (1, 2, 3, 5, 8):
        assert summary(feed_chunks(text, size)) == whole
        cuts = list(range(size, len(text), size))
        assert _feeds(text, cuts, True) == _feeds(text, cuts, False)


@pytest.mark.parametrize("closer, opener", [("[/THINK]", "[THINK]"), ("[/think]", "[THINK]"),
                                            ("[BEGIN FINAL RESPONSE]",
                                             "<|begin_assistant|>\nHere are my reasoning steps:\n")])
def test_a_span_closer_beginning_with_a_square_bracket_is_never_skipped_by_the_gate(closer: str, opener: str) -> None:
    text = opener + "some thought, a [note] and more " + closer + "Answer."
    whole = StreamParser(None).read_whole(text)
    for size in (1, 2, 3, 4, 7):
        assert summary(feed_chunks(text, size, None)) == summary(whole)
        cuts = list(range(size, len(text), size))
        assert _feeds(text, cuts, True, None) == _feeds(text, cuts, False, None)
    assert summary(whole)[0] == "Answer."


def test_a_span_with_no_closer_takes_every_delta_as_its_text() -> None:
    # Reasoning the prompt opened, with only dialects that declare no reasoning closer nor response opener: no
    # character can end it, so the gate takes every delta; the machine would read them the same way.
    text = "thinking <tool_call> [/THINK] </think> \u212a done"
    options = {"start_in_reasoning": True, "dialects": ["xlam", "hermes"]}
    for size in (1, 3, len(text)):
        cuts = list(range(size, len(text), size))
        assert _feeds(text, cuts, True, None, **options) == _feeds(text, cuts, False, None, **options)


@pytest.mark.parametrize("closer", ["</thin\u212a>", "</TH\u0130NK>", "</THINK>", "</ThInK>"])
def test_non_ascii_look_alikes_of_a_closer_read_the_same_whatever_the_feeds(closer: str) -> None:
    text = "<think>a " + closer + " b</think>c"
    whole = _whole(text)
    for size in (1, 2, 3, 5):
        assert summary(feed_chunks(text, size)) == whole
        cuts = list(range(size, len(text), size))
        assert _feeds(text, cuts, True) == _feeds(text, cuts, False)


@pytest.mark.parametrize("dialect, quote", [("gemma4", '<|"|>'), ("functiongemma", "<escape>")])
@pytest.mark.parametrize("inside", ["a {b} c", "x <tool_call|> y", "<end_function_call>", "\u212a <|\" <esc"])
def test_a_long_string_delimiter_cut_anywhere_reads_as_the_whole_text(dialect: str, quote: str, inside: str) -> None:
    from samples import RENDER

    text = "Hi\n" + RENDER[dialect]("get_weather", {"city": inside}) + "\nDone."
    whole = _whole(text)
    assert whole[1] == [("get_weather", {"city": inside})]
    for size in range(1, 9):
        assert summary(feed_chunks(text, size)) == whole
        assert summary(feed_chunks(text, size, stream_arguments=True)) == whole
        cuts = list(range(size, len(text), size))
        assert _feeds(text, cuts, True, stream_arguments=True) == _feeds(text, cuts, False, stream_arguments=True)


@pytest.mark.parametrize("limit", [40, 60, 75, 90, 200])
@pytest.mark.parametrize("stream_arguments", [False, True])
def test_the_block_limit_falls_where_it_falls_whatever_the_gate_took(limit: int, stream_arguments: bool) -> None:
    body = "<tool_call>\n<function=get_weather>\n<parameter=city>\n" + "abcdefghij" * 12 + "\n</parameter>\n" \
           "</function>\n</tool_call>"
    text = "Hi\n" + body + "\nDone."
    options = {"max_block_chars": limit, "stream_arguments": stream_arguments}
    whole = _whole(text, **options)
    for size in (1, 3, 7, 10, 11, 40):
        cuts = list(range(size, len(text), size))
        assert _feeds(text, cuts, True, **options) == _feeds(text, cuts, False, **options)
        assert summary(feed_chunks(text, size, **options)) == whole


# ------------------------------------------------------------------ the bracket body's skip


BRACKET_STARTS = ["Hi\n<tool_call>\n", "\n[", "\n{", "```json\n", "```\n[", "[TOOL_CALLS]", "<|python_start|>[",
                  "\n[get_weather(", '\n{"name": "get_weather", "arguments": {"city": ']
BRACKET_ATOMS = ["{", "}", "[", "]", "(", ")", '"', "'", "\\", '\\"', "\\'", "//", "/*", "*/", "/", "\n", "\n\n", " ", ",",
                 ":", "<", "</tool_call>", "`", "```", '"name"', '"get_weather"', '"arguments"', '"city"', '"Paris"',
                 "get_weather(", "city=", "'Paris'", '"a\\n\\nb"', '"x</tool_call>y"', "'it''s'", "<|python_end|>",
                 '"a\\\\"', "x", "\u00e9"]


@settings(max_examples=250, deadline=None)
@given(start=st.sampled_from(BRACKET_STARTS), atoms=st.lists(st.sampled_from(BRACKET_ATOMS), min_size=1, max_size=25),
       options=st.sampled_from([{}, {"dialects": ["pythonic"]}, {"dialects": ["hermes"]}, {"stream_arguments": True}]))
def test_a_bracket_body_read_in_runs_reads_as_one_character_at_a_time(start: str, atoms: list[str],
                                                                      options: dict[str, Any]) -> None:
    # One-character feeds make every skip match cover at most one character: the per-character reading.
    text = start + "".join(atoms)
    one_by_one = summary(feed_chunks(text, 1, **options))
    assert _whole(text, **options) == one_by_one
    assert summary(feed_chunks(text, 4, **options)) == one_by_one


@pytest.mark.parametrize("text, expected", [
    ('Hi\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "a</tool_call>b"}}\n</tool_call>',
     [("get_weather", {"city": "a</tool_call>b"})]),  # an end marker inside a string is the string's
    ("Hi\n<tool_call>\n{'name': 'get_weather', 'arguments': {'city': 'x</tool_call>'}}\n</tool_call>", None),
    ('Hi\n<tool_call>\n{"name": "get_weather", // note }\n "arguments": {"city": "P"}}\n</tool_call>', None),
    ('Hi\n<tool_call>\n{"name": "get_weather", /* } ] " */ "arguments": {"city": "P"}}\n</tool_call>', None),
    ('\n[get_weather(city="a\n\nb")]\n', None),  # a blank line in a string (no Python literal: text, whatever the feeds)
    ("\n[get_weather(city='x'),\n\nget_weather(city='y')]\n", None),  # a blank line between calls
    ('```json\n{"name": "get_weather", "arguments": {"city": "a ``` b"}}\n```\n', None),
])
def test_strings_comments_blank_lines_and_fences_read_the_same_in_runs_and_characters(
        text: str, expected: list[tuple[str, Any]] | None) -> None:
    whole = _whole(text)
    if expected is not None:
        assert whole[1] == expected
    for size in (1, 2, 3, 5):
        assert summary(feed_chunks(text, size)) == whole
        cuts = list(range(size, len(text), size))
        assert _feeds(text, cuts, True) == _feeds(text, cuts, False)


# ------------------------------------------------------------------ whole answers, odd input


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(st.one_of(st.sampled_from(_rendered()), st.sampled_from(CHARACTERS)), max_size=6),
       truncated=st.booleans(), options=OPTIONS)
def test_read_whole_is_feed_then_close(pieces: list[str], truncated: bool, options: dict[str, Any]) -> None:
    """A whole answer gives feed + close's events, the same ones in the same order."""
    text = "".join(pieces)
    whole = StreamParser(TOOLS, id_factory=_ids(), **options).read_whole(text, truncated)
    parser = StreamParser(TOOLS, id_factory=_ids(), **options)
    assert whole == parser.feed(text) + parser.close(truncated)


ODD = st.text(st.sampled_from(list("<>[]{}()\"'\\/`|=:~ \n_abkK") + ["\ud800", "\udfff", "\x00", "\u2028", "\r", "\ufeff",
                                                                   "\u0130", "\u212a", "\u00df", "\ufb01", "\uff5c",
                                                                   "\u2581", "\U0001f600"]), max_size=60)


@settings(max_examples=200, deadline=None)
@given(text=ODD, dialects=DIALECT_CHOICE, options=OPTIONS, size=st.integers(1, 7), truncated=st.booleans())
def test_no_input_string_raises(text: str, dialects: list[str] | None, options: dict[str, Any], size: int,
                                truncated: bool) -> None:
    if dialects is not None:
        options = {**options, "dialects": dialects}
    parser = StreamParser(TOOLS, **options)
    for k in range(0, len(text), size):
        parser.feed(text[k : k + size])
    parser.close(truncated)
    StreamParser(TOOLS, **options).read_whole(text, truncated)


# ------------------------------------------------------------------ found: a letter-initial closer cut in two


@pytest.mark.parametrize("closer", ["TO=USER<|MESSAGE|>", "To=user<|message|>"])
def test_an_upper_case_letter_initial_closer_cut_by_a_delta_still_ends_the_reasoning(closer: str) -> None:
    text = "Thinking. " + closer + "Hello"
    whole = _whole(text, None, start_in_reasoning=True)
    assert whole == ("Hello", [])  # the whole text: the response channel opens, its text is content
    assert summary(feed_chunks(text, 1, None, start_in_reasoning=True)) == whole


def test_a_lower_case_letter_initial_closer_cut_by_a_delta_ends_the_reasoning() -> None:
    text = "Thinking. to=user<|message|>Hello"
    for size in (1, 2, 3, 11):
        assert summary(feed_chunks(text, size, None, start_in_reasoning=True)) == ("Hello", [])


@pytest.mark.parametrize("delimiter", ["<ESCAPE>", "<Escape>", "<escape>"])
def test_a_long_string_delimiter_closes_in_the_case_it_opens_in(delimiter: str) -> None:
    """The body scanner opens a string at the delimiter in any case and closes it the same way, so the block's end
    is found after it; the grammar reads the lower-case token only (the model's special token): another case is a
    block kept as text, with the grammar's diagnostic, at every chunking."""
    from samples import RENDER

    block = RENDER["functiongemma"]("get_weather", {"city": "Paris <end_function_call>"}).replace("<escape>", delimiter)
    text = "Hi\n" + block + "\nDone."
    whole = summary(feed_chunks(text, len(text)))
    if delimiter == "<escape>":
        assert whole == ("Hi\n\nDone.", [("get_weather", {"city": "Paris <end_function_call>"})])
    else:
        assert whole == (text, [])  # the end marker quoted in the string did not end the block early
    for size in (1, 3, 7):
        assert summary(feed_chunks(text, size)) == whole
