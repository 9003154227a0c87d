"""Property tests: any chunking gives the same result; text without calls comes back byte for byte."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from helpers import feed_chunks, summary
from test_dialects import ARGUMENTS, RENDER

PROSE = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
# Pieces that look like the start (or end) of markup, but never complete a valid call:
# no "name" key, no <function=, no provided tool's tag.
LOOKALIKES = st.sampled_from([
    "<", ">", "{", "}", "[", "]", "`", "```", "```json\n", "\n", " ", '"', "'", "\\",
    "<tool_call>", "</tool_call>", "<TOOL_CALL>", "<tools>", "</tools>", "<function>", "</function>",
    "<think>", "</think>", "<b>", "</b>", "<|im_end|>", "[TOOL_CALLS]", "<{", '{"tool_calls": ', '{"key": 1}',
    '{"arguments": {}}', "<tool_", "</tool_ca", "<thi", "<search", "a < b", "x > y", "é", "東京", "🌧",
])
RENDERED = st.builds(
    lambda style, case: (RENDER[style](*ARGUMENTS[case]), ARGUMENTS[case]),
    st.sampled_from(sorted(RENDER)),
    st.sampled_from(sorted(ARGUMENTS)),
)
CALL_BLOCKS = RENDERED.map(lambda rendered: rendered[0])

MIXED_TEXT = st.lists(
    st.one_of(PROSE, LOOKALIKES, CALL_BLOCKS.map(lambda b: "\n" + b + "\n")), max_size=12
).map("".join)


def cuts_for(text: str) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(min_value=1, max_value=max(1, len(text) - 1)), max_size=40, unique=True)


SETTINGS = settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(data=st.data(), text=MIXED_TEXT)
def test_any_chunking_gives_the_same_text_and_calls(data: st.DataObject, text: str) -> None:
    whole = summary(feed_chunks(text, max(1, len(text))))
    cuts = data.draw(cuts_for(text))
    assert summary(feed_chunks(text, cuts)) == whole
    assert summary(feed_chunks(text, 1)) == whole


@SETTINGS
@given(data=st.data(), text=st.lists(st.one_of(PROSE, LOOKALIKES), max_size=25).map("".join).filter(lambda t: "<think>" not in t.lower()))
def test_text_without_calls_or_reasoning_is_verbatim(data: st.DataObject, text: str) -> None:
    events = feed_chunks(text, data.draw(cuts_for(text)))
    assert all(e.type in ("text", "diagnostic") for e in events)
    assert "".join(e.text for e in events if e.type == "text") == text


@SETTINGS
@given(rendered=st.lists(RENDERED, min_size=1, max_size=5), data=st.data())
def test_every_rendered_call_is_found_in_order(rendered: list[tuple[str, tuple]], data: st.DataObject) -> None:
    text = "Intro.\n" + "\nand\n".join(block for block, _ in rendered) + "\nEnd."
    text_out, found = summary(feed_chunks(text, data.draw(cuts_for(text))))
    assert found == [expected for _, expected in rendered]
    assert text_out == "Intro.\n" + "\nand\n" * (len(rendered) - 1) + "\nEnd."
