"""Load runs of the proxy beyond its cost (``proxycost``, which also gives the load test's figures,
``proxyload``): fairness beside one huge argument, and throughput with several workers; ``streamparse serve``
and the replay upstream run as real processes on loopback. Also the pieces the load runs share: reading a
streaming answer (``sse_reads``), the servers, process CPU and memory from /proc, percentiles.

Per-chunk latency is measured with the upstream's ``x_sent`` stamp (same machine, same clock): receive time
minus send time.

Invariant: a run counts as passed only if every stream arrived complete and identical to the
single-request result (otherwise ``LoadError``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from contextlib import ExitStack, contextmanager
from typing import Any, AsyncIterator, Iterator

import anyio
import httpx

from .examples import EXAMPLE_TOOLS
from .leanload import decode_answer, lean_payload, lean_round, request_bytes, run_lean
from ..proxy.runner import REUSE_PORT_SPREADS, free_port, port_open, started_process
from ..wire.sse import SSEDecoder

__all__ = ["run_fairness", "run_workers", "sse_reads", "cpu_ns", "LoadError"]


class LoadError(AssertionError):
    """A stream under load differed from its reference (lost, duplicated or reordered data, or an error)."""


def cpu_ns(pids: list[int]) -> int:
    """CPU time used so far by every thread of ``pids`` (Linux schedstat, nanoseconds)."""
    total = 0
    for pid in pids:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as fh:
                    total += int(fh.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return total


def _peak_rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


async def sse_reads(resp: httpx.Response, where: str = "") -> AsyncIterator[tuple[float, float, list[dict[str, Any]]]]:
    """Each network read of a streaming answer: when it came (``time.perf_counter()``, ``time.time()``: the
    second compares with an upstream's send stamps) and the chunks it completed.
    A status other than 200 or an error event is a LoadError (``where`` prefixes its message)."""
    if resp.status_code != 200:
        raise LoadError(f"{where}status {resp.status_code}: {(await resp.aread())[:300]!r}")
    decoder = SSEDecoder()
    async for raw in resp.aiter_bytes():
        now, wall = time.perf_counter(), time.time()
        chunks = [json.loads(e.data) for e in decoder.feed(raw) if e.data is not None and e.data != "[DONE]"]
        for chunk in chunks:
            if "error" in chunk:
                raise LoadError(f"{where}error event: {chunk['error']}")
        yield now, wall, chunks


async def _stream(client: httpx.AsyncClient, url: str, payload: dict[str, Any]) -> tuple[dict[str, Any], list[float]]:
    """One streaming request: (what a client accumulates, per-chunk latencies in seconds)."""
    content: list[str] = []
    calls: list[tuple[str, str]] = []
    latencies: list[float] = []
    chunks = 0
    finish = None
    async with client.stream("POST", url, json=payload) as resp:
        async for _, now, read in sse_reads(resp):
            for chunk in read:
                chunks += 1
                if "x_sent" in chunk:
                    latencies.append(now - chunk["x_sent"])
                for choice in chunk.get("choices", []):
                    delta = choice.get("delta", {})
                    content.append(delta.get("content") or "")
                    calls += [(c["function"]["name"], c["function"]["arguments"]) for c in delta.get("tool_calls") or []]
                    finish = choice.get("finish_reason") or finish
    return {"content": "".join(content), "calls": calls, "finish": finish, "chunks": chunks}, latencies


async def _many(url: str, payload: dict[str, Any], concurrency: int, *, extra: dict[str, Any] | None = None
                ) -> tuple[list[dict[str, Any]], list[float], float]:
    """``concurrency`` identical streams at once (plus, if given, one ``extra`` stream beside them,
    whose result is returned last and whose latencies are not counted)."""
    results: list[dict[str, Any]] = []
    latencies: list[float] = []
    side: list[dict[str, Any]] = []
    limits = httpx.Limits(max_connections=concurrency + 1, max_keepalive_connections=concurrency + 1)
    async with httpx.AsyncClient(timeout=300, limits=limits) as client:
        async def one() -> None:
            result, lat = await _stream(client, url, payload)
            results.append(result)
            latencies.extend(lat)

        async def heavy() -> None:
            assert extra is not None
            side.append((await _stream(client, url, extra))[0])

        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            if extra is not None:
                tg.start_soon(heavy)
            for _ in range(concurrency):
                tg.start_soon(one)
        elapsed = time.perf_counter() - start
    return results + side, latencies, elapsed


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


@contextmanager
def _servers(token_delay: float, workers: int = 1) -> Iterator[tuple[str, str, list[int]]]:
    """Replay upstream + ``streamparse serve`` as real processes: (direct base, proxy base, proxy pids)."""
    up_port, proxy_port = free_port(), free_port()
    cmd = [sys.executable, "-m", "streamparse"]
    with started_process([*cmd, "replay", "--port", str(up_port), "--delay", str(token_delay), "--stamp",
                          "--log-level", "warning"], lambda: port_open(up_port)), \
            started_process([*cmd, "serve", "--upstream", f"http://127.0.0.1:{up_port}/v1", "--port", str(proxy_port),
                             "--workers", str(workers), "--log-level", "warning"], lambda: port_open(proxy_port)) as proxy:
        yield f"http://127.0.0.1:{up_port}/v1", f"http://127.0.0.1:{proxy_port}/v1", _process_tree(proxy.pid)


def _process_tree(pid: int) -> list[int]:
    """``pid`` and its children (uvicorn's worker processes), from /proc."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [pid, *(int(c) for c in fh.read().split())]
    except OSError:
        return [pid]


def _payload(model: str, tools: bool = True) -> dict[str, Any]:
    payload = {"model": model, "stream": True, "messages": [{"role": "user", "content": "go"}]}
    return {**payload, "tools": EXAMPLE_TOOLS} if tools else payload


async def _probe(url: str, until: anyio.Event, delays: list[float]) -> None:
    """GET ``url`` every 50 ms until ``until`` is set, recording how long each answer took."""
    async with httpx.AsyncClient(timeout=60) as client:
        while not until.is_set():
            start = time.perf_counter()
            await client.get(url)
            delays.append(time.perf_counter() - start)
            await anyio.sleep(0.05)


def run_fairness(concurrency: int = 20, token_delay: float = 0.02, size: int = 1_000_000) -> dict[str, Any]:
    """Do other streams stall while one call writes a ``size``-character argument?

    ``concurrency`` paced streams run alone, then beside one unpaced stream writing
    the big argument. Reported: the paced streams' per-chunk latency (upstream send
    to client receipt: a stalled event loop shows here) both ways, and the slowest
    ``/v1/models`` answer while the big stream runs. (Inter-chunk gaps are no
    measure: a call's markup is held until the call is whole, by design.)
    """
    payload = _payload("long")
    big = _payload(f"write_file:{size}")

    async def beside() -> tuple[list[dict[str, Any]], list[float], list[float], float]:
        done, delays = anyio.Event(), list[float]()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_probe, proxy_base + "/models", done, delays)
            results, latencies, elapsed = await _many(proxy_base + "/chat/completions", payload, concurrency, extra=big)
            done.set()
        return results, latencies, delays, elapsed

    with _servers(token_delay) as (_, proxy_base, _pids):
        alone, lat_alone, _ = anyio.run(_many, proxy_base + "/chat/completions", payload, concurrency)
        results, lat_beside, models_delays, elapsed = anyio.run(beside)
    heavy = results.pop()
    (name, arguments), = heavy["calls"]
    if name != "write_file" or len(json.loads(arguments)["content"]) != size:
        raise LoadError("the big call did not arrive whole")
    if any(_comparable(r) != _comparable(alone[0]) for r in results + alone):
        raise LoadError("a paced stream differed from the reference")
    return {
        "concurrency": concurrency,
        "big_argument_chars": size,
        "big_stream_upstream_chunks": heavy["chunks"],
        "seconds_with_big_stream": elapsed,
        "latency_ms_p50_alone": _pct(lat_alone, 0.5) * 1e3,
        "latency_ms_p99_alone": _pct(lat_alone, 0.99) * 1e3,
        "latency_ms_p50_beside_big": _pct(lat_beside, 0.5) * 1e3,
        "latency_ms_p99_beside_big": _pct(lat_beside, 0.99) * 1e3,
        "latency_ms_max_beside_big": max(lat_beside) * 1e3 if lat_beside else float("nan"),
        "models_ms_max_beside_big": max(models_delays) * 1e3 if models_delays else float("nan"),
    }


def run_workers(concurrency: int = 200, workers: tuple[int, ...] = (1, 2), rounds: int = 3, each: int = 5
                ) -> dict[str, Any]:
    """Throughput of ``streamparse serve --workers N`` for each N, all in front of one lean upstream and driven by
    the lean client (``leanload``: both cost next to nothing, so the proxy sets the pace), taking turns round by
    round, so a machine that slows down mid-run slows all alike. Also the CPU each side used per request: the
    proxy's process tree, the upstream's, the client's (this process), and the share left to the proxy."""
    figures: dict[str, Any] = {"concurrency": concurrency, "rounds": rounds, "requests_per_client": each}
    cmd = [sys.executable, "-m", "streamparse"]
    up_port = free_port()
    targets: dict[int, tuple[int, bytes]] = {}  # workers -> the server's port, the request sent to it
    with ExitStack() as stack:
        upstream = stack.enter_context(started_process(
            [sys.executable, "-m", "streamparse.harness.leanload", "--port", str(up_port)], lambda: port_open(up_port)))
        roots: dict[int, int] = {}
        for n in workers:
            port = free_port()
            proc = stack.enter_context(started_process(
                [*cmd, "serve", "--upstream", f"http://127.0.0.1:{up_port}/v1", "--port", str(port), "--workers",
                 str(n), "--log-level", "warning"], lambda port=port: port_open(port)))  # type: ignore[misc]
            roots[n] = proc.pid
            _all_listening(port, n)
            targets[n] = port, request_bytes("127.0.0.1", port, "/v1/chat/completions", lean_payload())
            reference = anyio.run(_stream_one, f"http://127.0.0.1:{port}/v1/chat/completions", lean_payload())
            figures[f"workers_{n}_processes"] = len(_process_tree(proc.pid))
        for n in workers:  # a warm-up each (every worker's first requests, imports done)
            run_lean(lean_round("127.0.0.1", *targets[n], 4 * n))
        seconds = dict.fromkeys(workers, 0.0)
        cpu = {n: [0, 0, 0.0] for n in workers}  # proxy ns, upstream ns, client s
        for _ in range(rounds):
            for n in workers:
                pids = _process_tree(roots[n])
                before = (cpu_ns(pids), cpu_ns([upstream.pid]), _own_cpu())
                answers, elapsed = run_lean(lean_round("127.0.0.1", *targets[n], concurrency, each))
                cpu[n][0] += cpu_ns(pids) - before[0]
                cpu[n][1] += cpu_ns([upstream.pid]) - before[1]
                cpu[n][2] += _own_cpu() - before[2]
                seconds[n] += elapsed
                for raw in answers:  # (off the clock)
                    try:
                        got = decode_answer(raw)
                    except (ValueError, KeyError, IndexError) as exc:
                        raise LoadError(f"an answer with {n} workers is broken: {exc}") from None
                    if _comparable(got) != _comparable(reference):
                        raise LoadError(f"streams differ with {n} workers")
    for n in workers:
        done = concurrency * each * rounds
        figures[f"workers_{n}_requests_per_s"] = done / seconds[n]
        figures[f"workers_{n}_proxy_cpu_ms_per_request"] = cpu[n][0] / 1e6 / done
        figures[f"workers_{n}_upstream_cpu_ms_per_request"] = cpu[n][1] / 1e6 / done
        figures[f"workers_{n}_client_cpu_ms_per_request"] = cpu[n][2] * 1e3 / done
        figures[f"workers_{n}_proxy_cores"] = cpu[n][0] / 1e9 / seconds[n]
    if len(workers) == 2:
        a, b = workers
        figures[f"throughput_ratio_{b}_to_{a}_workers"] = (figures[f"workers_{b}_requests_per_s"]
                                                          / figures[f"workers_{a}_requests_per_s"])
    return figures


def _all_listening(port: int, workers: int, timeout: float = 30.0) -> None:
    """Wait until ``workers`` sockets listen on ``port`` (each worker's own, on Linux: see
    ``runner.listening_socket``), so no round starts while one worker takes every connection. Where the sockets
    cannot be counted (no /proc, or one shared socket), only the first is waited for (``port_open``)."""
    if workers < 2 or not REUSE_PORT_SPREADS:
        return
    suffix = f":{port:04X}"  # /proc/net/tcp: local address as HEXIP:PORT, state 0A for LISTEN
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open("/proc/net/tcp") as fh:
                rows = [line.split() for line in fh][1:]
        except OSError:
            return
        listening = sum(1 for row in rows if len(row) > 3 and row[1].endswith(suffix) and row[3] == "0A")
        if listening >= workers:
            return
        time.sleep(0.05)
    raise LoadError(f"{workers} workers did not all listen on port {port} within {timeout:.0f} s")


async def _stream_one(url: str, payload: dict[str, Any]) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=60) as client:
        return (await _stream(client, url, payload))[0]


def _own_cpu() -> float:
    times = os.times()
    return times.user + times.system
