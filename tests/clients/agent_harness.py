"""What the opt-in agent CLI tests (``-m agent_cli``) share: an npm install into a cache directory, a scripted
tool-less upstream, a real ``streamparse serve`` subprocess in front of it, and a recording relay between the
client and the proxy (to check what the client sent and which items it got back).

Not named ``agents``: that is the OpenAI Agents SDK's package, which tests/proxy imports; a module of that name on
``sys.path`` (pytest puts this directory there) would hide it.

The cache: ``$STREAMPARSE_AGENT_CACHE``, else ``~/.cache/streamparse-agents``, one subdirectory per client. An
install that fails (no registry) falls back to what is cached; with nothing cached the test skips, saying why, as it
does without node and npm.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Iterator, Sequence

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from streamparse.harness.replay import completion_chunks, sse_frames
from streamparse.proxy.runner import ServerThread, free_port, port_open, started_process

__all__ = ["CACHE_ROOT", "npm_install", "version_of", "ScriptedUpstream", "tool_outputs", "serve_proxy",
           "Exchange", "Relay", "sse_events"]

CACHE_ROOT = Path(os.environ.get("STREAMPARSE_AGENT_CACHE", Path.home() / ".cache" / "streamparse-agents"))
INSTALL_TIMEOUT = 600


def npm_install(subdir: str, packages: Sequence[str], needed: str) -> Path:
    """``npm install packages`` into ``CACHE_ROOT/subdir``; that directory. ``needed`` (a path inside it, such as
    ``node_modules/.bin/codex``) must exist afterwards: if the install failed and it does not, the test skips."""
    what = " ".join(packages)
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(f"{what} needs node and npm, which are not on PATH")
    cache = CACHE_ROOT / subdir
    cache.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(["npm", "install", "--prefix", str(cache), "--no-audit", "--no-fund", *packages],
                              capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        failure = None if done.returncode == 0 else done.stderr.strip()[-800:]
    except subprocess.TimeoutExpired:
        failure = f"npm install took longer than {INSTALL_TIMEOUT} s"
    if failure is not None and not (cache / needed).exists():
        pytest.skip(f"npm install {what} failed and nothing is cached in {cache}: {failure}")
    return cache


def version_of(argv: Sequence[str], name: str) -> str:
    """The version line ``argv`` prints; the test skips if the program does not run here."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"the installed {name} does not run here: {exc}")
    if done.returncode != 0:
        pytest.skip(f"the installed {name} does not run here: {done.stderr.strip()[-800:]}")
    return done.stdout.strip()


def tool_outputs(body: dict[str, Any]) -> str | None:
    """The text of the tool results in a chat request's history: ``tool`` messages, or user messages holding what
    tool prompting rendered (``<tool_response>``); None when there are none."""
    texts = [json.dumps(m.get("content")) for m in body.get("messages") or ()
             if m.get("role") == "tool" or (m.get("role") == "user" and "<tool_response" in json.dumps(m))]
    return "\n".join(texts) if texts else None


class ScriptedUpstream:
    """A tool-less OpenAI-compatible chat-completions server whose every answer is ``answer(body)``, as text (a
    tool call written in it, as a model without native tool calling would). Streams when asked. Records each request
    body (under ``lock``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []

    def answer(self, body: dict[str, Any]) -> str:
        raise NotImplementedError

    def app(self) -> Starlette:
        async def chat(request: Request) -> Response:
            body = json.loads(await request.body())
            with self.lock:
                self.requests.append(body)
            text, model = self.answer(body), str(body.get("model"))
            if not body.get("stream"):
                return JSONResponse({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
                                     "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                                  "finish_reason": "stop"}],
                                     "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return StreamingResponse(sse_frames(completion_chunks([text], model, include_usage=usage)),
                                     media_type="text/event-stream")

        return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@contextmanager
def serve_proxy(upstream: ScriptedUpstream, backend: str, where: Path, serve_args: Sequence[str] = ()) -> Iterator[str]:
    """``upstream`` in a thread and a real ``python -m streamparse serve`` subprocess in front of it, configured by a
    ``streamparse.toml`` in ``where`` with one default backend (``backend``: more TOML lines for it, such as
    ``tool_prompt = "hermes"``; ``serve_args``: more ``serve`` flags); the proxy's base URL
    (``http://127.0.0.1:PORT``, no ``/v1``)."""
    with ServerThread(upstream.app()) as up:
        config = where / "streamparse.toml"
        config.write_text(f'[backends.local]\nupstream = "{up.url}/v1"\ndefault = true\n{backend}')
        port = free_port()
        serve = [sys.executable, "-m", "streamparse", "serve", "--config", str(config), "--port", str(port),
                 "--log-level", "warning", *serve_args]
        with started_process(serve, lambda: port_open(port), timeout=60):
            yield f"http://127.0.0.1:{port}"


@dataclass
class Exchange:
    """One request a client made through the ``Relay``, and the bytes that came back."""

    method: str
    path: str
    body: Any  # the JSON request body (None without one)
    status: int = 0
    answer: bytearray = field(default_factory=bytearray)

    def events(self) -> list[dict[str, Any]]:
        """The answer's SSE ``data:`` objects (``[DONE]`` left out); the JSON body as one, if it was not a stream."""
        return sse_events(bytes(self.answer))


def sse_events(data: bytes) -> list[dict[str, Any]]:
    text = data.decode(errors="replace")
    if not text.lstrip().startswith(("event:", "data:", ":")):
        try:
            return [json.loads(text)]
        except ValueError:
            return []
    return [json.loads(line[5:]) for line in text.splitlines()
            if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]")]


class Relay:
    """A recording pass-through between a client and the proxy: every request is forwarded as it came, the answer
    streamed back as it comes, and both recorded (``exchanges``), so a test can check what the client sent and
    which items the proxy gave it. ``with Relay(target) as relay: relay.url``."""

    def __init__(self, target: str):
        self.target = target.rstrip("/")
        self.lock = threading.Lock()
        self.exchanges: list[Exchange] = []
        self._server: ServerThread | None = None

    def app(self) -> Starlette:
        async def forward(request: Request) -> Response:
            raw = await request.body()
            exchange = Exchange(request.method, request.url.path, json.loads(raw) if raw else None)
            with self.lock:
                self.exchanges.append(exchange)
            dropped = ("host", "content-length", "accept-encoding")  # identity bytes, recorded as they are
            headers = {k: v for k, v in request.headers.items() if k.lower() not in dropped}
            client = httpx.AsyncClient(timeout=httpx.Timeout(300.0))
            upstream = await client.send(client.build_request(request.method, self.target + request.url.path,
                                                              params=request.query_params, headers=headers,
                                                              content=raw), stream=True)
            exchange.status = upstream.status_code

            async def body() -> AsyncIterator[bytes]:
                try:
                    async for piece in upstream.aiter_raw():
                        exchange.answer.extend(piece)
                        yield piece
                finally:
                    await upstream.aclose()
                    await client.aclose()

            kept = {k: v for k, v in upstream.headers.items()
                    if k.lower() in ("content-type", "cache-control", "retry-after")}
            return StreamingResponse(body(), status_code=upstream.status_code, headers=kept)

        return Starlette(routes=[Route("/{path:path}", forward, methods=["GET", "POST", "DELETE"])])

    @property
    def url(self) -> str:
        assert self._server is not None
        return str(self._server.url)

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.port)

    def posts(self, path: str) -> list[Exchange]:
        with self.lock:
            return [e for e in self.exchanges if e.method == "POST" and e.path == path]

    def __enter__(self) -> "Relay":
        self._server = ServerThread(self.app()).__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._server is not None
        self._server.__exit__(*exc)
