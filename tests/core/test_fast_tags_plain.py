"""``FastXmlItem``'s one-match reading of an item with no "<" but its tags gives exactly what its step-by-step
reading gives, on any text built from tag-like fragments (it answers, or it leaves the text to the steps)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from streamparse.dialects import DIALECTS
from streamparse.dialects.fast_tags import FastXmlItem

qwen3_fast, minimax_fast = (DIALECTS[d].markup.fast_item() for d in ("qwen3_coder", "minimax_m2"))

FRAGMENTS = {
    qwen3_fast: ["<function=", "</function>", "<parameter=", "</parameter>", ">", "<", "\n", " ", "a", "b c", "=",
                 "\u2028", "<b>", "</PARAMETER>", "é"],
    minimax_fast: ['<invoke name="', '">', "</invoke>", '<parameter name="', "</parameter>", '"', "'", ">", "<",
                   "\n", " ", "x", "y z"],
}


def stepwise(fast: FastXmlItem, text: str) -> Any:
    """The reading without its one-match shortcut."""
    plain = fast.plain
    try:
        fast.plain = _NEVER
        return fast(text)
    finally:
        fast.plain = plain


class _Never:
    def match(self, text: str) -> None:
        return None


_NEVER: Any = _Never()


def plain_items(fast: FastXmlItem, open_head: str, head_end: str, param: str, param_end: str) -> Any:
    word = st.text(st.sampled_from(["a", "b", " ", "\n", "é", "<", ">", "&", "/"]), max_size=6)
    ws = st.sampled_from(["", "\n", " \n ", "\t"])
    pair = st.tuples(ws, word, word).map(lambda t: f"{t[0]}{param}{t[1]}{param_end}{t[2]}</parameter>")
    return st.tuples(ws, word, st.lists(pair, max_size=4), ws, ws).map(
        lambda t: f"{t[0]}{open_head}{t[1]}{head_end}{''.join(t[2])}{t[3]}{fast.close}{t[4]}")


@settings(max_examples=300, deadline=None)
@given(data=st.data(), fast=st.sampled_from([qwen3_fast, minimax_fast]))
def test_the_one_match_reading_is_the_stepwise_reading_on_fragments(data: Any, fast: FastXmlItem) -> None:
    text = "".join(data.draw(st.lists(st.sampled_from(FRAGMENTS[fast]), max_size=24)))
    assert fast(text) == stepwise(fast, text)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_one_match_reading_is_the_stepwise_reading_on_items(data: Any) -> None:
    for fast, args in ((qwen3_fast, ("<function=", ">", "<parameter=", ">")),
                       (minimax_fast, ('<invoke name="', '">', '<parameter name="', '">'))):
        text = data.draw(plain_items(fast, *args))
        assert fast(text) == stepwise(fast, text), text


def test_an_item_with_no_stray_tag_is_read_by_the_one_match() -> None:
    item = "\n<function=get_weather>\n<parameter=city>\nParis & co\n</parameter>\n<parameter=days>2</parameter>\n</function>\n"
    assert qwen3_fast.plain.match(item) is not None
    assert qwen3_fast(item) == ([("get_weather", {"city": "\nParis & co\n", "days": "2"})], False)
    assert qwen3_fast.plain.match(item.replace("co", "<b>co</b>")) is None  # a "<" in a value: the steps read it
    assert qwen3_fast(item.replace("co", "<b>co</b>")) == ([("get_weather", {"city": "\nParis & <b>co</b>\n",
                                                                               "days": "2"})], False)
