"""Strings a repaired JSON reading gives back are pieces the model wrote whole, never text it wrote apart.

``loads_relaxed`` removes comments, closes what was left open and drops stray closers; none of that may reach
inside a string (a ``//`` or ``/* */`` between quotes is the string's text) or make one string of two pieces
of text that stood apart. Without backslashes in the text, decoding changes nothing, so every string the
reading yields (key or value, at any depth) must appear in the text as it stands.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from streamparse.arguments.relaxed_json import ArgumentError, loads_relaxed


def strings_in(value: Any) -> Iterator[str]:
    """Every ``str`` in a decoded value: keys and values, at any depth (an ``Expression`` is not one)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            for k, item in v.items():
                yield k
                stack.append(item)
        elif isinstance(v, list):
            stack.extend(v)


@pytest.mark.parametrize(("text", "expected"), [
    # a comment marker between quotes is the string's own text, on the repair path too
    ('{"a": "3<//param>", b: 1,}', {"a": "3<//param>", "b": 1}),
    ("{'a': 'x /* y */ z', 'b': [1,]}", {"a": "x /* y */ z", "b": [1]}),
    ('{"a": "open // never closed', {"a": "open // never closed"}),
    # a comment between two strings leaves them two strings
    ('{"a": "x", // "b": "y"\n "c": "z",}', {"a": "x", "c": "z"}),
    ('["x" /* , */, "y",]', ["x", "y"]),
])
def test_comment_markers_inside_strings_are_text(text: str, expected: Any) -> None:
    assert loads_relaxed(text) == (expected, True)


@pytest.mark.parametrize("text", [
    '{"a": x // c\n y}',  # two bare words a comment stood between: never one value "x y"
    '{"a": "x" /* c */ "y"}',  # two strings a comment stood between: never one string "xy"
    '{"a": ab/* c */cd}',
    '{a/* c */b: 1}',  # a key is never made of two words either
    '{a]b: 1}',  # a stray closer leaves a space, as a block comment does
])
def test_pieces_a_removed_comment_or_closer_stood_between_are_refused_not_joined(text: str) -> None:
    with pytest.raises(ArgumentError, match="not JSON, even relaxed"):
        loads_relaxed(text, expressions=True)


# Model-written JSON as tokens: strings of both quote kinds whose text holds comment markers and the other
# quote, bare keys, numbers, Python literals, trailing commas; no backslash anywhere.
TEXT = st.lists(st.sampled_from(["a", " ", "//", "/*", "*/", "<", ">", "é", "\n", "'", '"', ":", ",", "{", "]"]),
                max_size=6).map("".join)
BARE = st.sampled_from(["a", "k_1", "New", "York", "True", "null", "7", "$x"])


@st.composite
def quoted(draw: st.DrawFn) -> list[str]:
    quote = draw(st.sampled_from(['"', "'"]))
    return [quote + draw(TEXT).replace(quote, "") + quote]


SCALARS = st.one_of(quoted(), st.sampled_from(["1", "-2.5", "+3", "true", "False", "None", "New"]).map(lambda t: [t]))


def members(children: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    pair = st.tuples(st.one_of(quoted(), BARE.map(lambda t: [t])), children).map(lambda kv: kv[0] + [":"] + kv[1])
    return st.tuples(st.lists(pair, min_size=1, max_size=4), st.booleans()).map(
        lambda ps: ["{"] + [t for i, p in enumerate(ps[0]) for t in ([","] if i else []) + p]
        + ([","] if ps[1] else []) + ["}"])


def items(children: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    return st.lists(children, max_size=4).map(
        lambda vs: ["["] + [t for i, v in enumerate(vs) for t in ([","] if i else []) + v] + ["]"])


VALUES = st.recursive(SCALARS, lambda children: st.one_of(members(children), items(children)), max_leaves=12).flatmap(
    lambda value: st.one_of(members(st.just(value)), items(st.just(value))))  # the whole is an object or an array
# What may stand between two tokens (up to two of them): mostly nothing, spacing or a whole comment of either
# kind, sometimes a bare word or a stray piece (a lone comment marker, closer, comma, fence).
GAPS = st.sampled_from(["", "", "", " ", "\n", "\x0b", "// c\n", "/* c */", "/**/"] * 4
                       + ["x", "9", "//x", "/*", "*/", "/", "}", "]", ",", "```"])


@st.composite
def written(draw: st.DrawFn) -> str:
    tokens = draw(VALUES)
    text = "".join(tok + "".join(draw(st.lists(GAPS, max_size=2))) for tok in tokens)
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]  # cut, as a stream or a size limit cuts
    if draw(st.booleans()):
        text = "```json\n" + text + "\n```"
    return text


def only_written_strings(text: str, expressions: bool) -> None:
    """Every string the relaxed reading of ``text`` yields (if it reads) stands in ``text`` as it is."""
    try:
        value, _ = loads_relaxed(text, expressions=expressions)
    except ArgumentError:
        return
    for s in strings_in(value):
        assert s in text, f"{s!r} is not in {text!r}"


@settings(max_examples=examples(800), deadline=None)
@given(written(), st.booleans())
def test_every_string_a_relaxed_reading_yields_was_written_whole(text: str, expressions: bool) -> None:
    only_written_strings(text, expressions)


# Two pieces of text with something a repair removes between them, where a key, a value or an item stands.
PIECE = st.one_of(BARE, quoted().map("".join), st.sampled_from(["1", "-2.5", "true", "New York"]))
REMOVED = st.sampled_from(["/**/", "/* c */", "// c\n", "//\n", "}", "]", ",", "/*", "//", "```"])
PLACES = st.sampled_from(["{%s: 1}", '{"k": %s}', "[%s]", "{%s", '{"k": %s', "[1, %s", "```json\n{%s: 1}\n```"])


@settings(max_examples=examples(2000), deadline=None)
@given(PIECE, REMOVED, PIECE, PLACES)
def test_what_a_repair_removes_never_joins_the_pieces_on_either_side(first: str, removed: str, second: str,
                                                                    place: str) -> None:
    only_written_strings(place % (first + removed + second), expressions=True)
