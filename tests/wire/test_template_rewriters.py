"""The wire layers given the model's chat template: the OpenAI ``ChunkRewriter`` and ``rewrite_completion``, the
Anthropic and Responses writers. They read the format and the start state from it as the parser does, and an
upstream that split the reasoning out itself still starts the answer outside it. Real templates only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamparse.anthropic import message_from_text, stream_events_sync
from streamparse.openai import ChunkRewriter, rewrite_completion
from streamparse.responses import response_from_text
from template_files import llama_cpp_templates

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]
ANSWER = ("Checking.\n</think>\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
          "</function>\n</tool_call>")


@pytest.fixture(scope="module")
def qwen35() -> str:
    return (llama_cpp_templates() / "Qwen3.5-4B.jinja").read_text(encoding="utf-8")


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _gather(chunks: list[dict[str, Any]]) -> tuple[str, str, list[tuple[str, str]], Any]:
    content, reasoning, calls, finish = "", "", {}, None
    for chunk in chunks:
        for choice in chunk["choices"]:
            delta = choice["delta"]
            content += delta.get("content") or ""
            reasoning += delta.get("reasoning_content") or ""
            for tc in delta.get("tool_calls") or ():
                name, args = calls.get(tc["index"], ("", ""))
                calls[tc["index"]] = (name + (tc["function"].get("name") or ""), args + tc["function"].get("arguments", ""))
            finish = choice.get("finish_reason") or finish
    return content, reasoning, list(calls.values()), finish


def test_chunks_are_read_as_the_template_says(qwen35: str) -> None:
    rewriter = ChunkRewriter(TOOLS, chat_template=qwen35)
    upstream = [_chunk({"content": ANSWER[i : i + 4]}) for i in range(0, len(ANSWER), 4)] + [_chunk({}, "stop")]
    got = _gather([c for chunk in upstream for c in rewriter.feed(chunk)] + rewriter.close())
    assert got == ("", "Checking.\n", [("get_weather", '{"city": "Paris"}')], "tool_calls")


def test_reasoning_the_engine_split_out_itself_restarts_the_answer_outside_it(qwen35: str) -> None:
    """The template opens <think>, but the engine ran a reasoning parser: it sends reasoning_content and then the
    answer, which is outside reasoning (a parser started inside it would take the call for reasoning)."""
    rewriter = ChunkRewriter(TOOLS, chat_template=qwen35)
    call = "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>"
    upstream = [_chunk({"reasoning_content": "Checking."}), _chunk({"content": call}), _chunk({}, "stop")]
    got = _gather([c for chunk in upstream for c in rewriter.feed(chunk)])
    assert got == ("", "Checking.", [("get_weather", '{"city": "Oslo"}')], "tool_calls")
    completion = {"id": "c", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": call, "reasoning_content": "Checking."}}]}
    message = rewrite_completion(completion, TOOLS, chat_template=qwen35)["choices"][0]["message"]
    assert message["tool_calls"][0]["function"]["name"] == "get_weather"


def test_a_whole_completion_is_read_as_the_template_says(qwen35: str) -> None:
    completion = {"id": "c", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": ANSWER}}]}
    out = rewrite_completion(completion, TOOLS, chat_template=qwen35, chat_template_kwargs={"enable_thinking": True})
    choice = out["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    assert choice["message"]["reasoning_content"] == "Checking.\n"
    assert json.loads(choice["message"]["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}


def test_the_anthropic_and_responses_writers_take_the_template(qwen35: str) -> None:
    message = message_from_text(ANSWER, TOOLS, chat_template=qwen35)
    assert [b["type"] for b in message["content"]] == ["thinking", "tool_use"]
    assert message["stop_reason"] == "tool_use"
    events = list(stream_events_sync([ANSWER[i : i + 7] for i in range(0, len(ANSWER), 7)], TOOLS,
                                     chat_template=qwen35))
    assert any(e.get("content_block", {}).get("type") == "tool_use" for e in events)
    response = response_from_text(ANSWER, TOOLS, chat_template=qwen35)
    assert [item["type"] for item in response["output"]] == ["reasoning", "function_call"]
