"""Ways to read a streamed upstream body, side by side on the same replayed streams (a real upstream process).

Run: pytest bench/test_bench_upstream_read.py --benchmark-only -s

Readers: httpx ``aiter_bytes`` (what the proxy did: one piece per transfer chunk, so one per SSE event),
httpx ``aiter_raw``, httpx ``aiter_bytes`` through ``proxy.transport.BackendPools`` (what the proxy does now: all
that arrived, in one piece), and aiohttp's ``iter_any`` when aiohttp is installed. Each round reads several
streams at once, unpaced (the upstream outruns the reader) and paced (2 ms per event: one event per read).
extra_info holds CPU µs per SSE event of this process (every thread, schedstat) and pieces per stream;
compare readers within one run. (httpx's ``aiter_bytes(chunk_size=N)`` is left out: it holds bytes back until N
have arrived, which a proxy must not do.)
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any, Awaitable, Callable, Iterator

import anyio
import httpx
import pytest

from streamparse.harness.proxycost import cpu_ns
from streamparse.proxy.transport import BackendPools
from streamparse.proxy.runner import free_port, port_open, started_process

PAYLOAD = {"model": "long", "stream": True, "messages": [{"role": "user", "content": "go"}]}
# (url, streams) -> (pieces, events, CPU ns of this process while reading: the client is made before)
Reader = Callable[[str, int], Awaitable[tuple[int, int, int]]]


@pytest.fixture(scope="module")
def upstreams() -> Iterator[dict[str, str]]:
    """Replay upstreams as real processes: unpaced and paced at 2 ms per event."""
    urls: dict[str, str] = {}
    with started_process(*_replay(0.0, urls, "unpaced")), started_process(*_replay(0.002, urls, "paced")):
        yield urls


def _replay(delay: float, urls: dict[str, str], name: str) -> tuple[list[str], Callable[[], bool]]:
    port = free_port()
    urls[name] = f"http://127.0.0.1:{port}/v1/chat/completions"
    return ([sys.executable, "-m", "streamparse", "replay", "--port", str(port), "--delay", str(delay),
             "--log-level", "warning"], lambda: port_open(port))


async def _count(pieces: Any, counts: list[int]) -> None:
    """Pieces and SSE events read (the same tally for every reader)."""
    async for piece in pieces:
        counts[0] += 1
        counts[1] += piece.count(b"\n\n")


async def _all(one: Callable[[], Awaitable[None]], streams: int, counts: list[int], before: int) -> tuple[int, int, int]:
    async with anyio.create_task_group() as tg:
        for _ in range(streams):
            tg.start_soon(one)
    return counts[0], counts[1], cpu_ns([os.getpid()]) - before


def _httpx(mode: str) -> Reader:
    async def read(url: str, streams: int) -> tuple[int, int, int]:
        counts = [0, 0]
        limits = httpx.Limits(max_connections=streams)
        transport = BackendPools([(url, streams)]) if mode == "coalesced" else None
        async with httpx.AsyncClient(timeout=60, limits=limits, transport=transport) as client:  # (TLS: ~20 ms)
            before = cpu_ns([os.getpid()])

            async def one() -> None:
                async with client.stream("POST", url, json=PAYLOAD) as resp:
                    await _count(resp.aiter_raw() if mode == "raw" else resp.aiter_bytes(), counts)

            return await _all(one, streams, counts, before)

    return read


async def _aiohttp(url: str, streams: int) -> tuple[int, int, int]:
    import aiohttp

    counts = [0, 0]
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=streams)) as session:
        before = cpu_ns([os.getpid()])

        async def one() -> None:
            async with session.post(url, json=PAYLOAD) as resp:
                await _count(resp.content.iter_any(), counts)

        return await _all(one, streams, counts, before)


READERS: dict[str, Reader | None] = {
    "httpx_aiter_bytes": _httpx("bytes"),
    "httpx_aiter_raw": _httpx("raw"),
    "httpx_coalesced": _httpx("coalesced"),
    "aiohttp_iter_any": _aiohttp if importlib.util.find_spec("aiohttp") else None,
}


LOOPS = {"asyncio": {}, "uvloop": {"use_uvloop": True}}  # streamparse serve runs on uvloop (where a reader bug hid)


@pytest.mark.parametrize("loop", list(LOOPS))
@pytest.mark.parametrize("pace,streams", [("unpaced", 10), ("paced", 4)])
@pytest.mark.parametrize("reader", list(READERS))
def test_read_upstream_stream(benchmark: Any, upstreams: dict[str, str], reader: str, pace: str, streams: int,
                              loop: str) -> None:
    read = READERS[reader]
    if read is None:
        pytest.skip(f"{reader}: not installed")
    if loop == "uvloop" and not importlib.util.find_spec("uvloop"):
        pytest.skip("uvloop: not installed")
    totals = {"cpu": 0, "pieces": 0, "events": 0, "rounds": 0}

    def one_round() -> None:
        pieces, events, cpu = anyio.run(read, upstreams[pace], streams, backend_options=LOOPS[loop])
        totals["cpu"] += cpu
        totals["pieces"] += pieces
        totals["events"] += events
        totals["rounds"] += 1

    benchmark.pedantic(one_round, rounds=3, iterations=1, warmup_rounds=1)
    streams_read = streams * totals["rounds"]
    assert totals["events"] == streams_read * (totals["events"] // streams_read)  # every stream whole
    benchmark.extra_info.update({
        "cpu_us_per_event": round(totals["cpu"] / 1e3 / totals["events"], 2),
        "pieces_per_stream": round(totals["pieces"] / streams_read, 1),
        "events_per_stream": totals["events"] // streams_read,
    })
    print(reader, pace, loop, benchmark.extra_info)
