"""Running ASGI apps under uvicorn: in the foreground (``streamparse serve``, in one process or
in N worker processes) or in a background thread on a free loopback port (the demo, the tests,
the benchmarks).

Every server here reads a request's headers within a deadline (``deadlines.HeaderDeadlineProtocol``:
the app's ``state.header_timeout``, else 10 s).

Invariant: the listening socket is bound here, before uvicorn sees it, so a taken port or an
unknown host is an ``OSError`` the caller can report in one line (uvicorn itself would log it
and call ``sys.exit``).
"""

from __future__ import annotations

import math
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping

import uvicorn
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import Multiprocess

from .access_log import log_config
from .deadlines import PROTOCOL, HeaderDeadlineProtocol, _app_setting
from .drain import BACKSTOP_SECONDS

__all__ = ["ServerThread", "listening_socket", "serve_app", "serve_workers", "serve_forever", "started_process",
           "port_open", "free_port"]


def listening_socket(host: str, port: int, per_worker: bool = False) -> socket.socket:
    """A TCP socket bound to ``host:port`` (port 0: any free one); ``OSError`` if it cannot be.

    ``per_worker`` (for ``serve_workers``; Linux): each worker process it is handed to listens on a socket of its
    own, bound to the same address (``SO_REUSEPORT``), and the kernel spreads new connections across them evenly.
    One shared socket lets the worker that wakes first accept a whole burst: at 200 connections opened at once,
    one worker was saturated while the other idled half the time. Elsewhere the one socket is shared. (A worker
    that stops resets the connections still waiting in its own queue, where a shared queue would hand them to
    another worker; Linux 5.14+ moves them instead with ``net.ipv4.tcp_migrate_req = 1``.)"""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    own = per_worker and REUSE_PORT_SPREADS
    if own:  # a plain bind first: an address another server listens on (with SO_REUSEPORT too) is refused as before
        with _bound(socket.socket(family, socket.SOCK_STREAM), (host, port)) as probe:
            port = probe.getsockname()[1]
    sock = _bound(_PerWorkerSocket(family, socket.SOCK_STREAM) if own else socket.socket(family, socket.SOCK_STREAM),
                  (host, port), reuse_port=own)
    sock.set_inheritable(True)  # worker processes serve the same socket
    return sock


def _bound(sock: socket.socket, address: Any, reuse_port: bool = False) -> socket.socket:
    """``sock`` bound to ``address`` (closed if it cannot be)."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
    except BaseException:
        sock.close()
        raise
    return sock


# Linux spreads the connections of one address over the sockets that listen on it with SO_REUSEPORT (3.9+).
REUSE_PORT_SPREADS = sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


class _PerWorkerSocket(socket.socket):
    """The parent's socket, bound with ``SO_REUSEPORT`` and never listened on (it takes no connection): sent
    to a worker process (uvicorn's workers are spawned, their sockets pickled), it arrives as a new socket of
    the worker's own, bound to the same address, on which the worker listens."""

    def __reduce__(self) -> tuple[Any, ...]:
        return _worker_socket, (self.family, self.getsockname())


def _worker_socket(family: int, address: Any) -> socket.socket:
    return _bound(socket.socket(family, socket.SOCK_STREAM), address, reuse_port=True)


def _graceful(drain_timeout: float | None) -> int | None:
    """uvicorn's own shutdown deadline: the app's drain ends its answers first (``drain``); this is the backstop."""
    return None if drain_timeout is None else math.ceil(drain_timeout + BACKSTOP_SECONDS)


def _logging(log_format: str, log_level: str, label: str | None) -> dict[str, Any]:
    """uvicorn.Config's logging options (``access_log.log_config``): its own text log with the proxy's lines beside
    it, or JSON lines, or a label."""
    config = log_config(log_format, log_level, label)
    return {"log_config": config, "access_log": log_format != "json"}  # json: RequestLog writes the request lines


def serve_app(app: Any, sock: socket.socket, log_level: str = "info", log_format: str = "text",
              label: str | None = None) -> bool:
    """Serve ``app`` on ``sock`` in this process until a signal; False if it never started.
    On SIGTERM or Ctrl-C the app's drain (``state.drain``) gets its ``drain_timeout``. ``log_format``, ``label``:
    see ``access_log.log_config``."""
    drain = _app_setting(app, "drain")
    server = uvicorn.Server(uvicorn.Config(app, log_level=log_level, lifespan="on", http=PROTOCOL,
                                           timeout_graceful_shutdown=_graceful(drain and drain.timeout),
                                           **_logging(log_format, log_level, label)))
    # uvicorn raises the signal it caught again once it has shut down: a SIGTERM then ends this function
    # (as a Ctrl-C does) instead of the process, so the caller's cleanups (the metrics directory) still run.
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _interrupt) if main else None
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C (or SIGTERM) it caught, after its graceful shutdown
        pass
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
    return server.started


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def serve_workers(factory: str, sock: socket.socket, workers: int, log_level: str = "info",
                  env: Mapping[str, str] | None = None, drain_timeout: float | None = None,
                  log_format: str = "text", label: str | None = None) -> bool:
    """Serve the app built by ``factory`` (an import string: workers are spawned, an app object
    cannot be sent to them) in ``workers`` processes under uvicorn's supervisor, which restarts
    a worker that dies. ``env`` is set for the workers. False if a worker could not start.

    For the main thread of a process that exits afterwards: the supervisor installs its own
    signal handlers (SIGINT, SIGTERM, SIGHUP to restart the workers, ...) and leaves them. On SIGTERM
    each worker drains (``drain_timeout``, the app's own setting) before it exits."""
    config = uvicorn.Config(factory, factory=True, workers=workers, log_level=log_level, lifespan="on", http=PROTOCOL,
                            timeout_graceful_shutdown=_graceful(drain_timeout),
                            **_logging(log_format, log_level, label))
    saved = {key: os.environ.get(key) for key in env or {}}
    os.environ.update(env or {})
    try:
        supervisor = _Supervisor(config, sockets=[sock])
        supervisor.run()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return not any(process.exitcode == STARTUP_FAILURE for process in supervisor.processes)


class _Supervisor(Multiprocess):
    """uvicorn's supervisor, which also closes its own copy of the listening socket when it stops the workers:
    once they have closed theirs (as their drain begins), new connections are refused at once rather than
    left waiting in the socket's backlog until the supervisor exits."""

    def terminate_all(self) -> None:
        for sock in self.sockets:
            sock.close()
        super().terminate_all()


def serve_forever(app: Any, host: str, port: int, log_level: str = "info") -> None:
    """Bind ``host:port`` and serve ``app`` in this process (the older one-call form)."""
    with listening_socket(host, port) as sock:
        serve_app(app, sock, log_level)


class _QuietProtocol(HeaderDeadlineProtocol):
    """The protocol of a server that writes no access log lines. (uvicorn's access logger is one per process, and
    a protocol writes to it whenever it has handlers: another server's log set-up would turn this one's on.)"""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.access_log = False


class ServerThread:
    """``with ServerThread(app) as server: server.url`` — uvicorn in a thread, stopped on exit (``access_log=False``:
    it writes no access log lines, whatever the process's logging says)."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning",
                 access_log: bool = True):
        self.host = host
        self._sock = listening_socket(host, port)
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(app, log_level=log_level, lifespan="on", timeout_graceful_shutdown=5,
                                http=PROTOCOL if access_log else _QuietProtocol)
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> "ServerThread":
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start on {self.url}")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=15)
        self._sock.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def port_open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


@contextmanager
def started_process(cmd: list[str], ready: Callable[[], bool], *, timeout: float = 30,
                    env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``cmd``, wait until ``ready()`` (or fail with the end of its stderr), stop it on exit.

    stderr goes to a temporary file, not a pipe: a chatty server would block on a full pipe.
    """
    with tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
        try:
            deadline = time.monotonic() + timeout
            while not ready():
                if proc.poll() is not None or time.monotonic() > deadline:
                    proc.kill()
                    proc.wait()
                    stderr.seek(0)
                    err = stderr.read().decode(errors="replace")
                    raise RuntimeError(f"{' '.join(cmd[:4])} … did not start: {err[-3000:]}")
                time.sleep(0.1)
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
