"""The line-start pythonic list ``[name(...)]`` when tools are declared (issue 23, last gap).

The ``[`` opens for a declared name, and also for any identifier (dotted allowed) written directly before
``(``: the elements are then judged one by one, so a declared call leaves and an invented one stays text, in
place, reported. Prose that merely starts with ``[`` is neither held past the character that rules the form
out nor reported; with no tools declared the bare form is not read at all (unless the dialect is pinned).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamparse as sp
from helpers import assert_chunking_invariant, feed_chunks

CIRCLE: dict[str, Any] = {"type": "function", "function": {"name": "draw_circle", "parameters": {
    "type": "object", "properties": {"radius": {"type": "integer"}, "unit": {"type": "string"}}}}}
PLOT: dict[str, Any] = {"type": "function", "function": {"name": "plot", "parameters": {
    "type": "object", "properties": {"start": {"type": "number"}, "end": {"type": "number"}}}}}


def _diagnostics(text: str, tools: Any, size: int = 3, **options: Any) -> list[tuple[str, Any]]:
    return [(d.code, d.details.get("names")) for d in sp.ParseResult(feed_chunks(text, size, tools, **options)).diagnostics]


# --------------------------------------------------------------------------- prose that starts with "["

PROSE = ["[text](https://example.com) is the link.", "[1] Smith, 2020.", "[x, y] are the axes.", "[word] stands alone.",
         "[see foo(x)] for more.", "[word (aside)] here.", "[a-b(c)] is a range.", "[2(x)] twice.", "[a.(x)] odd.",
         "[é(x)] accented.", "[TODO] later", "[ ] an empty box", "[x] done", "["]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("line", PROSE)
def test_prose_starting_with_a_bracket_is_text_and_unreported(line: str, stream: bool) -> None:
    text = f"Intro.\n{line}\nEnd."
    assert assert_chunking_invariant(text, [CIRCLE], stream_arguments=stream) == (text, [])
    assert _diagnostics(text, [CIRCLE], stream_arguments=stream) == []


@pytest.mark.parametrize("prefix, ruled_out", [
    ("[word", " "), ("[word", "] "), ("[word", ","), ("[employee.fetch", " "), ("[text", "]("), ("[1", ""),
    ("[a-", ""), ("[é", ""), ("[x.", "."),
])
def test_held_text_leaves_at_the_character_that_rules_the_list_out(prefix: str, ruled_out: str) -> None:
    """An identifier cut by the delta's end may still be a call and is held; the next character that cannot
    follow it in ``[name(`` releases everything (no other marker is pending: a "]" ending a delta may still begin
    MiniMax-M3's ``]<]minimax[>[``, so the one here is followed by a space)."""
    parser = sp.StreamParser([CIRCLE])
    out = parser.feed(prefix)
    if ruled_out:
        assert sp.ParseResult(out).content == ""  # held: "[name" may still become "[name("
        out += parser.feed(ruled_out)
    assert sp.ParseResult(out).content == prefix + ruled_out
    assert sp.ParseResult(parser.close()).content == ""


def test_an_undeclared_name_holds_until_its_parenthesis_decides() -> None:
    parser = sp.StreamParser([CIRCLE])
    assert parser.feed("[area") == []
    assert [e for e in parser.feed("(width=5") if isinstance(e, sp.TextDelta)] == []  # now a block: held
    events = parser.feed(")]") + parser.close()
    assert sp.ParseResult(events).content == "[area(width=5)]"
    assert [d.code for d in sp.ParseResult(events).diagnostics] == ["unknown_tool"]


def test_mid_line_lists_are_prose() -> None:
    text = "Call [area(width=5), draw_circle(radius=1)] later."
    assert assert_chunking_invariant(text, [CIRCLE]) == (text, [])
    assert _diagnostics(text, [CIRCLE]) == []


# --------------------------------------------------------------------------- lists of calls

@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("text, content, calls", [
    ("[area(width=5), draw_circle(radius=2)]", "area(width=5)", [("draw_circle", {"radius": 2})]),
    ("Here:\n[ area(width=5),draw_circle(radius=2), perimeter(side=1)]\nok",
     "Here:\narea(width=5)perimeter(side=1)\nok", [("draw_circle", {"radius": 2})]),
    ("[pkg.area(w=1), draw_circle(radius=3, unit='m')]", "pkg.area(w=1)", [("draw_circle", {"radius": 3, "unit": "m"})]),
    ("[draw_circle (radius=4)]", "", [("draw_circle", {"radius": 4})]),  # a declared name may have space before "("
], ids=["invented-first", "three-elements", "dotted-first", "declared-with-space"])
def test_a_declared_call_leaves_whatever_comes_before_it(text: str, content: str, calls: list[Any],
                                                         stream: bool) -> None:
    assert assert_chunking_invariant(text, [CIRCLE], stream_arguments=stream) == (content, calls)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("text, names", [
    ("[area(width=5)]", [["area"]]),
    ("[area(width=5), perimeter(side=2)]\nThen prose.", [["area", "perimeter"]]),
    ("[employee.fetch_data(id=3)]", [["employee.fetch_data"]]),
])
def test_no_declared_call_the_block_is_text_once_and_reported(text: str, names: list[Any], stream: bool) -> None:
    assert assert_chunking_invariant(text, [CIRCLE], stream_arguments=stream) == (text, [])
    assert _diagnostics(text, [CIRCLE], stream_arguments=stream) == [("unknown_tool", n) for n in names]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_word_space_parenthesis_is_prose_but_a_call_after_it_still_counts(stream: bool) -> None:
    text = "[area (width=5)]\n[draw_circle(radius=1)]"
    content, calls = assert_chunking_invariant(text, [CIRCLE], stream_arguments=stream)
    assert (content, calls) == ("[area (width=5)]\n", [("draw_circle", {"radius": 1})])
    assert _diagnostics(text, [CIRCLE], stream_arguments=stream) == []


def test_code_in_a_fence_stays_verbatim() -> None:
    """A list comprehension written as code opens the form; it does not read as calls and stays text as written
    (reported as refused: the only cost of reading undeclared names)."""
    text = "Example:\n```python\n[print(x) for x in range(3)]\n```\nDone."
    assert assert_chunking_invariant(text, [CIRCLE]) == (text, [])
    assert [c for c, _ in _diagnostics(text, [CIRCLE])] == ["rejected"]


# --------------------------------------------------------------------------- what has no tools, or is pinned

@pytest.mark.parametrize("text", ["[area(width=5)]", "[area(width=5), draw_circle(radius=2)]"])
def test_no_tools_declared_no_bare_list_is_read(text: str) -> None:
    assert assert_chunking_invariant(text, None) == (text, [])
    assert _diagnostics(text, None) == []


def test_pinned_pythonic_judges_elements_the_same_way() -> None:
    text = "Sure: [area(width=5), draw_circle(radius=2)]"
    content, calls = assert_chunking_invariant(text, [CIRCLE], dialects=["pythonic"])
    assert (content, calls) == ("Sure: area(width=5)", [("draw_circle", {"radius": 2})])


def test_other_dialects_only_no_bare_list() -> None:
    text = "[area(width=5), draw_circle(radius=2)]"
    assert assert_chunking_invariant(text, [CIRCLE], dialects=["hermes", "xlam"]) == (text, [])


# --------------------------------------------------------------------------- streaming == whole text

_PIECES = st.sampled_from(["[", "]", "(", ")", ", ", " ", "\n", "area", "draw_circle", "pkg.", "radius=1", "x",
                           "'", "1", "(url)", "text", "`", "```\n", "-", "=", "."])


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=14), cuts=st.lists(st.integers(1, 60), max_size=5),
       stream=st.booleans())
def test_any_bracket_prose_any_chunking_same_result(pieces: list[str], cuts: list[int], stream: bool) -> None:
    text = "".join(pieces)
    whole = sp.ParseResult(feed_chunks(text, max(len(text), 1), [CIRCLE], stream_arguments=stream))
    cut = sp.ParseResult(feed_chunks(text, cuts, [CIRCLE], stream_arguments=stream))
    one = sp.ParseResult(feed_chunks(text, 1, [CIRCLE], stream_arguments=stream))
    for other in (cut, one):
        assert other.content == whole.content
        assert [(c.name, json.loads(c.arguments)) for c in other.tool_calls] == \
            [(c.name, json.loads(c.arguments)) for c in whole.tool_calls]
        assert [(d.code, d.details) for d in other.diagnostics] == [(d.code, d.details) for d in whole.diagnostics]
    if not whole.tool_calls:
        assert whole.content == text  # nothing lost, nothing doubled


_GOOD = {"draw_circle(radius=1)": ("draw_circle", {"radius": 1}), "draw_circle(unit='m')": ("draw_circle", {"unit": "m"})}
_ELEMENTS = st.sampled_from([*_GOOD, "area(width=5)", "pkg.area(w=1)", "draw_circle(radius=2 * math.pi)"])


@settings(max_examples=100, deadline=None)
@given(before=st.sampled_from(["", "Text.\n", "[1] note\n", "```\n"]), elements=st.lists(_ELEMENTS, min_size=1, max_size=4),
       cuts=st.lists(st.integers(1, 90), max_size=5), stream=st.booleans())
def test_any_list_of_elements_any_chunking(before: str, elements: list[str], cuts: list[int], stream: bool) -> None:
    """Declared, readable elements leave as calls in order; with one, every other element stays text in place;
    with none, the whole block (and a fence line before it) stays text as written."""
    text = before + "[" + ", ".join(elements) + "]\nafter"
    whole = sp.ParseResult(feed_chunks(text, len(text), [CIRCLE], stream_arguments=stream))
    cut = sp.ParseResult(feed_chunks(text, cuts, [CIRCLE], stream_arguments=stream))
    assert (cut.content, [(c.name, c.arguments) for c in cut.tool_calls]) == \
        (whole.content, [(c.name, c.arguments) for c in whole.tool_calls])
    want = [_GOOD[e] for e in elements if e in _GOOD]
    assert [(c.name, json.loads(c.arguments)) for c in whole.tool_calls] == want
    if want:
        assert whole.content == before.replace("```\n", "") + "".join(e for e in elements if e not in _GOOD) + \
            "\nafter"  # a fence line opening the block is the block's
    else:
        assert whole.content == text and whole.diagnostics


# --------------------------------------------------------------------------- rejected blocks carry their details

@pytest.mark.parametrize("text", [
    "[plot(start=0, end=2 * math.pi)]",
    '<tool_call>{"name": "plot", "arguments": {"start": 0, "end": 2 * Math.PI}}</tool_call>',
], ids=["pythonic", "hermes"])
def test_whole_text_rejection_names_the_parameter_as_the_streamed_one_does(text: str) -> None:
    found = {}
    for stream in (False, True):
        diags = sp.ParseResult(feed_chunks(text, len(text), [PLOT], stream_arguments=stream)).diagnostics
        assert [d.code for d in diags] == ["rejected"]
        found[stream] = diags[0].details
    assert found[False]["parameter"] == "end" and found[False]["expression"].lower() == "2 * math.pi"
    assert {k: found[False][k] for k in ("name", "parameter")} == {k: found[True][k] for k in ("name", "parameter")}


@pytest.mark.parametrize("tools", [[CIRCLE], [CIRCLE, PLOT]], ids=["undeclared", "declared"])
def test_prose_after_a_call_in_a_bracket_ends_the_block_at_once(tools: Any) -> None:
    """``[plot(x) is how…``: after an element's ``)`` only a separator or ``]`` may follow, so the first letter of
    prose releases the block (as text, reported) instead of holding it, and all after it, to the stream's end."""
    head, tail = "[plot(x) i", "s how you would draw it.\nAnd more prose follows."
    parser = sp.StreamParser(tools)
    released = "".join(e.text for ch in head for e in parser.feed(ch) if isinstance(e, sp.TextDelta))
    assert released.startswith("[plot(x) ")
    rest = [e for ch in tail for e in parser.feed(ch)] + parser.close()
    assert released + "".join(e.text for e in rest if isinstance(e, sp.TextDelta)) == head + tail
    assert not any(isinstance(e, sp.ToolCall) for e in rest)
    assert_chunking_invariant(head + tail, tools)


@pytest.mark.parametrize(("head", "tail"), [
    ("[Intro(part one\n\n", "Second paragraph, and the answer goes on."),  # a blank line outside strings
    ("[TODO(me]", " fix this later, and the answer goes on."),  # a closer that does not pair
    ("[draw_circle(radius=1]", " oops, and the answer goes on."),  # a declared name: the same rule
])
def test_prose_that_opened_a_python_list_is_released_where_it_cannot_be_one(head: str, tail: str) -> None:
    """Released as text (once, reported) by the delta that rules the list out, never held to the stream's end."""
    parser = sp.StreamParser([CIRCLE])
    released = "".join(e.text for ch in head for e in parser.feed(ch) if isinstance(e, sp.TextDelta))
    assert released == head[:len(released)] and len(released) >= len(head) - 1
    rest = [e for ch in tail for e in parser.feed(ch)] + parser.close()
    assert released + "".join(e.text for e in rest if isinstance(e, sp.TextDelta)) == head + tail
    assert not any(isinstance(e, sp.ToolCall) for e in rest)
    assert_chunking_invariant(head + tail, [CIRCLE])


def test_brackets_nested_in_arguments_still_pair() -> None:
    text = "[draw_circle(radius=[1, (2)]), draw_circle(radius={'a': [3]})]\nok"
    _, calls = assert_chunking_invariant(text, [CIRCLE])
    assert [name for name, _ in calls] == ["draw_circle", "draw_circle"]
