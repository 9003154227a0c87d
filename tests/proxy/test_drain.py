"""Graceful drain: a real `streamparse serve` process (one worker, and two) gets SIGTERM while streams are in
flight. Streams that finish within drain_timeout arrive whole (as parse() reads the text); with a tiny
drain_timeout each ends properly — held text, an error event, [DONE] (OpenAI) or the error event (Anthropic) —
and never as a cut connection. New connections are refused as soon as the drain begins."""

from __future__ import annotations

import json
import signal
import sys
import threading
from typing import Any, Iterator

import httpx
import pytest
from anthropic import Anthropic, APIStatusError
from openai import APIError, OpenAI

from helpers import TOOLS
from streamparse import StreamParser
from streamparse.core.events import TextDelta, ToolCall
from streamparse.harness.replay import create_replay_app
from streamparse.proxy.runner import ServerThread, free_port, port_open, started_process
from streamparse.wire.sse import SSEDecoder

CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
SHORT = "Let me look.\n" + CALL + "\nDone."
# A long call: the drain stops it while its block is held (the parser has not seen the end).
LONG = "Intro words. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"" + "a " * 300 + "\"}}</tool_call>"
SCRIPTS = {"short": SHORT, "long": LONG}


@pytest.fixture(scope="module")
def upstream() -> Iterator[ServerThread]:
    app = create_replay_app(lambda request, _choice: SCRIPTS[str(request.get("model"))], token_delay=0.04)
    with ServerThread(app) as server:
        yield server


def expected(text: str) -> tuple[str, list[tuple[str, Any]]]:
    """What parse() makes of the whole text: its prose and its calls."""
    parser = StreamParser(TOOLS)
    events = parser.feed(text) + parser.close()
    return ("".join(e.text for e in events if isinstance(e, TextDelta)),
            [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)])


class RawStream(threading.Thread):
    """One streaming request read with httpx: the SSE events as they came, and how the body ended."""

    def __init__(self, url: str, body: dict[str, Any]):
        super().__init__(daemon=True)
        self.url, self.body = url, body
        self.events: list[tuple[str | None, str]] = []  # (event name, data)
        self.first = threading.Event()
        self.error: str | None = None  # a transport failure: a cut connection

    def run(self) -> None:
        decoder = SSEDecoder()
        try:
            with httpx.stream("POST", self.url, json=self.body, timeout=60) as resp:
                for raw in resp.iter_bytes():
                    for event in decoder.feed(raw):
                        if event.data is not None:
                            self.events.append((event.event, event.data))
                            self.first.set()
        except httpx.HTTPError as exc:
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.first.set()

    def content(self) -> str:
        out = ""
        for _, data in self.events:
            if data != "[DONE]" and (value := json.loads(data)).get("choices"):
                out += value["choices"][0]["delta"].get("content") or ""
        return out


def serve(upstream: ServerThread, port: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "streamparse", "serve", "--upstream", upstream.url + "/v1", "--port", str(port),
            "--log-level", "warning", *extra]


def chat(model: str) -> dict[str, Any]:
    return {"model": model, "stream": True, "tools": TOOLS, "messages": [{"role": "user", "content": "go"}]}


@pytest.mark.parametrize("workers", ["1", "2"])
def test_streams_in_flight_finish_within_drain_timeout(upstream: ServerThread, workers: str) -> None:
    port = free_port()
    with started_process(serve(upstream, port, "--workers", workers, "--drain-timeout", "30"),
                         lambda: port_open(port)) as proc:
        streams = [RawStream(f"http://127.0.0.1:{port}/v1/chat/completions", chat("short")) for _ in range(6)]
        for s in streams:
            s.start()
        for s in streams:
            assert s.first.wait(30)
        proc.send_signal(signal.SIGTERM)
        for s in streams:
            s.join(60)
        assert proc.wait(60) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it has shut down
        assert not port_open(port)  # nothing listens once it has gone
    want_text, want_calls = expected(SHORT)
    for s in streams:
        assert s.error is None, s.error
        assert s.events[-1] == (None, "[DONE]")
        assert s.content() == want_text
        calls = [(tc["function"]["name"], json.loads(tc["function"]["arguments"]))
                 for _, data in s.events[:-1] for c in json.loads(data)["choices"]
                 for tc in c["delta"].get("tool_calls") or []]
        assert calls == want_calls
        assert all("error" not in json.loads(data) for _, data in s.events[:-1])


@pytest.mark.parametrize("workers", ["1", "2"])
def test_new_connections_are_refused_while_draining(upstream: ServerThread, workers: str) -> None:
    port = free_port()
    with started_process(serve(upstream, port, "--workers", workers, "--drain-timeout", "30"),
                         lambda: port_open(port)) as proc:
        stream = RawStream(f"http://127.0.0.1:{port}/v1/chat/completions", chat("long"))
        stream.start()
        assert stream.first.wait(30)
        proc.send_signal(signal.SIGTERM)
        deadline_hit = threading.Event()
        for _ in range(50):  # the listener closes within uvicorn's tick
            if not port_open(port):
                deadline_hit.set()
                break
            threading.Event().wait(0.1)
        assert deadline_hit.is_set(), "the port still accepts connections while draining"
        assert stream.is_alive()  # the stream in flight goes on meanwhile
        proc.send_signal(signal.SIGINT)  # a second signal: stop now
        stream.join(30)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_tiny_drain_timeout_ends_streams_properly(upstream: ServerThread, workers: str) -> None:
    port = free_port()
    with started_process(serve(upstream, port, "--workers", workers, "--drain-timeout", "0.5"),
                         lambda: port_open(port)) as proc:
        streams = [RawStream(f"http://127.0.0.1:{port}/v1/chat/completions", chat("long")) for _ in range(4)]
        for s in streams:
            s.start()
        for s in streams:
            assert s.first.wait(30)
        for _ in range(200):  # each has sent its intro: what comes next is the call block, held by the parser
            if all("words." in s.content() for s in streams):
                break
            threading.Event().wait(0.05)
        proc.send_signal(signal.SIGTERM)
        for s in streams:
            s.join(30)
            assert not s.is_alive()
        assert proc.wait(30) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it has shut down
    for s in streams:
        assert s.error is None, s.error  # never a cut connection
        assert s.events[-1] == (None, "[DONE]")
        error = json.loads(s.events[-2][1])["error"]
        assert error["code"] == "server_shutting_down" and "drain_timeout" in error["message"]
        text = s.content()
        assert LONG.startswith(text) and "<tool_call>" in text  # the held block was flushed as text, in order


def test_openai_and_anthropic_clients_see_an_error_not_a_broken_connection(upstream: ServerThread) -> None:
    port = free_port()
    with started_process(serve(upstream, port, "--drain-timeout", "0.5"), lambda: port_open(port)) as proc:
        base = f"http://127.0.0.1:{port}"
        outcome: dict[str, Any] = {}
        started = {"openai": threading.Event(), "anthropic": threading.Event()}

        def openai_client() -> None:
            client = OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0, timeout=60)
            text = ""
            try:
                for chunk in client.chat.completions.create(**chat("long")):
                    started["openai"].set()
                    text += (chunk.choices[0].delta.content or "") if chunk.choices else ""
            except APIError as exc:
                outcome["openai"] = (type(exc).__name__, exc.message, text)

        def anthropic_client() -> None:
            client = Anthropic(base_url=base, api_key="sk-test", max_retries=0, timeout=60)
            text = ""
            try:
                with client.messages.stream(model="long", max_tokens=100, messages=[{"role": "user", "content": "go"}],
                                            tools=[{"name": "get_weather", "input_schema": {"type": "object"}}]) as s:
                    for event in s:
                        started["anthropic"].set()
                        if event.type == "text":
                            text += event.text
            except APIStatusError as exc:
                outcome["anthropic"] = (type(exc).__name__, str(exc), text)

        threads = [threading.Thread(target=openai_client), threading.Thread(target=anthropic_client)]
        for t in threads:
            t.start()
        assert all(event.wait(30) for event in started.values())
        proc.send_signal(signal.SIGTERM)
        for t in threads:
            t.join(30)
        assert proc.wait(30) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it has shut down
    name, message, text = outcome["openai"]
    assert name == "APIError" and "drain_timeout" in message and LONG.startswith(text)
    name, message, _ = outcome["anthropic"]
    assert "drain_timeout" in message
