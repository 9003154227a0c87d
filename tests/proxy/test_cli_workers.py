"""`streamparse serve --workers N`: real processes under uvicorn's supervisor, driven with the openai client,
and the factory each worker builds its app with."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest
from openai import OpenAI
from starlette.applications import Starlette

from helpers import TOOLS
from streamparse.proxy.config import ConfigError
from streamparse.harness.replay import create_replay_app
from streamparse.proxy.runner import (REUSE_PORT_SPREADS, ServerThread, free_port, listening_socket, port_open,
                                      started_process)
from streamparse.proxy.workers import ENV_VAR, app_from_environment, config_from_settings
from upstreams import script, wait_for

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts worker connections through /proc")


@pytest.fixture(scope="module")
def upstream() -> Iterator[ServerThread]:
    with ServerThread(create_replay_app(script, token_delay=0.03)) as server:  # slow enough to overlap requests
        yield server


def worker_pids(parent: int) -> list[int]:
    """The uvicorn workers of ``parent``: its children started by multiprocessing's spawn."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                spawned = b"spawn_main" in fh.read()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and spawned:
            found.append(int(entry))
    return sorted(found)


def connected_to(pid: int, port: int) -> bool:
    """Whether process ``pid`` holds a TCP connection to 127.0.0.1:``port``."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        return False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as fh:
                rows = [line.split() for line in fh.readlines()[1:]]
        except OSError:
            continue
        if any(int(row[2].rsplit(":", 1)[1], 16) == port and row[9] in inodes for row in rows):
            return True
    return False


def test_two_workers_serve_the_proxy(upstream: ServerThread) -> None:
    port = free_port()
    cmd = [sys.executable, "-m", "streamparse", "serve", "--upstream", upstream.url + "/v1", "--port", str(port),
           "--workers", "2", "--log-level", "warning"]
    with started_process(cmd, lambda: port_open(port)) as proc:
        assert wait_for(lambda: len(worker_pids(proc.pid)) == 2, timeout=30), "uvicorn did not start two workers"
        workers = worker_pids(proc.pid)
        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test", max_retries=0, timeout=30)
        assert "hermes" in [m.id for m in client.models.list()]
        reply = client.chat.completions.create(model="qwen3", messages=[{"role": "user", "content": "go"}], tools=TOOLS)
        call = reply.choices[0].message.tool_calls[0]  # type: ignore[index]
        assert (call.function.name, json.loads(call.function.arguments)) == ("get_weather", {"city": "Oslo", "days": 2})
        assert reply.choices[0].finish_reason == "tool_calls"

        results: list[tuple[str, str] | str] = []
        up_port = int(upstream.url.rsplit(":", 1)[1])
        served: set[int] = set()
        for _ in range(5):  # concurrent streams: the kernel hands connections to both workers
            threads = [threading.Thread(target=_stream_one, args=(port, results)) for _ in range(8)]
            for t in threads:
                t.start()
            while any(t.is_alive() for t in threads):
                served |= {pid for pid in workers if connected_to(pid, up_port)}
                time.sleep(0.01)
            if served == set(workers):
                break
        assert served == set(workers), f"only workers {served} of {workers} proxied a request"
        assert results and all(r == ("get_weather", '{"city": "Paris"}') for r in results), results
        assert worker_pids(proc.pid) == workers  # none died on the way


def _stream_one(port: int, results: list[tuple[str, str] | str]) -> None:
    """One streaming request with tools; appends (name, arguments) of its call, or what went wrong."""
    client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test", max_retries=0, timeout=30)
    name = arguments = ""
    try:
        for chunk in client.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "go"}],
                                                    tools=TOOLS, stream=True):
            for tc in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
                name += tc.function.name or "" if tc.function else ""
                arguments += tc.function.arguments or "" if tc.function else ""
    except Exception as exc:  # noqa: BLE001 - reported by the test, not lost in a thread
        results.append(repr(exc))
        return
    results.append((name, arguments))


def test_a_worker_that_cannot_start_stops_the_supervisor() -> None:
    """No restart loop: a worker failing at start-up ends ``serve_workers`` (False) with one log line."""
    code = ("from streamparse.proxy.runner import listening_socket, serve_workers\n"
            "from streamparse.proxy.workers import APP_FACTORY, ENV_VAR\n"
            "with listening_socket('127.0.0.1', 0) as sock:\n"
            "    print(serve_workers(APP_FACTORY, sock, 2, 'warning', {ENV_VAR: '{}'}))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr
    assert f"streamparse: {ENV_VAR} needs 'config' (a TOML file) or 'upstream' (a URL)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_config_from_settings(tmp_path: Path) -> None:
    config = config_from_settings({"upstream": "http://127.0.0.1:9/v1/", "server": {"port": 9001, "workers": 3}})
    assert (config.backends[0].upstream, config.port, config.workers) == ("http://127.0.0.1:9/v1", 9001, 3)
    toml = tmp_path / "proxy.toml"
    toml.write_text('[server]\nworkers = 4\nport = 9002\n[backends.a]\nupstream = "http://127.0.0.1:9/v1"\n', encoding="utf-8")
    config = config_from_settings({"config": str(toml)})
    assert (config.workers, config.port) == (4, 9002)
    assert config_from_settings({"config": str(toml), "server": {"workers": 2}}).workers == 2
    for bad in ({}, {"upstream": "ftp://x"}, {"upstream": "http://x/v1", "server": {"max_calls": 1}},
                {"upstream": "http://x/v1", "server": {"workers": 0}}):
        with pytest.raises(ConfigError):
            config_from_settings(bad)


@pytest.fixture
def uvicorn_log() -> Iterator[list[str]]:
    """What is logged to ``uvicorn.error`` (which uvicorn's logging setup stops from propagating)."""
    messages: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: messages.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("uvicorn.error")
    logger.addHandler(handler)
    yield messages
    logger.removeHandler(handler)


def test_app_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, uvicorn_log: list[str]) -> None:
    monkeypatch.setenv(ENV_VAR, json.dumps({"upstream": "http://127.0.0.1:9/v1"}))
    assert isinstance(app_from_environment(), Starlette)
    toml = tmp_path / "proxy.toml"
    toml.write_text('[backends.a]\nupstream = "http://127.0.0.1:9/v1"\napi_key_env = "STREAMPARSE_TEST_UNSET_KEY"\n',
                    encoding="utf-8")
    monkeypatch.delenv("STREAMPARSE_TEST_UNSET_KEY", raising=False)
    for value, message in [(None, f"{ENV_VAR} is not set"), ("{not json", f"{ENV_VAR} is not JSON"),
                           ("[]", "must be a JSON object"),
                           (json.dumps({"config": str(toml)}), "'STREAMPARSE_TEST_UNSET_KEY', which is not set")]:
        if value is None:
            monkeypatch.delenv(ENV_VAR)
        else:
            monkeypatch.setenv(ENV_VAR, value)
        uvicorn_log.clear()
        with pytest.raises(SystemExit) as exc:
            app_from_environment()
        assert exc.value.code == 3  # uvicorn's STARTUP_FAILURE: the supervisor does not restart the worker
        assert len(uvicorn_log) == 1 and uvicorn_log[0].startswith("streamparse: ") and message in uvicorn_log[0]


@pytest.mark.skipif(not REUSE_PORT_SPREADS, reason="the kernel spreads SO_REUSEPORT connections on Linux only")
def test_each_worker_gets_a_socket_of_its_own_on_the_address_and_connections_are_spread() -> None:
    """``serve --workers N`` binds with ``per_worker``: the socket a worker receives (pickled, as uvicorn's spawned
    workers receive it) is a new one on the same address, and the kernel spreads connections over them."""
    parent = listening_socket("127.0.0.1", 0, per_worker=True)
    first, second = as_a_worker_gets_it(parent), as_a_worker_gets_it(parent)
    try:
        assert first.getsockname() == second.getsockname() == parent.getsockname()
        assert len({parent.fileno(), first.fileno(), second.fileno()}) == 3
        for sock in (first, second):
            sock.listen(128)
            sock.setblocking(False)
        clients = [socket.create_connection(parent.getsockname()) for _ in range(64)]
        accepted = {id(first): 0, id(second): 0}
        for sock in (first, second):
            while True:
                try:
                    sock.accept()[0].close()
                except BlockingIOError:
                    break
                accepted[id(sock)] += 1
        for client in clients:
            client.close()
        assert sum(accepted.values()) == 64 and all(accepted.values())  # (all on one: a chance of 2 in 2**64)
    finally:
        for sock in (parent, first, second):
            sock.close()


def test_a_socket_not_for_workers_is_a_plain_one() -> None:
    sock = listening_socket("127.0.0.1", 0)
    try:
        assert type(sock) is socket.socket
    finally:
        sock.close()


@pytest.mark.skipif(not REUSE_PORT_SPREADS, reason="the kernel spreads SO_REUSEPORT connections on Linux only")
def test_a_second_server_on_an_address_workers_listen_on_is_refused() -> None:
    parent = listening_socket("127.0.0.1", 0, per_worker=True)
    worker = as_a_worker_gets_it(parent)
    worker.listen(16)
    try:
        for per_worker in (True, False):
            with pytest.raises(OSError):
                listening_socket("127.0.0.1", parent.getsockname()[1], per_worker=per_worker)
    finally:
        worker.close()
        parent.close()


def as_a_worker_gets_it(sock: socket.socket) -> socket.socket:
    """``sock`` sent as uvicorn sends its socket to a spawned worker (multiprocessing's pickler), and received."""
    import pickle
    from multiprocessing.reduction import ForkingPickler

    received: socket.socket = pickle.loads(bytes(ForkingPickler.dumps(sock)))
    return received
