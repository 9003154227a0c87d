"""One Anthropic block layout, streaming or not (issue 17, §2.1).

For the same model output every path gives the same Message, blocks in the order the model wrote them
(``[text, tool_use, text, tool_use]``, not the text joined before the calls):

- text deltas -> ``stream_events_sync``, accumulated by the anthropic SDK; the whole text -> ``message_from_text``;
- upstream chunks -> ``rewrite_stream_sync`` -> ``events_from_chunks_sync`` (the proxy's stream), accumulated;
- the upstream's ``chat.completion`` -> ``rewrite_completion`` -> ``message_from_completion`` (the proxy's
  non-streaming answer), and -> ``completion_to_chunks`` -> ``events_from_chunks_sync`` (the proxy's answer to
  a streaming request the upstream answered whole).

A plain ``chat.completion`` (one content string, one calls list) cannot say where its text stood between
its calls: it gives ``[thinking, text, tool_use…]`` on every path too.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Callable, Iterator

import anthropic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

from helpers import TOOLS
from streamparse.dialects.render import render
from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ProxyConfig
from streamparse.proxy.runner import ServerThread
from streamparse.wire import anthropic as spa
from streamparse.wire import openai as sp_openai
from anthropic_samples import BASE, HERMES, QWEN3, accumulate, anonymous, completion, pieces, plain, text_chunks
from upstreams import RecordingModel

NAME_TAG = '<search_recipes>{"query": "vegan pasta"}</function>'  # gated: a call only with the tool known
OUTPUTS = {
    "text": "Just text, with <b>html</b> and a < b.",
    "call": HERMES,
    "text_call": "Let me look.\n" + HERMES,
    "call_text": HERMES + "\nDone.",
    "text_between_calls": "Checking both.\n" + HERMES + "\nand\n" + QWEN3 + "\nDone.",
    "calls_only": HERMES + QWEN3,
    "blank_between_calls": "\n" + HERMES + "\n\n" + QWEN3 + "\n",
    "reasoning": "<think>Let me see.</think>Sure. " + HERMES + " then " + QWEN3,
    "reasoning_between": "First " + HERMES + "<think>and now?</think> second " + QWEN3 + " end",
    "trailing_text": HERMES + QWEN3 + " and some trailing words",
    "gated_call": "Recipes: " + NAME_TAG + "\nEnjoy!",
    "not_a_call": "x < y, <tool_call> not json </tool_call> end",
    "cut_off_call": "Start " + HERMES[:40],
    "empty": "",
}


def deltas_of(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(text)), len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def paths(text: str, deltas: list[str], **options: Any) -> dict[str, dict[str, Any]]:
    """The Message of each path for one model output (``deltas``: how the stream cut it), made comparable."""
    rewritten = sp_openai.rewrite_completion(completion(text), TOOLS, **options)
    return {name: anonymous(message) for name, message in {
        "text stream": accumulate(spa.stream_events_sync(deltas, TOOLS, model="qwen", **options)),
        "text whole": plain(spa.message_from_text(text, TOOLS, model="qwen", **options)),
        "chunk stream": accumulate(spa.events_from_chunks_sync(
            sp_openai.rewrite_stream_sync(text_chunks(deltas), TOOLS, **options))),
        "completion": plain(spa.message_from_completion(rewritten)),
        "completion as chunks": accumulate(spa.events_from_chunks_sync(sp_openai.completion_to_chunks(rewritten))),
    }.items()}


def assert_one_layout(found: dict[str, dict[str, Any]]) -> dict[str, Any]:
    first, *others = found.values()
    for name, message in found.items():
        assert message == first, f"{name} differs from {next(iter(found))}"
    return first


def kinds(message: dict[str, Any]) -> list[str]:
    return [block["type"] for block in message["content"]]


@pytest.mark.parametrize("stream_arguments", [False, True], ids=["whole_calls", "stream_arguments"])
@pytest.mark.parametrize("size", [1, 4, 1000])
@pytest.mark.parametrize("name", list(OUTPUTS))
def test_every_path_gives_the_same_blocks(name: str, size: int, stream_arguments: bool) -> None:
    text = OUTPUTS[name]
    options = {"stream_arguments": True} if stream_arguments else {}
    message = assert_one_layout(paths(text, pieces(text, size) or [""], **options))
    assert message["stop_reason"] == ("tool_use" if "tool_use" in kinds(message) else "end_turn")


def test_text_between_calls_keeps_its_place() -> None:
    text = OUTPUTS["text_between_calls"]
    message = assert_one_layout(paths(text, pieces(text, 3)))
    assert [(b["type"], b.get("text") or b.get("input")) for b in message["content"]] == [
        ("text", "Checking both.\n"), ("tool_use", {"city": "Paris"}), ("text", "\nand\n"),
        ("tool_use", {"city": "Oslo", "days": 2}), ("text", "\nDone.")]


def test_reasoning_keeps_its_place() -> None:
    message = assert_one_layout(paths(OUTPUTS["reasoning_between"], pieces(OUTPUTS["reasoning_between"], 7)))
    assert kinds(message) == ["text", "tool_use", "thinking", "text", "tool_use", "text"]


SNIPPETS = ["Hello ", "world.\n", " ", "\n", "x < y ", HERMES, QWEN3, NAME_TAG, "<think>hm, ", "ok</think>",
            "trailing words"]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(SNIPPETS), max_size=7), st.lists(st.integers(0, 600), max_size=14), st.booleans())
def test_any_output_any_chunking_one_layout(parts: list[str], cuts: list[int], stream_arguments: bool) -> None:
    text = "".join(parts)
    options = {"stream_arguments": True} if stream_arguments else {}
    message = assert_one_layout(paths(text, deltas_of(text, cuts) or [""], **options))
    assert all(b["text"].strip() for b in message["content"] if b["type"] == "text"), "no blank text block"


# ---------------------------------------------------------------- upstream fields around the parsed text

def upstream_stream(reasoning: str, deltas: list[str], native: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A stream with native reasoning first, then the content, then native calls (the order servers send)."""
    chunks = [{**BASE, "choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_content": reasoning},
                                    "finish_reason": None}]}]
    chunks += text_chunks(deltas)[1:-1]
    chunks += [{**BASE, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": n, **call}]}, "finish_reason": None}]}
               for n, call in enumerate(native)]
    return chunks + [{**BASE, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]


NATIVE = [{"id": "call_n1", "type": "function", "function": {"name": "get_time", "arguments": '{"tz": "UTC"}'}}]


@pytest.mark.parametrize("native", [[], NATIVE], ids=["parsed_only", "with_native_call"])
def test_native_reasoning_first_and_native_calls_last(native: list[dict[str, Any]]) -> None:
    text = "<think> more</think>Text " + HERMES + " after"
    whole = completion(text, [dict(c) for c in native], "tool_calls")
    whole["choices"][0]["message"]["reasoning_content"] = "Native."
    rewritten = sp_openai.rewrite_completion(whole, TOOLS)
    streamed = accumulate(spa.events_from_chunks_sync(
        sp_openai.rewrite_stream_sync(upstream_stream("Native.", pieces(text, 5), native), TOOLS)))
    message = anonymous(plain(spa.message_from_completion(rewritten)))
    assert anonymous(streamed) == message == anonymous(
        accumulate(spa.events_from_chunks_sync(sp_openai.completion_to_chunks(rewritten))))
    assert [(b["type"], b.get("thinking") or b.get("text") or b.get("name")) for b in message["content"]] == [
        ("thinking", "Native. more"), ("text", "Text "), ("tool_use", "get_weather"), ("text", " after"),
        *([("tool_use", "get_time")] if native else [])]


# ---------------------------------------------------------------- what the OpenAI client sees is unchanged

def sdk_message(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The message the openai SDK accumulates from chunks (call ``index`` dropped: a stream-only field)."""
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    message = state.get_final_completion().choices[0].message.model_dump(mode="json", exclude_none=True)
    for call in message.get("tool_calls", []):
        call.pop("index", None)
    return message


@pytest.mark.parametrize("name", ["text_between_calls", "reasoning_between", "blank_between_calls", "text"])
@pytest.mark.parametrize("stream_arguments", [False, True])
def test_completion_chunks_accumulate_to_the_completion(name: str, stream_arguments: bool) -> None:
    rewritten = sp_openai.rewrite_completion(completion(OUTPUTS[name]), TOOLS, stream_arguments=stream_arguments)
    chunks = sp_openai.completion_to_chunks(rewritten)
    message = {k: v for k, v in rewritten["choices"][0]["message"].items() if v is not None}
    assert sdk_message(chunks) == message
    assert chunks[-1]["choices"][0]["finish_reason"] == rewritten["choices"][0]["finish_reason"]
    assert all(c["choices"][0]["finish_reason"] is None for c in chunks[:-1])


# ---------------------------------------------------------------- a plain completion: one content string

EDITS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "plain dict": dict,
    "json round trip": lambda c: json.loads(json.dumps(c)),
    "content changed": lambda c: {**c, "choices": [{**c["choices"][0], "message": {
        **c["choices"][0]["message"], "content": "Edited."}}]},
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_completion_that_lost_its_layout_joins_its_text(edit: str) -> None:
    rewritten = sp_openai.rewrite_completion(completion(OUTPUTS["text_between_calls"]), TOOLS)
    changed = EDITS[edit](rewritten)
    message = spa.message_from_completion(changed)
    assert kinds(message) == ["text", "tool_use", "tool_use"]
    text = changed["choices"][0]["message"]["content"]
    assert message["content"][0]["text"] == text
    assert plain(message) == accumulate(spa.events_from_chunks_sync(sp_openai.completion_to_chunks(changed)))


def test_layouts_survive_a_deep_copy_and_a_usage_change() -> None:
    rewritten = sp_openai.rewrite_completion(completion(OUTPUTS["text_between_calls"]), TOOLS)
    clone = copy.deepcopy(rewritten)
    clone["usage"] = {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11}  # what a retry adds up
    message = spa.message_from_completion(clone)
    assert kinds(message) == ["text", "tool_use", "text", "tool_use", "text"]
    assert message["usage"] == {"input_tokens": 5, "output_tokens": 6}


# ---------------------------------------------------------------- through the proxy's /v1/messages

WEATHER = {"name": "get_weather", "description": "Current weather",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
CLOCK = {"name": "get_time", "description": "Local time",
         "input_schema": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]}}


@pytest.fixture(scope="module")
def proxies() -> Iterator[tuple[RecordingModel, dict[str, ServerThread]]]:
    model = RecordingModel()
    with ServerThread(model.app()) as up:
        native = ProxyConfig(backends=[Backend(name="native", upstream=up.url + "/v1", default=True)])
        # tool_prompt_retry reads a demanded call's answer whole, even for a streaming client (completion_to_chunks)
        prompted = ProxyConfig.single(up.url + "/v1", {"tool_prompt": "hermes", "tool_prompt_retry": True})
        with ServerThread(create_app(native)) as p1, ServerThread(create_app(prompted)) as p2:
            yield model, {"native": p1, "prompted": p2}


@pytest.mark.parametrize("backend, tool_choice", [("native", {"type": "auto"}), ("prompted", {"type": "auto"}),
                                                  ("prompted", {"type": "any"})])
def test_the_proxy_answers_one_layout(proxies: tuple[RecordingModel, dict[str, ServerThread]], backend: str,
                                      tool_choice: dict[str, Any]) -> None:
    model, servers = proxies
    model.reset("<think>Plan.</think>First. " + render("hermes", "get_weather", {"city": "Paris"}) + "\nthen\n"
                + render("hermes", "get_time", {"tz": "UTC"}) + "\nDone.")
    client = anthropic.Anthropic(base_url=servers[backend].url, api_key="k", max_retries=0, timeout=30)
    kw: dict[str, Any] = dict(model="m", max_tokens=256, messages=[{"role": "user", "content": "go"}],
                              tools=[WEATHER, CLOCK], tool_choice=tool_choice)
    whole = client.messages.create(**kw)
    with client.messages.stream(**kw) as stream:
        streamed = stream.get_final_message()

    def blocks(message: Any) -> list[tuple[str, Any]]:
        return [(b.type, b.thinking if b.type == "thinking" else b.text if b.type == "text" else (b.name, b.input))
                for b in message.content]

    assert blocks(whole) == blocks(streamed) == [
        ("thinking", "Plan."), ("text", "First. "), ("tool_use", ("get_weather", {"city": "Paris"})),
        ("text", "\nthen\n"), ("tool_use", ("get_time", {"tz": "UTC"})), ("text", "\nDone.")]
    assert whole.stop_reason == streamed.stop_reason == "tool_use"
    assert [r.get("stream", False) for r in model.requests] == [False, tool_choice["type"] != "any"]
