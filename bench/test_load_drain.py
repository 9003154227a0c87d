"""Load run with a drain (issue 19): 200 concurrent streams through nginx in front of two `streamparse serve`
instances (two workers each), /metrics scraped all along, one instance sent SIGTERM while every stream is in flight.

Run: python -m pytest bench/test_load_drain.py --benchmark-only -s      (needs nginx; skipped without it)

Passes only if nothing is lost or duplicated: every stream identical to parse() of the recording (text, calls,
finish reason), the upstream asked exactly once per stream, no error event, no cut connection, and every
/metrics scrape of the instance left readable. Figures (in extra_info, printed): streams, wall time, latency
added per chunk (upstream send to client receive, nginx and proxy together; the replay upstream stamps one chunk
in ``replay.STAMP_EVERY`` with its send time), the proxy's own sampled work per read from its histogram, and the
instances' CPU per upstream chunk. ``chunks_received_all`` counts every chunk the clients read (stamped or not).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from streamparse import StreamParser
from streamparse.core.events import TextDelta, ToolCall
from streamparse.harness.examples import EXAMPLE_TOOLS, EXAMPLES
from streamparse.harness.loadtest import _cpu_seconds, _pct, _process_tree, sse_reads
from streamparse.proxy.runner import free_port, port_open, started_process

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
STREAMS = int(os.environ.get("BENCH_DRAIN_STREAMS", "200"))
MODEL = "long"
CONF = """daemon off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log warn;
events {{ worker_connections 4096; }}
http {{ access_log off; client_body_temp_path {d}/b; proxy_temp_path {d}/p; fastcgi_temp_path {d}/f;
  uwsgi_temp_path {d}/u; scgi_temp_path {d}/s;
  upstream streamparse {{ server 127.0.0.1:{a}; server 127.0.0.1:{b}; keepalive 64; }}
  server {{ listen 127.0.0.1:{front};
    location / {{ proxy_pass http://streamparse; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_buffering off; proxy_read_timeout 3600s; proxy_next_upstream error timeout non_idempotent;
      proxy_next_upstream_tries 2; }} }} }}
"""


def _reference() -> tuple[str, list[tuple[str, Any]]]:
    parser = StreamParser(EXAMPLE_TOOLS)
    events = parser.feed(EXAMPLES[MODEL]) + parser.close()
    return ("".join(e.text for e in events if isinstance(e, TextDelta)),
            [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)])


def _cpu(pids: list[int], last: dict[int, float]) -> float:
    """CPU seconds of the processes: each one's latest reading (``last``, updated here from those that still exist;
    a drained instance's processes exit during the run, and their CPU would otherwise vanish from the sum)."""
    for pid in pids:
        seconds = _cpu_seconds(pid)
        if seconds == seconds:
            last[pid] = seconds
    return sum(last.get(pid, 0.0) for pid in pids)


async def _watch_cpu(pids: list[int], until: asyncio.Event, last: dict[int, float]) -> None:
    while not until.is_set():
        _cpu(pids, last)
        await asyncio.sleep(0.05)


async def _stream(client: httpx.AsyncClient, url: str, first: asyncio.Event) -> dict[str, Any]:
    """One stream as a client reads it (``loadtest.sse_reads``: a status other than 200 or an error event fails)."""
    text: list[str] = []
    calls: dict[int, tuple[str, str]] = {}
    latencies: list[float] = []
    finish, chunks = None, 0
    body = {"model": MODEL, "stream": True, "tools": EXAMPLE_TOOLS, "messages": [{"role": "user", "content": "go"}]}
    async with client.stream("POST", url, json=body) as resp:
        async for _, now, read in sse_reads(resp, f"{url}: "):
            first.set()
            for chunk in read:
                chunks += 1
                if "x_sent" in chunk:  # (one upstream chunk in replay.STAMP_EVERY carries its send time)
                    latencies.append(now - chunk["x_sent"])
                for choice in chunk.get("choices", []):
                    delta = choice.get("delta", {})
                    text.append(delta.get("content") or "")
                    for tc in delta.get("tool_calls") or []:
                        name, args = calls.get(tc["index"], ("", ""))
                        fn = tc.get("function") or {}
                        calls[tc["index"]] = (name + (fn.get("name") or ""), args + (fn.get("arguments") or ""))
                    finish = choice.get("finish_reason") or finish
    return {"text": "".join(text), "calls": [(n, json.loads(a)) for _, (n, a) in sorted(calls.items())],
            "finish": finish, "latencies": latencies, "chunks": chunks}


async def _scrape(base: str, until: asyncio.Event, seen: list[dict[str, float]], refused: list[str]) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        while not until.is_set():
            try:
                text = (await client.get(base + "/metrics")).text
            except httpx.HTTPError as exc:
                refused.append(type(exc).__name__)
            else:
                seen.append({s.name + json.dumps(s.labels, sort_keys=True): s.value
                             for fam in text_string_to_metric_families(text) for s in fam.samples})
            await asyncio.sleep(0.25)


async def _run(front: int, a: int, b: int, drain: Any, pids: list[int], cpu: dict[int, float]) -> dict[str, Any]:
    done = asyncio.Event()
    watcher = asyncio.create_task(_watch_cpu(pids, done, cpu))
    scrapes: dict[str, tuple[list[dict[str, float]], list[str]]] = {"a": ([], []), "b": ([], [])}
    scrapers = [asyncio.create_task(_scrape(f"http://127.0.0.1:{port}", done, *scrapes[name]))
                for name, port in (("a", a), ("b", b))]
    limits = httpx.Limits(max_connections=STREAMS + 10)
    async with httpx.AsyncClient(timeout=300, limits=limits) as client:
        firsts = [asyncio.Event() for _ in range(STREAMS)]
        start = time.perf_counter()
        tasks = [asyncio.create_task(_stream(client, f"http://127.0.0.1:{front}/v1/chat/completions", e))
                 for e in firsts]
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in firsts)), 120)
        drained_at = time.perf_counter() - start
        drain()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        elapsed = time.perf_counter() - start
    done.set()
    await asyncio.gather(*scrapers, watcher)
    return {"results": results, "elapsed": elapsed, "drained_at": drained_at, "scrapes": scrapes}


async def _direct(url: str) -> tuple[list[float], int]:
    """The same streams straight to the upstream: the latency floor of this machine and client, and the chunks
    the upstream sends per stream."""
    limits = httpx.Limits(max_connections=STREAMS + 10)
    async with httpx.AsyncClient(timeout=300, limits=limits) as client:
        results = await asyncio.gather(*(_stream(client, url, asyncio.Event()) for _ in range(STREAMS)))
    return [x for r in results for x in r["latencies"]], results[0]["chunks"]


@pytest.mark.skipif(NGINX is None, reason="needs nginx (Debian: apt-get install -y nginx)")
def test_load_with_drain_and_scraping(benchmark: Any) -> None:
    front, a, b, up = free_port(), free_port(), free_port(), free_port()
    with tempfile.TemporaryDirectory() as d:
        conf = Path(d) / "nginx.conf"
        conf.write_text(CONF.format(d=d, a=a, b=b, front=front), encoding="utf-8")
        upstream = f"http://127.0.0.1:{up}/v1"
        log = open(Path(d) / "replay.log", "wb")
        replay = subprocess.Popen([sys.executable, "-m", "streamparse", "replay", "--port", str(up), "--delay", "0.02",
                                   "--stamp", "--log-level", "info"], stdout=log, stderr=log)

        def serve(port: int) -> list[str]:
            return [sys.executable, "-m", "streamparse", "serve", "--upstream", upstream, "--port",
                    str(port), "--workers", "2", "--drain-timeout", "120", "--log-level", "warning"]

        try:
            with started_process([str(NGINX), "-c", str(conf), "-p", d], lambda: port_open(front) and port_open(up)), \
                    started_process(serve(a), lambda: port_open(a)) as pa, \
                    started_process(serve(b), lambda: port_open(b)) as pb:
                direct, upstream_chunks = asyncio.run(_direct(upstream + "/chat/completions"))
                time.sleep(1)  # both workers of each instance up
                pids = _process_tree(pa.pid) + _process_tree(pb.pid)
                last: dict[int, float] = {}
                cpu_before = _cpu(pids, last)
                run = benchmark.pedantic(lambda: asyncio.run(_run(
                    front, a, b, lambda: pa.send_signal(signal.SIGTERM), pids, last)), rounds=1, iterations=1)
                cpu = _cpu(pids, last) - cpu_before
                assert pa.wait(120) in (0, -signal.SIGTERM)
        finally:
            replay.terminate()
            replay.wait(30)
            log.close()
        asked = [(Path(d) / "replay.log").read_text(errors="replace").count('"POST /v1/chat/completions HTTP/1.1" 200')
                 - STREAMS]  # minus the direct run's
    failures = [r for r in run["results"] if isinstance(r, BaseException)]
    assert not failures, failures[:3]
    want_text, want_calls = _reference()
    for r in run["results"]:
        assert (r["text"], r["calls"], r["finish"]) == (want_text, want_calls, "tool_calls")
    assert asked[0] == STREAMS  # each stream asked the upstream once: none retried twice, none lost
    latencies = [x for r in run["results"] for x in r["latencies"]]
    seen_b, refused_b = run["scrapes"]["b"]
    assert seen_b and not refused_b  # the instance left answered every scrape
    last_b = seen_b[-1]
    added = {k: v for k, v in last_b.items() if k.startswith("streamparse_added_latency_seconds_bucket")}
    count = last_b.get("streamparse_added_latency_seconds_count{}", 0.0)

    def bucket_pct(q: float) -> float:
        bounds = sorted((float(json.loads(k[len("streamparse_added_latency_seconds_bucket"):])["le"]), v)
                        for k, v in added.items())
        return next((le for le, v in bounds if v >= q * count), float("inf"))

    chunks = STREAMS * upstream_chunks  # what the upstream sent through the instances (they join some on the way)
    figures = {
        "direct_latency_p50_ms": round(_pct(direct, 0.5) * 1e3, 2), "direct_latency_p99_ms": round(_pct(direct, 0.99) * 1e3, 2),
        "added_latency_p50_ms": round((_pct(latencies, 0.5) - _pct(direct, 0.5)) * 1e3, 2),
        "added_latency_p99_ms": round((_pct(latencies, 0.99) - _pct(direct, 0.99)) * 1e3, 2),
        "streams": STREAMS, "seconds": round(run["elapsed"], 2), "drain_signal_at_s": round(run["drained_at"], 2),
        "upstream_requests": asked[0], "upstream_chunks": chunks,
        "chunks_received_all": sum(r["chunks"] for r in run["results"]),  # every chunk, not the stamped only
        "latency_p50_ms": round(_pct(latencies, 0.5) * 1e3, 2), "latency_p99_ms": round(_pct(latencies, 0.99) * 1e3, 2),
        "proxy_work_per_read_p50_le_ms": bucket_pct(0.5) * 1e3, "proxy_work_per_read_p99_le_ms": bucket_pct(0.99) * 1e3,
        "instances_cpu_us_per_chunk": round(cpu / max(chunks, 1) * 1e6, 1),
        "scrapes_a_ok": len(run["scrapes"]["a"][0]), "scrapes_a_refused_after_drain": len(run["scrapes"]["a"][1]),
        "scrapes_b_ok": len(seen_b),
        "max_streams_in_flight_b": max(sum(v for k, v in s.items() if k.startswith("streamparse_streams_in_flight"))
                                       for s in seen_b),
    }
    benchmark.extra_info.update(figures)
    print(json.dumps(figures, indent=1))
