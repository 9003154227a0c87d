"""``pools.BackendPools``: a pool per backend origin, connections reused after a burst, a connection the server
closed never reused, a full pool waits (never fails), and responses still read by ``coalesce``."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import httpx

from streamparse.proxy.coalesce import _Arrived, coalesce
from streamparse.proxy.pools import BackendPools, _Pool, origin_key

_RESPONSE = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"


async def _server(close_after: bool = False, hold: float = 0.0) -> tuple[asyncio.Server, dict[str, Any]]:
    """An HTTP/1.1 server answering ``ok`` to every request on a connection (closing it after the first answer
    with ``close_after``, though it says keep-alive); counts the connections it accepted."""
    state: dict[str, Any] = {"connections": 0, "in_flight": 0, "most": 0}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        state["connections"] += 1
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                state["in_flight"] += 1
                state["most"] = max(state["most"], state["in_flight"])
                await asyncio.sleep(hold)
                state["in_flight"] -= 1
                writer.write(_RESPONSE)
                await writer.drain()
                if close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0), state


def _url(server: asyncio.Server) -> str:
    return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"


def test_a_pool_per_origin_and_the_rest_shared() -> None:
    pools = BackendPools([("http://a:8000/v1", 10), ("http://a:8000/other", 5), ("https://b/v1", 3)], default=7)
    a, b = pools.pool_for(httpx.URL("http://a:8000/x")), pools.pool_for(httpx.URL("https://b:443/y"))
    other = pools.pool_for(httpx.URL("http://c/"))
    assert len({id(a), id(b), id(other)}) == 3
    assert a._pool._max_connections == 15 and b._pool._max_connections == 3 and other._pool._max_connections == 7
    assert all(type(t._pool) is _Pool for t in (a, b, other))
    assert origin_key(httpx.URL("http://a/")) == (b"http", b"a", 80)


def test_a_burst_reuses_the_connections_of_the_last_one() -> None:
    async def main() -> tuple[dict[str, Any], bool]:
        server, state = await _server(hold=0.05)
        url = _url(server)
        async with httpx.AsyncClient(transport=BackendPools([(url, 40)])) as client:
            async def one() -> None:
                async with client.stream("GET", url + "/x") as resp:
                    assert await resp.aread() == b"ok"

            for _ in range(3):
                async with anyio.create_task_group() as tg:
                    for _ in range(30):
                        tg.start_soon(one)
            async with client.stream("GET", url + "/x") as resp:
                read_directly = coalesce(resp) and type(resp.stream) is _Arrived
                await resp.aread()
        server.close()
        return state, read_directly

    state, read_directly = anyio.run(main)
    assert state["connections"] == 30  # the second and third bursts opened none
    assert read_directly


def test_a_full_pool_queues_and_every_request_completes() -> None:
    async def main() -> dict[str, Any]:
        server, state = await _server(hold=0.02)
        url = _url(server)
        done = []
        async with httpx.AsyncClient(transport=BackendPools([(url, 3)])) as client:
            async def one() -> None:
                done.append((await client.get(url + "/x")).text)

            async with anyio.create_task_group() as tg:
                for _ in range(12):
                    tg.start_soon(one)
        server.close()
        assert done == ["ok"] * 12
        return state

    state = anyio.run(main)
    assert state["most"] <= 3 and state["connections"] <= 3


def test_a_connection_the_server_closed_is_not_reused() -> None:
    async def main() -> dict[str, Any]:
        server, state = await _server(close_after=True)
        url = _url(server)
        async with httpx.AsyncClient(transport=BackendPools([(url, 5)])) as client:
            for _ in range(4):
                assert (await client.get(url + "/x")).text == "ok"
                await asyncio.sleep(0.05)  # the server's close arrives
        server.close()
        return state

    assert anyio.run(main)["connections"] == 4
