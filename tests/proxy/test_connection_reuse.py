"""Upstream connections are kept across requests: a body whose reader stopped at its last event (``[DONE]``) is
read to its end when closed (``body.ended``), within ``TAIL_BYTES`` and ``TAIL_SECONDS``; a burst reuses the idle
connections of the last one; the proxy, streaming calls out of an upstream, keeps its upstream connection for the
next request, and a stream that fails or is cut closes it."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Awaitable, Callable

import anyio
import httpx
import pytest
from openai import OpenAI

from helpers import TOOLS, RawServer
from streamparse.harness.replay import create_replay_app
from streamparse.proxy.app import create_app
from streamparse.proxy.body import TAIL_BYTES, TAIL_SECONDS, ended, pieces
from streamparse.proxy.config import ProxyConfig
from streamparse.proxy.transport import BackendPools
from streamparse.proxy.runner import ServerThread
from upstreams import script

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
LAST = b"data: [DONE]\n\n"
Answer = Callable[[asyncio.StreamWriter], Awaitable[None]]


def chunk(data: bytes) -> bytes:
    return b"%x\r\n" % len(data) + data + b"\r\n"


def events(n: int) -> bytes:
    return b"".join(chunk(b'data: {"n": %d}\n\n' % i) for i in range(n))


async def until_done(answer: Answer, *, mark: bool, requests: int = 2) -> tuple[int, list[bytes], float]:
    """``requests`` requests, each read only up to the piece holding ``[DONE]`` and then closed (``ended`` first
    when ``mark``), as the proxy reads a stream it rewrites. Returns the connections the server accepted, each
    body's bytes up to ``[DONE]``, and the longest close."""
    bodies: list[bytes] = []
    slowest = 0.0
    async with RawServer(answer) as server:
        async with httpx.AsyncClient(transport=BackendPools([(server.url, 4)])) as client:
            for _ in range(requests):
                with anyio.fail_after(10):
                    resp = await client.send(client.build_request("GET", server.url), stream=True)
                    got = b""
                    async for piece in pieces(resp):
                        got += piece
                        if got.endswith(LAST):
                            break
                    bodies.append(got)
                    if mark:
                        ended(resp)
                    start = anyio.current_time()
                    await resp.aclose()
                    slowest = max(slowest, anyio.current_time() - start)
                    await asyncio.sleep(0.02)  # a closed connection's end reaches the pool
    return server.connections, bodies, slowest


async def late_end(out: asyncio.StreamWriter) -> None:
    """Events and ``[DONE]``, then the chunked coding's end 30 ms later (the reader is done by then)."""
    out.write(HEAD + events(3) + chunk(LAST))
    await out.drain()
    await asyncio.sleep(0.03)
    out.write(b"0\r\n\r\n")
    await out.drain()


def test_a_body_read_up_to_its_last_event_keeps_its_connection_once_marked_ended() -> None:
    connections, bodies, _ = anyio.run(lambda: until_done(late_end, mark=True, requests=3))
    assert bodies == [events(0) + b"".join(b'data: {"n": %d}\n\n' % i for i in range(3)) + LAST] * 3
    assert connections == 1


def test_a_body_closed_before_its_end_without_the_mark_costs_its_connection() -> None:
    connections, _, _ = anyio.run(lambda: until_done(late_end, mark=False, requests=3))
    assert connections == 3


async def never_ends(out: asyncio.StreamWriter) -> None:
    out.write(HEAD + events(2) + chunk(LAST))  # and then nothing: the body stays open
    await out.drain()


async def long_tail(out: asyncio.StreamWriter) -> None:
    out.write(HEAD + chunk(LAST))
    await out.drain()
    await asyncio.sleep(0.01)
    filler = b"x" * 8192
    for _ in range(TAIL_BYTES // len(filler) + 4):  # more than a tail may be, then the end
        out.write(chunk(filler))
    out.write(b"0\r\n\r\n")
    await out.drain()


@pytest.mark.parametrize("answer", [never_ends, long_tail])
def test_a_tail_that_does_not_end_soon_and_small_is_dropped_with_its_connection(answer: Answer) -> None:
    connections, bodies, slowest = anyio.run(lambda: until_done(answer, mark=True))
    assert all(body.endswith(LAST) for body in bodies)
    assert connections == 2  # not reused, and no error reached the reader
    assert slowest < TAIL_SECONDS + 2  # a close waits at most about TAIL_SECONDS (generous on a loaded machine)


def test_a_burst_reuses_every_idle_connection_of_the_last_one() -> None:
    """httpcore asked every idle connection's socket on every request (a poll each: n * n / 2 for a burst of n)
    and gave the first idle one to every request of a burst. Here a connection learns of its server's close from
    the loop, and each request of the second burst takes an idle connection of its own."""
    async def main() -> int:
        async def answer(out: asyncio.StreamWriter) -> None:
            await asyncio.sleep(0.05)
            out.write(HEAD + chunk(LAST) + b"0\r\n\r\n")
            await out.drain()

        async with RawServer(answer) as server:
            async with httpx.AsyncClient(transport=BackendPools([(server.url, 30)])) as client:
                async def one() -> None:
                    assert (await client.get(server.url)).content == LAST

                for _ in range(2):
                    async with anyio.create_task_group() as tg:
                        for _ in range(30):
                            tg.start_soon(one)
        return server.connections

    assert anyio.run(main) == 30  # the second burst reused every connection


@pytest.fixture(scope="module")
def upstream_ports() -> Any:
    """The replay upstream, with the client port of each request it serves: one port, one connection."""
    ports: list[int] = []
    replay = create_replay_app(script)

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("client"):
            ports.append(scope["client"][1])
        await replay(scope, receive, send)

    with ServerThread(recording) as upstream:
        yield upstream, ports


def test_the_proxy_streaming_calls_keeps_its_upstream_connection(upstream_ports: Any) -> None:
    upstream, ports = upstream_ports
    # (chat_template off: the template lookup is a request of its own on another path)
    with ServerThread(create_app(ProxyConfig.single(upstream.url + "/v1", {"chat_template": "off"}))) as proxy:
        client = OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0)
        for _ in range(3):
            with client.chat.completions.stream(model="hermes", messages=[{"role": "user", "content": "go"}],
                                                tools=TOOLS) as stream:
                for _ in stream:
                    pass
                message = stream.get_final_completion().choices[0].message
            assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [
                ("get_weather", {"city": "Paris"})]
    assert len(ports) == 3 and len(set(ports)) == 1  # three requests upstream, one connection


def test_a_close_cancelled_while_it_reads_the_tail_still_frees_the_connection() -> None:
    async def main() -> None:
        async with RawServer(never_ends) as server:
            async with httpx.AsyncClient(transport=BackendPools([(server.url, 1)])) as client:  # a pool of one
                resp = await client.send(client.build_request("GET", server.url), stream=True)
                async for piece in pieces(resp):
                    if piece.endswith(LAST):
                        break
                ended(resp)
                with anyio.move_on_after(0.05):  # cancelled before TAIL_SECONDS: the tail never came
                    await resp.aclose()
                with anyio.fail_after(10):  # the one connection of the pool is free again
                    late = await client.send(client.build_request("GET", server.url), stream=True)
                    await late.aclose()

    anyio.run(main)


def test_a_stream_that_fails_closes_its_upstream_connection_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the upstream's own [DONE] lets the proxy read a body's tail; a stream that fails (here: an event that is
    not JSON, the upstream still writing) closes its upstream connection at once, so the backend stops."""
    import streamparse.proxy.body as body_mod

    monkeypatch.setattr(body_mod, "TAIL_SECONDS", 30.0)  # (were the tail read, the close would wait this long)

    async def broken(out: asyncio.StreamWriter) -> None:
        event = b'data: {"choices": [{"index": 0, "delta": {"content": "hi"}}]}\n\n'
        out.write(HEAD + chunk(event) + chunk(b"data: {oops\n\n"))  # and the body goes on, never ended
        await out.drain()

    async def main() -> tuple[str, float]:
        async with RawServer(broken) as upstream:
            with ServerThread(create_app(ProxyConfig.single(upstream.url + "v1"))) as proxy:
                async with httpx.AsyncClient(timeout=10) as client:
                    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}],
                            "tools": TOOLS}
                    text = (await client.post(proxy.url + "/v1/chat/completions", json=body)).text
                    start = anyio.current_time()
                    with anyio.fail_after(10):
                        while upstream.ended < 1:
                            await asyncio.sleep(0.01)
                    return text, anyio.current_time() - start

    text, waited = anyio.run(main)
    assert "invalid JSON" in text  # the client was told (an error event ends its stream)
    assert waited < 10  # closed with the client's end, not after the 30 s a tail read may take
