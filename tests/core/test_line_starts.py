"""Where a line starts, the same for a stream and for the whole text (issue 18 §5).

A line starts after ``\\n`` (so after ``\\r\\n`` too), with only spaces and tabs before the marker. ``\\r`` alone,
VT, FF, U+2028 and U+2029 are not line breaks for line-start forms: reading them as blank in one path and
not in the other made a delta ``"\\r"`` followed by ``functools[…]`` a call while the whole text was prose.
"""

from __future__ import annotations

import pytest

from helpers import TOOLS, feed_chunks, summary

CALL = 'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
BARE = '{"name": "get_weather", "parameters": {"city": "Paris"}}'


@pytest.mark.parametrize("before", ["\r", "\x0b", "\x0c", "\u2028", "\u2029", " \r", "\u00a0"])
@pytest.mark.parametrize("form", [CALL, BARE, '[get_weather(city="Paris")]', "[area(width=5), get_weather(city='Paris')]"])
def test_odd_whitespace_before_a_line_start_form_agrees_in_every_chunking(before: str, form: str) -> None:
    text = before + form
    whole = summary(feed_chunks(text, len(text)))
    assert whole == (text, [])  # not a line start: prose, kept as written
    assert summary(feed_chunks(text, [len(before)])) == whole
    assert summary(feed_chunks(text, 1)) == whole


@pytest.mark.parametrize("before", ["", "\n", "\r\n", "text\n", "  \t", "x\r\n \t"])
def test_real_line_starts_are_calls_in_every_chunking(before: str) -> None:
    for form in (CALL, "[area(width=5), get_weather(city='Paris')]"):
        text = before + form
        whole = summary(feed_chunks(text, len(text)))
        assert whole[1] == [("get_weather", {"city": "Paris"})]
        for cut in range(1, len(before) + 2):
            assert summary(feed_chunks(text, [cut])) == whole


def test_two_values_in_one_fence_leave_no_stray_fence() -> None:
    one = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    two = '{"name": "get_weather", "parameters": {"city": "Oslo"}}'
    text = f"Calls:\n```json\n{one}\n{two}\n```\nDone."
    whole = summary(feed_chunks(text, len(text), TOOLS))
    assert whole == ("Calls:\n\nDone.", [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})])
    for size in (1, 3, 7):
        assert summary(feed_chunks(text, size, TOOLS)) == whole
