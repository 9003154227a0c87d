"""``transport.BackendPools``: a pool per backend origin, connections reused after a burst, a connection the server
closed never reused (and its slot freed), a full pool waits (never fails), a connection given to a request is not
closed as expired under it, errors are httpx's, and responses are read as ``body.Body`` s."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import httpx

import pytest

import streamparse.proxy.transport as transport_mod
from streamparse.proxy.body import pieces
from streamparse.proxy.transport import BackendPools, origin_key

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
    assert (a.size, b.size, other.size) == (15, 3, 7)
    assert origin_key(httpx.URL("http://a/")) == (b"http", b"a", 80)


def test_each_origin_keeps_its_own_limit_and_none_waits_behind_another() -> None:
    async def main() -> tuple[dict[str, Any], dict[str, Any], float]:
        (slow, slow_state), (fast, fast_state) = await _server(hold=0.3), await _server()
        slow_url, fast_url = _url(slow), _url(fast)
        async with httpx.AsyncClient(transport=BackendPools([(slow_url, 2), (fast_url, 1)])) as client:
            async def one(url: str) -> None:
                assert (await client.get(url + "/x")).text == "ok"

            async with anyio.create_task_group() as tg:
                for _ in range(6):
                    tg.start_soon(one, slow_url)
                await asyncio.sleep(0.05)  # the slow origin's pool is full, its requests queued
                start = anyio.current_time()
                await one(fast_url)
                fast_took = anyio.current_time() - start
        slow.close()
        fast.close()
        return slow_state, fast_state, fast_took

    slow_state, fast_state, fast_took = anyio.run(main)
    assert slow_state["most"] == 2 and slow_state["connections"] == 2  # its limit, its connections reused
    assert fast_state["connections"] == 1
    assert fast_took < 0.3  # not queued behind the slow origin's six (generous: its hold is 0.3 s each)


def test_a_burst_reuses_the_connections_of_the_last_one() -> None:
    async def main() -> dict[str, Any]:
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
                assert b"".join([p async for p in pieces(resp)]) == b"ok"
        server.close()
        return state

    state = anyio.run(main)
    assert state["connections"] == 30  # the second and third bursts opened none


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


def test_an_idle_connection_the_server_closed_leaves_the_pool_and_frees_its_slot() -> None:
    """A pool of one: its connection, closed by the server while idle, is dropped when the close arrives, and the
    next request opens a new one (never sent on the closed one, never waiting for a slot)."""
    async def main() -> dict[str, Any]:
        server, state = await _server(close_after=True)
        url = _url(server)
        pools = BackendPools([(url, 1)])
        async with httpx.AsyncClient(transport=pools) as client:
            for _ in range(3):
                with anyio.fail_after(5):
                    assert (await client.get(url + "/x")).text == "ok"
                await asyncio.sleep(0.05)
                pool = pools.pool_for(httpx.URL(url))
                assert pool.idle == [] and pool.count == 0
        server.close()
        return state

    assert anyio.run(main)["connections"] == 3


def test_a_burst_that_meets_the_keepalive_expiry_never_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """Idle connections expire while bursts come and go (httpcore could close one that a request had been given,
    before that request was sent on it: a ReadError, a 502). Every request is answered."""
    monkeypatch.setattr(transport_mod, "KEEPALIVE_EXPIRY", 0.03)

    async def main() -> list[str]:
        server, _ = await _server(hold=0.01)
        url = _url(server)
        answers: list[str] = []
        async with httpx.AsyncClient(transport=BackendPools([(url, 8)])) as client:
            async def one() -> None:
                answers.append((await client.get(url + "/x")).text)

            for n in range(12):
                async with anyio.create_task_group() as tg:
                    for _ in range(10):
                        tg.start_soon(one)
                await asyncio.sleep(0.01 * (n % 5))  # around the expiry: some idle ones expire, some are reused
        server.close()
        return answers

    assert anyio.run(main) == ["ok"] * 120


def test_errors_are_httpx_own() -> None:
    """A refused connection, a silent server and a full pool raise httpx's own exceptions, the request attached."""
    async def main() -> list[type[BaseException]]:
        errors: list[type[BaseException]] = []
        closed = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        refused_url = f"http://127.0.0.1:{closed.sockets[0].getsockname()[1]}/"
        closed.close()
        await closed.wait_closed()

        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await asyncio.sleep(3)
            writer.close()

        quiet = await asyncio.start_server(silent, "127.0.0.1", 0)
        quiet_url = f"http://127.0.0.1:{quiet.sockets[0].getsockname()[1]}/"
        async with httpx.AsyncClient(transport=BackendPools([(quiet_url, 1)]), timeout=0.2) as client:
            for url in (refused_url, quiet_url):
                try:
                    await client.get(url)
                except httpx.HTTPError as exc:
                    errors.append(type(exc))
                    assert exc.request.url == url
            async with anyio.create_task_group() as tg:  # one request holds the pool's one connection
                tg.start_soon(client.get, quiet_url, )
                await asyncio.sleep(0.05)
                try:
                    await client.get(quiet_url, timeout=httpx.Timeout(5, pool=0.05))
                except httpx.HTTPError as exc:
                    errors.append(type(exc))
                tg.cancel_scope.cancel()
        quiet.close()
        return errors

    assert anyio.run(main) == [httpx.ConnectError, httpx.ReadTimeout, httpx.PoolTimeout]


def _tls_server_files(folder: Any) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 and its key (openssl's command line), or the test is skipped."""
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("openssl: not installed")
    cert, key = str(folder / "cert.pem"), str(folder / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


def test_an_https_upstream_is_verified_as_httpx_verifies_it(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An https upstream whose certificate no trusted authority signed is refused (``httpx.ConnectError``); trusted
    (``SSL_CERT_FILE``, as httpx reads it), its body comes through TLS as pieces, and its connection is reused."""
    import ssl

    cert, key = _tls_server_files(tmp_path)

    async def main(trusted: bool) -> tuple[list[bytes | type[BaseException]], int]:
        server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server_context.load_cert_chain(cert, key)
        state = {"connections": 0}

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            state["connections"] += 1
            try:
                while await reader.readuntil(b"\r\n\r\n"):
                    writer.write(_RESPONSE)
                    await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
                pass
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=server_context)
        url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        got: list[bytes | type[BaseException]] = []
        async with httpx.AsyncClient(transport=BackendPools([(url, 2)])) as client:
            for _ in range(2):
                try:
                    async with client.stream("GET", url) as resp:
                        got.append(b"".join([p async for p in pieces(resp)]))
                except httpx.HTTPError as exc:
                    got.append(type(exc))
        server.close()
        return got, state["connections"]

    assert anyio.run(main, False)[0] == [httpx.ConnectError, httpx.ConnectError]  # (refused in the handshake)
    monkeypatch.setenv("SSL_CERT_FILE", cert)
    assert anyio.run(main, True) == ([b"ok", b"ok"], 1)
