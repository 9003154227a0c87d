"""Anthropic adapter cost: the same chunk stream as ``test_bench_openai``, rewritten by the OpenAI adapter
alone and then also translated into Anthropic events (what ``/v1/messages`` adds per chunk); and the
whole-request cost of tool prompting (``prompt_request`` on a long agent history)."""

from __future__ import annotations

from typing import Any

from streamparse.wire import anthropic as spa
from streamparse.wire import openai as sp_openai
from streamparse.harness.benchmark import build_workload
from streamparse.harness.examples import EXAMPLE_TOOLS as TOOLS
from streamparse.prompting.requests import prompt_request
from streamparse.dialects.render import render

from test_bench_openai import _chunks


def _anthropic_events(chunks: list[dict[str, Any]]) -> int:
    translator = spa.ChunkTranslator(model="m")
    n = sum(len(translator.feed(c)) for c in sp_openai.rewrite_stream_sync(chunks, TOOLS))
    return n + len(translator.close())


def test_openai_chunks_only(benchmark) -> None:
    chunks = _chunks(build_workload("tool_heavy").text)
    assert benchmark(lambda: sum(1 for _ in sp_openai.rewrite_stream_sync(chunks, TOOLS))) > 0
    if benchmark.stats:
        benchmark.extra_info["us_per_chunk"] = round(benchmark.stats.stats.mean / len(chunks) * 1e6, 2)


def test_openai_chunks_to_anthropic_events(benchmark) -> None:
    chunks = _chunks(build_workload("tool_heavy").text)
    assert benchmark(lambda: _anthropic_events(chunks)) > 0
    if benchmark.stats:
        benchmark.extra_info["us_per_chunk"] = round(benchmark.stats.stats.mean / len(chunks) * 1e6, 2)


def _history(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for n in range(turns):
        call_id = f"call_{n}"
        messages += [{"role": "user", "content": f"step {n}"},
                     {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function", "function": {
                         "name": "write_file", "arguments": '{"path": "a.py", "content": "%s"}' % ("x" * 2000)}}]},
                     {"role": "tool", "tool_call_id": call_id, "content": "ok"}]
    return messages


def test_prompt_request_on_a_100_turn_history(benchmark) -> None:
    payload = {"model": "m", "messages": _history(100), "tools": TOOLS}
    prompted = benchmark(lambda: prompt_request(payload, "hermes"))
    assert render("hermes", "write_file", {"path": "a.py", "content": "x" * 2000}) in prompted.payload["messages"][2]["content"]
