"""Whitespace between calls is layout, not content: a stream and a whole answer agree on it.

Found by the BFCL harness: Qwen2.5-Coder-0.5B wrote two pythonic calls on two lines; the whole answer had
no content and the stream had ``"\\n"``. A run of text that is only whitespace (before the first call,
between two, after the last) is no content in either mode; text with anything else keeps every character.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

from anthropic_samples import completion, text_chunks
from helpers import TOOLS
from streamparse.wire import openai as sp_openai

CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
SNIPPETS = [CALL, "\n", " ", "\n\n", "Hi", " there\n", "\t"]


def streamed(deltas: list[str]) -> tuple[Any, int]:
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in sp_openai.rewrite_stream_sync(text_chunks(deltas), TOOLS):
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    message = state.get_final_completion().choices[0].message
    return message.content or None, len(message.tool_calls or [])


def whole(text: str) -> tuple[Any, int]:
    message = sp_openai.rewrite_completion(completion(text), TOOLS)["choices"][0]["message"]
    return message.get("content"), len(message.get("tool_calls") or [])


def test_two_calls_on_two_lines_have_no_content() -> None:
    text = CALL + "\n" + CALL
    assert whole(text) == (None, 2)
    for size in (1, 3, len(CALL), len(text)):
        assert streamed([text[i:i + size] for i in range(0, len(text), size)]) == (None, 2)


def test_text_keeps_its_own_whitespace() -> None:
    text = "Let me look.\n" + CALL + "\n\n" + CALL + "\n  Done.  "
    assert whole(text) == ("Let me look.\n\n  Done.  ", 2)
    assert streamed(list(text)) == ("Let me look.\n\n  Done.  ", 2)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(SNIPPETS), max_size=7), st.lists(st.integers(0, 600), max_size=10))
def test_stream_and_whole_agree_on_any_chunking(parts: list[str], cuts: list[int]) -> None:
    text = "".join(parts)
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(text)), len(text)]
    deltas = [text[a:b] for a, b in zip(bounds, bounds[1:])] or [""]
    assert streamed(deltas) == whole(text)
