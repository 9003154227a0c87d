"""Surrogate escapes in an upstream stream: a pair split between events is one character, a lone half is U+FFFD,
and the stream always ends well, however the upstream cut its UTF-16 code units."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

import budget
from streamparse.wire.sse import ChatStreamRewriter, SSEDecoder


def _units(text: str) -> list[str]:
    """``text`` as JSON string content, one escaped UTF-16 code unit per item."""
    raw = text.encode("utf-16-be")
    return [f"\\u{raw[i]:02x}{raw[i + 1]:02x}" for i in range(0, len(raw), 2)]


def _event(content: str) -> bytes:
    return ('data: {"id": "c", "choices": [{"index": 0, "delta": {"content": "' + content
            + '"}, "finish_reason": null}]}\n\n').encode()


def _content(raw: bytes) -> str:
    return "".join(c["delta"].get("content") or "" for e in SSEDecoder().feed(raw) if e.data and e.data != "[DONE]"
                   for c in json.loads(e.data).get("choices", []))


@settings(max_examples=budget.examples(200), deadline=None)
@given(st.text(alphabet=st.sampled_from("ab \U0001f600\U0001f680é<>"), max_size=12), st.data())
def test_split_pairs_are_joined_for_any_cut(text: str, data: st.DataObject) -> None:
    units = _units(text)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(units)), max_size=6)))
    pieces = ["".join(units[a:b]) for a, b in zip([0, *cuts], [*cuts, len(units)])]
    for tools in (None, [{"type": "function", "function": {"name": "f"}}]):
        rewriter = ChatStreamRewriter(tools, request={"tools": tools} if tools else None)
        raw = b"".join(rewriter.feed_bytes(_event(p)) for p in pieces) + rewriter.feed_bytes(b"data: [DONE]\n\n")
        expected = text if text.strip() else ""  # text of only whitespace is no content (test_blank_runs.py)
        assert _content(raw) == expected and raw.endswith(b"data: [DONE]\n\n")


def test_lone_halves_become_replacement_characters() -> None:
    rewriter = ChatStreamRewriter(None)
    raw = b"".join(rewriter.feed_bytes(_event(p)) for p in ["a \\ud800", " b \\udc00", "\\ud83d"])
    raw += rewriter.end_bytes()
    assert _content(raw) == "a \ufffd b \ufffd\ufffd" and raw.endswith(b"data: [DONE]\n\n")
