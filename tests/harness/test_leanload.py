"""``leanload``: the lean upstream answers as the replay upstream does, the lean client's answers decode as the
load test's client reads them, a broken answer is refused, and ``run_workers`` drives real ``serve`` processes
with them (every answer checked against the reference)."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Iterator

import httpx
import pytest

from streamparse.harness.leanload import (decode_answer, lean_payload, lean_round, request_bytes,
                                          serve_lean_upstream)
from streamparse.harness.loadtest import run_workers
from streamparse.harness.replay import create_replay_app
from streamparse.proxy.chunked import dechunk
from streamparse.proxy.runner import free_port, port_open


@pytest.fixture(scope="module")
def lean_port() -> Iterator[int]:
    port = free_port()
    loop = asyncio.new_event_loop()
    task: list[asyncio.Task[None]] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        task.append(loop.create_task(serve_lean_upstream(port)))
        try:
            loop.run_until_complete(task[0])
        except asyncio.CancelledError:
            pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    for _ in range(200):
        if port_open(port):
            break
        threading.Event().wait(0.02)
    yield port
    loop.call_soon_threadsafe(task[0].cancel)
    thread.join(5)


def _replay_answer(payload: dict[str, Any]) -> bytes:
    async def fetch() -> bytes:
        transport = httpx.ASGITransport(app=create_replay_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://replay") as client:
            return (await client.post("/v1/chat/completions", json=payload)).content

    return asyncio.run(fetch())


def test_the_lean_upstream_sends_the_replays_events_one_transfer_chunk_each(lean_port: int) -> None:
    payload = lean_payload()
    with httpx.Client() as client:
        resp = client.post(f"http://127.0.0.1:{lean_port}/v1/chat/completions", json=payload)
        assert resp.status_code == 200 and resp.headers["transfer-encoding"] == "chunked"
        replayed = _replay_answer(payload)
        strip = [json.loads(line[6:]) for line in replayed.split(b"\n") if line.startswith(b"data: {")]
        mine = [json.loads(line[6:]) for line in resp.content.split(b"\n") if line.startswith(b"data: {")]
        for chunk in strip + mine:  # (the id and time of creation differ by request)
            chunk.pop("id"), chunk.pop("created")
        assert mine == strip
        assert client.get(f"http://127.0.0.1:{lean_port}/v1/models").json()["data"][0]["id"] == "long"
        assert client.get(f"http://127.0.0.1:{lean_port}/elsewhere").status_code == 404
    request = request_bytes("127.0.0.1", lean_port, "/v1/chat/completions", payload)
    (raw,), _ = asyncio.run(lean_round("127.0.0.1", lean_port, request, 1))
    chunks = dechunk(raw.partition(b"\r\n\r\n")[2])
    assert len(chunks) == len(mine) + 1 + resp.content.count(b"\n: ")  # every data event, [DONE], each ping
    assert all(c.endswith(b"\n\n") and c.count(b"\n\n") == 1 for c in chunks)


def test_the_lean_client_reads_whole_answers(lean_port: int) -> None:
    request = request_bytes("127.0.0.1", lean_port, "/v1/chat/completions", lean_payload())
    answers, seconds = asyncio.run(lean_round("127.0.0.1", lean_port, request, 3, each=2))
    assert len(answers) == 6 and seconds > 0
    results = [decode_answer(a) for a in answers]
    assert all(r == results[0] for r in results)
    assert results[0]["chunks"] > 100 and "<tool_call>" in results[0]["content"]  # no proxy between: text as sent


@pytest.mark.parametrize("raw", [
    b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 2\r\n\r\n{}",
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + b"%x\r\n" % 31 + b'data: {"error": {"message": "x"}}' + b"\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
])
def test_a_broken_answer_is_refused(raw: bytes) -> None:
    with pytest.raises(ValueError):
        decode_answer(raw)


def test_a_chunk_extension_is_read_past() -> None:
    event = b'data: {"choices": [{"delta": {"content": "hi"}, "finish_reason": "stop"}]}\n\n'
    raw = b"HTTP/1.1 200 OK\r\n\r\n" + b"%x;name=value\r\n" % len(event) + event + b"\r\n0\r\n\r\n"
    assert decode_answer(raw) == {"content": "hi", "calls": [], "finish": "stop", "chunks": 1}


def test_run_workers_drives_real_servers_and_checks_every_answer() -> None:
    figures = run_workers(4, workers=(1, 2), rounds=1, each=2)
    assert figures["workers_2_processes"] >= 3  # the supervisor and its two workers
    for n in (1, 2):
        assert figures[f"workers_{n}_requests_per_s"] > 0 and figures[f"workers_{n}_proxy_cpu_ms_per_request"] > 0
    assert figures["throughput_ratio_2_to_1_workers"] > 0
