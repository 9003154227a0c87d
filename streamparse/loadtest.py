"""Load test of the proxy: many concurrent streams through ``streamparse serve`` against the
replay upstream, both run as real processes on loopback, compared with a direct connection.

Every stream must arrive complete and identical to the single-request result.
Added latency per chunk is measured with the upstream's ``x_sent`` stamp
(same machine, same clock): receive time minus send time, via the proxy and direct.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from typing import Any

import anyio
import httpx

from .examples import EXAMPLE_TOOLS
from .runner import free_port, port_open, started_process
from .sse import SSEDecoder

__all__ = ["run_load", "LoadError"]


class LoadError(AssertionError):
    """A stream under load differed from its reference (lost, duplicated or reordered data, or an error)."""


def _peak_rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


async def _stream(client: httpx.AsyncClient, url: str, payload: dict[str, Any]) -> tuple[dict[str, Any], list[float]]:
    """One streaming request: (what a client accumulates, per-chunk latencies in seconds)."""
    decoder = SSEDecoder()
    content: list[str] = []
    calls: list[tuple[str, str]] = []
    latencies: list[float] = []
    chunks = 0
    finish = None
    async with client.stream("POST", url, json=payload) as resp:
        if resp.status_code != 200:
            raise LoadError(f"status {resp.status_code}: {(await resp.aread())[:300]!r}")
        async for raw in resp.aiter_bytes():
            now = time.time()
            for event in decoder.feed(raw):
                if event.data is None or event.data == "[DONE]":
                    continue
                chunk = json.loads(event.data)
                if "error" in chunk:
                    raise LoadError(f"error event: {chunk['error']}")
                chunks += 1
                if "x_sent" in chunk:
                    latencies.append(now - chunk["x_sent"])
                for choice in chunk.get("choices", []):
                    delta = choice.get("delta", {})
                    content.append(delta.get("content") or "")
                    calls += [(c["function"]["name"], c["function"]["arguments"]) for c in delta.get("tool_calls") or []]
                    finish = choice.get("finish_reason") or finish
    return {"content": "".join(content), "calls": calls, "finish": finish, "chunks": chunks}, latencies


async def _many(url: str, payload: dict[str, Any], concurrency: int) -> tuple[list[dict[str, Any]], list[float], float]:
    results: list[dict[str, Any]] = []
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        async def one() -> None:
            result, lat = await _stream(client, url, payload)
            results.append(result)
            latencies.extend(lat)

        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(concurrency):
                tg.start_soon(one)
        elapsed = time.perf_counter() - start
    return results, latencies, elapsed


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used (Linux /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def _comparable(result: dict[str, Any]) -> tuple[Any, ...]:
    """What must match between streams (call ids differ by design)."""
    return result["content"], [(n, json.loads(a)) for n, a in result["calls"]], result["finish"]


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_load(concurrency: int = 200, token_delay: float = 0.0, model: str = "long") -> dict[str, Any]:
    """Run the load test; returns the figures (raises LoadError if any stream differs).

    ``token_delay`` paces the upstream (seconds per token per stream): 0 measures
    throughput (the upstream outruns the proxy, so latency is mostly queueing);
    a model-like pace (0.02 s = 50 tokens/s) measures the latency the proxy adds.
    """
    up_port, proxy_port = free_port(), free_port()
    streamparse_cmd = [sys.executable, "-m", "streamparse"]
    payload = {"model": model, "stream": True, "tools": EXAMPLE_TOOLS, "messages": [{"role": "user", "content": "go"}]}
    with started_process([*streamparse_cmd, "replay", "--port", str(up_port), "--delay", str(token_delay), "--stamp",
                          "--log-level", "warning"], lambda: port_open(up_port)), \
            started_process([*streamparse_cmd, "serve", "--upstream", f"http://127.0.0.1:{up_port}/v1",
                             "--port", str(proxy_port), "--log-level", "warning"], lambda: port_open(proxy_port)) as proxy:
        direct_url = f"http://127.0.0.1:{up_port}/v1/chat/completions"
        proxy_url = f"http://127.0.0.1:{proxy_port}/v1/chat/completions"
        reference, _, _ = anyio.run(_many, proxy_url, payload, 1)
        ref = reference[0]
        direct, direct_lat, direct_s = anyio.run(_many, direct_url, payload, concurrency)
        cpu_before = _cpu_seconds(proxy.pid)
        results, proxy_lat, proxy_s = anyio.run(_many, proxy_url, payload, concurrency)
        proxy_cpu = _cpu_seconds(proxy.pid) - cpu_before
        bad = [r for r in results if _comparable(r) != _comparable(ref)]
        if len(results) != concurrency or bad:
            raise LoadError(f"{len(bad)} of {len(results)} streams differ from the reference")
        peak = _peak_rss_mib(proxy.pid)
    proxy_chunks = sum(r["chunks"] for r in results)
    direct_chunks = sum(r["chunks"] for r in direct)
    return {
        "concurrency": concurrency,
        "token_delay_s": token_delay,
        "calls_per_stream": len(ref["calls"]),
        "chunks_per_stream_upstream": direct_chunks // max(len(direct), 1),
        "chunks_per_stream_proxy": proxy_chunks // max(len(results), 1),
        "proxy_requests_per_s": concurrency / proxy_s,
        "proxy_chunks_per_s": proxy_chunks / proxy_s,
        "direct_requests_per_s": concurrency / direct_s,
        "direct_chunks_per_s": direct_chunks / direct_s,
        "latency_ms_direct_p50": _pct(direct_lat, 0.5) * 1e3,
        "latency_ms_direct_p99": _pct(direct_lat, 0.99) * 1e3,
        "latency_ms_proxy_p50": _pct(proxy_lat, 0.5) * 1e3,
        "latency_ms_proxy_p99": _pct(proxy_lat, 0.99) * 1e3,
        "added_latency_ms_p50": (_pct(proxy_lat, 0.5) - _pct(direct_lat, 0.5)) * 1e3,
        "added_latency_ms_p99": (_pct(proxy_lat, 0.99) - _pct(direct_lat, 0.99)) * 1e3,
        "proxy_peak_rss_mib": peak,
        "proxy_cpu_us_per_upstream_chunk": proxy_cpu / max(direct_chunks, 1) * 1e6,
        "mean_latency_ms_proxy": statistics.fmean(proxy_lat) * 1e3 if proxy_lat else float("nan"),
    }
