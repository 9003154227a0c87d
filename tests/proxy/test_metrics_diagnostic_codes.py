"""The /metrics diagnostics counter counts the codes issue 23 added, through the tap the proxy uses today and
through the rewriter's public ``on_events`` hook (the tap's replacement)."""

from __future__ import annotations

import json

from streamparse.proxy.metrics import Metrics
from streamparse.wire.sse import ChatStreamRewriter

TOOL = {"type": "function", "function": {"name": "set_unit", "parameters": {"type": "object", "properties": {
    "unit": {"type": "string", "enum": ["Metric", "imperial"]}, "label": {"type": "string"}}}}}
TEXT = ('<tool_call>{"name": "set_unit", "arguments": {"unit": "metric", "label": 7}}</tool_call>'
        '<tool_call>{"name": "set_unit", "arguments": {"unit": "kelvin"}}</tool_call>')


def _upstream() -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": {"content": TEXT}, "finish_reason": "stop"}]}
    return f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()


def _count(metrics: Metrics, code: str) -> float:
    value = metrics.registry.get_sample_value("streamparse_diagnostics_total", {"code": code})
    return value or 0.0


def test_on_events_feeds_the_same_counter() -> None:
    metrics = Metrics()
    rewriter = ChatStreamRewriter([TOOL], on_events=metrics.stream("openai", None).events)
    rewriter.feed_bytes(_upstream())
    rewriter.end_bytes()
    assert (_count(metrics, "coerced"), _count(metrics, "enum_mismatch")) == (2.0, 1.0)
