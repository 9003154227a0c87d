"""pytest-benchmark: what the proxy's metrics cost per upstream read of a stream.

Run: python -m pytest bench/test_bench_metrics.py --benchmark-only -q -s

``rewrite_sse`` (the proxy's hot path: SSE framing, parsing, rewriting) reads a recorded stream of
one token per event (the replay upstream's, ~2,000 events, tool calls included) from an in-memory
httpx response, without a meter and with one (in flight, first byte, one read in 16 timed, the
parser's events tapped). ``extra_info`` has the microseconds per read of each and their ratio, best
of several runs in one process. Set PROMETHEUS_MULTIPROC_DIR to measure the multiprocess mode.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import httpx

from streamparse.harness.examples import EXAMPLE_TOOLS, EXAMPLES
from streamparse.harness.replay import completion_chunks, sse_frames, tokens
from streamparse.proxy.metrics import Metrics
from streamparse.proxy.redaction import Redactor
from streamparse.proxy.rewrite import rewrite_sse
from streamparse.proxy.upstream import Clock
from streamparse.proxy.config import Backend
from streamparse.wire.sse import ChatStreamRewriter

TEXT = "\n".join(EXAMPLES.values()) * 2
FRAMES = list(sse_frames(completion_chunks(tokens(TEXT), "m"), ping_every=10**9))
BACKEND = Backend("b", "http://127.0.0.1:9/v1")


async def _one(metrics: Metrics | None) -> float:
    resp = httpx.Response(200, stream=_Stream(), request=httpx.Request("POST", "http://127.0.0.1:9/v1/x"))
    rewriter = ChatStreamRewriter(EXAMPLE_TOOLS)
    meter = None
    if metrics is not None:
        meter = metrics.stream("openai", time.perf_counter(), "b")
        meter.tap(rewriter)
    start = time.perf_counter()
    async for _ in rewrite_sse(resp, Clock(BACKEND), rewriter, Redactor(()), None, meter):
        pass
    return time.perf_counter() - start


class _Stream(httpx.AsyncByteStream):
    async def __aiter__(self) -> Any:
        for frame in FRAMES:
            yield frame


def _best(metrics: Metrics | None, runs: int = 15) -> float:
    return min(anyio.run(_one, metrics) for _ in range(runs))


def test_metrics_cost_per_read(benchmark: Any) -> None:
    metrics = Metrics()
    _best(None, 3), _best(metrics, 3)  # warm up
    bare = _best(None)
    counted = _best(metrics)
    benchmark.pedantic(anyio.run, args=(_one, metrics), rounds=3, iterations=1)
    reads = len(FRAMES)
    benchmark.extra_info.update(reads=reads, us_per_read_bare=round(bare / reads * 1e6, 2),
                                us_per_read_metrics=round(counted / reads * 1e6, 2), ratio=round(counted / bare, 3))
    print(benchmark.extra_info)
