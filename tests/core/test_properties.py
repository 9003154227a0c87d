"""Property tests: any chunking gives the same result; text without calls comes back byte for byte."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from helpers import feed_chunks, summary
from samples import LOOKALIKES, MIXED_TEXT, PROSE, RENDERED, cuts_for
from streamparse.dialects import SPANS

SETTINGS = settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(data=st.data(), text=MIXED_TEXT)
def test_any_chunking_gives_the_same_text_and_calls(data: st.DataObject, text: str) -> None:
    whole = summary(feed_chunks(text, max(1, len(text))))
    cuts = data.draw(cuts_for(text))
    assert summary(feed_chunks(text, cuts)) == whole
    assert summary(feed_chunks(text, 1)) == whole


@SETTINGS
@given(data=st.data(), text=st.lists(st.one_of(PROSE, LOOKALIKES), max_size=25).map("".join).filter(
    lambda t: not any(span.opener.lower() in t.lower() for span in SPANS)))  # a span opener is markup, not prose
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
