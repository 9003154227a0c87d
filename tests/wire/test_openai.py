"""OpenAI wire format: chunk streams and completions, validated with the real openai types."""

from __future__ import annotations

import json
from typing import Any, Iterable, Iterator

import anyio
import pytest
from openai import AsyncOpenAI, OpenAI
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from helpers import TOOLS, aiter_of
from streamparse import aparse
from streamparse.wire import openai as sp_openai
from streamparse.proxy.runner import ServerThread
from upstreams import scripted_upstream

HERMES = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
QWEN3 = "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>"
TEXT = "Checking both.\n" + HERMES + "\nand\n" + QWEN3 + "\nDone."


def make_chunks(text: str, size: int = 3, *, index: int = 0, finish: str = "stop", usage: bool = False,
                extra_delta: dict | None = None) -> list[dict[str, Any]]:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "qwen",
            "system_fingerprint": "fp_1"}
    chunks = [{**base, "choices": [{"index": index, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    for i in range(0, len(text), size):
        delta = {"content": text[i : i + size]}
        if extra_delta and i == 0:
            delta.update(extra_delta)
        chunks.append({**base, "choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": None}]})
    chunks.append({**base, "choices": [{"index": index, "delta": {}, "finish_reason": finish}]})
    if usage:
        chunks.append({**base, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}})
    return chunks


def completion_for(text: str, finish: str = "stop") -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "qwen",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}]}


def accumulate(chunks: Iterable[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Fold streamed deltas the way client SDKs do: per choice, content joined, calls by index."""
    result: dict[int, dict[str, Any]] = {}
    for raw in chunks:
        chunk = ChatCompletionChunk.model_validate(raw)
        for choice in chunk.choices:
            acc = result.setdefault(choice.index, {"content": "", "tool_calls": {}, "finish_reason": None, "role": None})
            d = choice.delta
            acc["role"] = acc["role"] or d.role
            acc["content"] += d.content or ""
            for tc in d.tool_calls or []:
                slot = acc["tool_calls"].setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                slot["id"] = slot["id"] or tc.id
                slot["name"] += (tc.function.name or "") if tc.function else ""
                slot["arguments"] += (tc.function.arguments or "") if tc.function else ""
            if choice.finish_reason:
                acc["finish_reason"] = choice.finish_reason
    return result


def test_stream_matches_non_streaming_and_validates() -> None:
    out = list(sp_openai.rewrite_stream_sync(make_chunks(TEXT), TOOLS))
    acc = accumulate(out)[0]
    full = ChatCompletion.model_validate(sp_openai.rewrite_completion(completion_for(TEXT), TOOLS))
    message = full.choices[0].message
    assert acc["content"] == message.content == "Checking both.\n\nand\n\nDone."
    streamed = [(c["name"], json.loads(c["arguments"])) for _, c in sorted(acc["tool_calls"].items())]
    assert streamed == [(tc.function.name, json.loads(tc.function.arguments)) for tc in message.tool_calls]
    assert streamed == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo", "days": 2})]
    assert acc["finish_reason"] == full.choices[0].finish_reason == "tool_calls"
    assert acc["role"] == "assistant"
    assert all(c["id"] and c["id"].startswith("call_") for c in acc["tool_calls"].values())


def test_upstream_metadata_is_kept() -> None:
    for chunk in sp_openai.rewrite_stream_sync(make_chunks(TEXT), TOOLS):
        assert (chunk["id"], chunk["object"], chunk["created"], chunk["model"], chunk["system_fingerprint"]) == (
            "chatcmpl-1", "chat.completion.chunk", 1700000000, "qwen", "fp_1")


def test_no_empty_chunks_but_finish_and_usage_always_pass() -> None:
    chunks = make_chunks(HERMES, size=2, usage=True)
    out = list(sp_openai.rewrite_stream_sync(chunks, TOOLS))
    # role chunk, one call chunk, finish chunk, usage chunk: the held-back pieces produced nothing.
    assert len(out) == 4
    assert out[1]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert out[2]["choices"][0]["finish_reason"] == "tool_calls"
    assert out[3] == chunks[-1]


def test_reasoning_logprobs_and_role_pass_through() -> None:
    chunks = make_chunks("Hello there", extra_delta={"reasoning_content": "thinking"})
    chunks[1]["choices"][0]["logprobs"] = {"content": []}
    out = list(sp_openai.rewrite_stream_sync(chunks, TOOLS))
    assert out[0]["choices"][0]["delta"] == {"role": "assistant"}
    assert out[1]["choices"][0]["delta"] == {"reasoning_content": "thinking", "content": "Hel"}
    assert out[1]["choices"][0]["logprobs"] == {"content": []}
    assert accumulate(out)[0]["content"] == "Hello there"


def test_think_markup_in_content_becomes_reasoning_content() -> None:
    out = list(sp_openai.rewrite_stream_sync(make_chunks("<think>hmm</think>Answer"), TOOLS))
    reasoning = "".join(c["choices"][0]["delta"].get("reasoning_content", "") for c in out if c["choices"])
    assert reasoning == "hmm" and accumulate(out)[0]["content"] == "Answer"


def test_native_tool_calls_untouched_and_ours_numbered_after() -> None:
    native = {"index": 0, "id": "call_native", "type": "function", "function": {"name": "search_recipes", "arguments": "{}"}}
    chunks = make_chunks(HERMES, extra_delta={"tool_calls": [native]})
    out = list(sp_openai.rewrite_stream_sync(chunks, TOOLS))
    calls = accumulate(out)[0]["tool_calls"]
    assert calls[0]["id"] == "call_native" and calls[0]["name"] == "search_recipes"
    assert calls[1]["name"] == "get_weather"


def test_a_native_call_after_a_parsed_one_gets_its_own_index() -> None:
    """The upstream numbers its native calls from 0 without knowing ours: one that comes after a parsed call
    (and its argument fragments) moves to the next free index, so no two calls share one."""
    base = make_chunks(HERMES + " then")[:-1]
    native = [{"index": 0, "id": "call_native", "type": "function", "function": {"name": "search_recipes", "arguments": ""}},
              {"index": 0, "function": {"arguments": '{"query": "x"}'}}]
    chunks = base + [{**base[0], "choices": [{"index": 0, "delta": {"tool_calls": [piece]}, "finish_reason": None}]}
                     for piece in native]
    chunks.append({**base[0], "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    out = list(sp_openai.rewrite_stream_sync(chunks, TOOLS))
    calls = accumulate(out)[0]["tool_calls"]
    assert [(i, c["name"], c["arguments"]) for i, c in sorted(calls.items())] == [
        (0, "get_weather", '{"city": "Paris"}'), (1, "search_recipes", '{"query": "x"}')]
    assert calls[1]["id"] == "call_native"


def test_two_choices_interleaved_each_with_its_own_parser() -> None:
    a = make_chunks("A: " + HERMES, size=4, index=0)
    b = make_chunks("B: " + QWEN3, size=5, index=1)
    interleaved = [c for pair in zip(a, b) for c in pair] + a[len(b):] + b[len(a):]
    acc = accumulate(sp_openai.rewrite_stream_sync(interleaved, TOOLS))
    assert acc[0]["content"] == "A: " and acc[1]["content"] == "B: "
    assert acc[0]["tool_calls"][0]["name"] == acc[1]["tool_calls"][0]["name"] == "get_weather"
    assert json.loads(acc[1]["tool_calls"][0]["arguments"]) == {"city": "Oslo", "days": 2}
    assert acc[0]["finish_reason"] == acc[1]["finish_reason"] == "tool_calls"


def test_length_finish_keeps_length_and_drops_the_unfinished_call() -> None:
    """Cut off by max tokens inside a call: the model never finished it, so it is neither a call nor text (issue
    30: canitoolcall's reading); a ``truncated`` diagnostic carries its text. A stream that just ends keeps it."""
    truncated = "Sure " + HERMES[:40]
    rewriter = sp_openai.ChunkRewriter(TOOLS)
    chunks = [out for chunk in make_chunks(truncated, finish="length") for out in rewriter.feed(chunk)]
    acc = accumulate(chunks + rewriter.close())[0]
    assert acc["finish_reason"] == "length"
    assert acc["content"] == "Sure " and acc["tool_calls"] == {}
    assert [d["code"] for d in rewriter.take_diagnostics()] == ["truncated"]
    acc = accumulate(sp_openai.rewrite_stream_sync(make_chunks(truncated, finish="stop"), TOOLS))[0]
    assert acc["content"] == truncated and acc["tool_calls"] == {}


def test_stream_without_finish_chunk_still_flushes() -> None:
    chunks = make_chunks("tail <tool_", size=3)[:-1]
    acc = accumulate(sp_openai.rewrite_stream_sync(chunks, TOOLS))[0]
    assert acc["content"] == "tail <tool_"


def test_tools_from_request() -> None:
    request = {"model": "m", "messages": [], "tools": TOOLS}
    text = '<search_recipes>{"query": "x"}</function>'
    acc = accumulate(sp_openai.rewrite_stream_sync(make_chunks(text), request=request))[0]
    assert acc["tool_calls"][0]["name"] == "search_recipes"
    full = sp_openai.rewrite_completion(completion_for(text), request=request)
    assert full["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "search_recipes"


def test_completion_content_none_when_only_whitespace_and_input_untouched() -> None:
    original = completion_for("\n" + HERMES + "\n")
    snapshot = json.dumps(original)
    result = sp_openai.rewrite_completion(original, TOOLS)
    ChatCompletion.model_validate(result)
    assert result["choices"][0]["message"]["content"] is None
    assert result["choices"][0]["finish_reason"] == "tool_calls"
    assert json.dumps(original) == snapshot


def test_completion_without_calls_is_unchanged_in_meaning() -> None:
    result = sp_openai.rewrite_completion(completion_for("plain <b>answer</b>"), TOOLS)
    assert result["choices"][0]["message"] == {"role": "assistant", "content": "plain <b>answer</b>"}
    assert result["choices"][0]["finish_reason"] == "stop"


@pytest.mark.parametrize("bad,match", [
    ("not a dict", "JSON object"),
    ({"choices": [{"index": 0, "delta": {"content": 5}}]}, r"delta.content must be a string"),
    ({"choices": ["x"]}, r"choices\[0\] must be a JSON object"),
])
def test_malformed_chunks_raise_clear_errors(bad: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        list(sp_openai.rewrite_stream_sync([bad], TOOLS))


def test_chunks_we_do_not_own_pass_untouched() -> None:
    odd = [{"id": "x", "object": "chat.completion.chunk"}, {"choices": [{"index": 0, "finish_reason": "stop"}]}]
    assert list(sp_openai.rewrite_stream_sync(odd, TOOLS)) == odd


def test_malformed_completion() -> None:
    with pytest.raises(ValueError, match="message.content"):
        sp_openai.rewrite_completion({"choices": [{"message": {"content": 3}}]})


# ---------------------------------------------------------------- async, on both anyio backends

@pytest.mark.anyio
async def test_rewrite_stream_async_equals_sync(anyio_backend: str) -> None:
    chunks = make_chunks(TEXT, size=2, usage=True)
    out = [c async for c in sp_openai.rewrite_stream(aiter_of(chunks), TOOLS)]
    sync = list(sp_openai.rewrite_stream_sync(chunks, TOOLS))
    strip = lambda cs: json.dumps([accumulate(cs)[0] | {"tool_calls": {k: {**v, "id": None} for k, v in accumulate(cs)[0]["tool_calls"].items()}}])  # noqa: E731
    assert strip(out) == strip(sync)
    assert out[-1]["usage"]["total_tokens"] == 12


@pytest.mark.anyio
async def test_aparse_async_text_deltas(anyio_backend: str) -> None:
    events = [e async for e in aparse(aiter_of([TEXT[i : i + 5] for i in range(0, len(TEXT), 5)]), TOOLS)]
    assert [e.name for e in events if e.type == "tool_call"] == ["get_weather", "get_weather"]
    assert "".join(e.text for e in events if e.type == "text") == "Checking both.\n\nand\n\nDone."


def test_completion_to_chunks_validates_and_accumulates_to_the_same_answer() -> None:
    full = sp_openai.rewrite_completion(completion_for(TEXT), TOOLS)
    full["usage"] = {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
    chunks = sp_openai.completion_to_chunks(full)
    acc = accumulate(chunks)[0]
    message = full["choices"][0]["message"]
    assert acc["content"] == message["content"] and acc["finish_reason"] == "tool_calls"
    assert [c["name"] for _, c in sorted(acc["tool_calls"].items())] == [c["function"]["name"] for c in message["tool_calls"]]
    assert chunks[-1]["usage"]["total_tokens"] == 3


# ---------------------------------------------------------------- openai SDK objects in, dicts out

def without_call_ids(chunks: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Call ids are unique per stream: blank them to compare two runs."""
    out = json.loads(json.dumps(list(chunks)))
    for chunk in out:
        for choice in chunk.get("choices", []):
            for call in (choice.get("delta") or choice.get("message") or {}).get("tool_calls") or []:
                call["id"] = None
    return out


def sdk_chunks(text: str, size: int = 7) -> list[ChatCompletionChunk]:
    return [ChatCompletionChunk.model_validate(c) for c in make_chunks(text, size=size, usage=True)]


def test_sdk_chunks_are_read_as_the_json_they_came_from() -> None:
    dicts = make_chunks(TEXT, size=7, usage=True)
    out = list(sp_openai.rewrite_stream_sync(sdk_chunks(TEXT), TOOLS))
    assert all(type(chunk) is dict for chunk in out)
    assert without_call_ids(out) == without_call_ids(sp_openai.rewrite_stream_sync(dicts, TOOLS))
    assert out[0]["choices"][0]["delta"] == {"role": "assistant"}  # unset fields stay out, as in the dicts


def test_sdk_chunks_with_a_split_hermes_call_sync_and_async() -> None:
    async def collect() -> list[dict[str, Any]]:
        return [c async for c in sp_openai.rewrite_stream(aiter_of(sdk_chunks("Hi " + HERMES, size=5)), TOOLS)]

    for out in (list(sp_openai.rewrite_stream_sync(sdk_chunks("Hi " + HERMES, size=5), TOOLS)), anyio.run(collect)):
        acc = accumulate(out)[0]
        assert acc["content"] == "Hi " and acc["finish_reason"] == "tool_calls"
        assert [(c["name"], json.loads(c["arguments"])) for c in acc["tool_calls"].values()] == [
            ("get_weather", {"city": "Paris"})]


def test_sdk_completion_is_rewritten_like_its_dict() -> None:
    completion = ChatCompletion.model_validate(completion_for(TEXT))
    snapshot = completion.model_dump_json()
    result = sp_openai.rewrite_completion(completion, TOOLS)
    assert isinstance(result, dict) and json.loads(json.dumps(result)) == result  # a plain JSON dict, not an SDK object
    assert without_call_ids([result]) == without_call_ids([sp_openai.rewrite_completion(completion_for(TEXT), TOOLS)])
    assert completion.model_dump_json() == snapshot


@pytest.fixture(scope="module")
def upstream() -> Iterator[ServerThread]:
    with ServerThread(scripted_upstream()) as server:
        yield server


def test_openai_client_stream_through_rewrite_stream_sync(upstream: ServerThread) -> None:
    client = OpenAI(base_url=upstream.url + "/v1", api_key="k", max_retries=0, timeout=30)
    stream = client.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "go"}], stream=True)
    acc = accumulate(sp_openai.rewrite_stream_sync(stream, TOOLS))[0]
    assert acc["content"] == "Let me look.\n\nDone." and acc["finish_reason"] == "tool_calls"
    assert [(c["name"], json.loads(c["arguments"])) for c in acc["tool_calls"].values()] == [
        ("get_weather", {"city": "Paris"})]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the client runs threads via anyio: trio 0.22 is too old
async def test_async_openai_client_stream_through_rewrite_stream(upstream: ServerThread, anyio_backend: str) -> None:
    client = AsyncOpenAI(base_url=upstream.url + "/v1", api_key="k", max_retries=0, timeout=30)
    stream = await client.chat.completions.create(model="qwen3", messages=[{"role": "user", "content": "go"}], stream=True)
    acc = accumulate([c async for c in sp_openai.rewrite_stream(stream, TOOLS)])[0]
    assert acc["content"] == "Checking  now." and acc["finish_reason"] == "tool_calls"
    assert json.loads(acc["tool_calls"][0]["arguments"]) == {"city": "Oslo", "days": 2}
