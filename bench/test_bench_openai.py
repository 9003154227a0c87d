"""OpenAI adapter throughput: rewrite_stream_sync over a generated chunk stream (one 4-character delta per chunk)."""

from __future__ import annotations

from streamparse.wire import openai as sp_openai
from streamparse.harness.benchmark import build_workload, split
from streamparse.harness.examples import EXAMPLE_TOOLS as TOOLS


def _chunks(text: str) -> list[dict]:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    out = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    out += [{**base, "choices": [{"index": 0, "delta": {"content": d}, "finish_reason": None}]} for d in split(text, 4)]
    out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return out


def test_rewrite_stream_tool_heavy(benchmark) -> None:
    chunks = _chunks(build_workload("tool_heavy").text)
    out = benchmark(lambda: sum(1 for _ in sp_openai.rewrite_stream_sync(chunks, TOOLS)))
    assert out > 0
    if benchmark.stats:  # None under --benchmark-disable
        benchmark.extra_info["chunks"] = len(chunks)
        benchmark.extra_info["chunks_per_s"] = round(len(chunks) / benchmark.stats.stats.mean)
