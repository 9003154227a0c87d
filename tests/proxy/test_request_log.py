"""Request ids end to end (client -> proxy -> upstream -> client) and the JSON request log: real servers on
127.0.0.1; the log test runs `streamparse serve --log-format json` as a process and parses every line it wrote."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
from openai import OpenAI

from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ProxyConfig
from streamparse.proxy.runner import ServerThread, free_port, port_open
from upstreams import RecordingModel

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
# days is written as a string: the schema types it, and the parser says so (a "coerced" diagnostic)
CALL = 'Let me check. <tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}</tool_call>'
ASK = [{"role": "user", "content": "weather?"}]


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[RecordingModel, ServerThread]]:
    recording = RecordingModel(CALL)
    with ServerThread(recording.app()) as thread:
        yield recording, thread


def _is_hex_id(value: str) -> bool:
    return len(value) == 32 and all(c in "0123456789abcdef" for c in value)


def test_request_ids_end_to_end(model: tuple[RecordingModel, ServerThread]) -> None:
    recording, thread = model
    recording.reset(CALL)
    with ServerThread(create_app(ProxyConfig.single(thread.url + "/v1"))) as proxy:
        client = OpenAI(base_url=proxy.url + "/v1", api_key="sk-test", max_retries=0)
        raw = client.chat.completions.with_raw_response.create(
            model="m", messages=ASK, tools=TOOLS, stream=True, extra_headers={"x-request-id": "req-client-7"})
        assert raw.headers["x-request-id"] == "req-client-7"
        assert [c for c in raw.parse()]  # (the stream read to its end)
        assert recording.headers[-1]["x-request-id"] == "req-client-7"  # the upstream saw the client's id

        whole = client.chat.completions.with_raw_response.create(model="m", messages=ASK, tools=TOOLS)
        made = whole.headers["x-request-id"]
        assert _is_hex_id(made) and recording.headers[-1]["x-request-id"] == made  # made here, passed on

        for path, body in (("/v1/messages", {"model": "m", "max_tokens": 20, "messages": ASK}),
                           ("/v1/responses", {"model": "m", "input": "weather?", "stream": True})):
            r = httpx.post(proxy.url + path, json=body, headers={"x-request-id": f"id-{path[4:]}"})
            assert r.status_code == 200 and r.headers["x-request-id"] == f"id-{path[4:]}"
            assert recording.headers[-1]["x-request-id"] == f"id-{path[4:]}"

        unusable = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "m", "messages": ASK},
                              headers={"x-request-id": "two words"})
        assert _is_hex_id(unusable.headers["x-request-id"])  # replaced, and that one went upstream
        assert recording.headers[-1]["x-request-id"] == unusable.headers["x-request-id"]
        refused = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "m", "messages": ASK, "tools": 3},
                             headers={"x-request-id": "bad-1"})
        assert refused.status_code == 400 and refused.headers["x-request-id"] == "bad-1"
        assert httpx.get(proxy.url + "/healthz").headers["x-request-id"]


def test_request_ids_on_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with ServerThread(create_app(ProxyConfig.single(dead))) as proxy:
        r = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "m", "messages": ASK, "stream": True},
                       headers={"x-request-id": "gone-1"})
        assert r.status_code == 502 and r.headers["x-request-id"] == "gone-1"
    monkeypatch.setenv("STREAMPARSE_API_KEYS", "proxy-key-1")
    with ServerThread(create_app(ProxyConfig.single(dead))) as proxy:
        r = httpx.post(proxy.url + "/v1/chat/completions", json={}, headers={"x-request-id": "no-key-1"})
        assert r.status_code == 401 and r.headers["x-request-id"] == "no-key-1"


def _lines(path: Path) -> list[dict[str, Any]]:
    text = path.read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]  # every line must be JSON


def test_json_log_one_line_per_request(model: tuple[RecordingModel, ServerThread], tmp_path: Path) -> None:
    recording, thread = model
    recording.reset(CALL)
    port, dead = free_port(), free_port()
    config = tmp_path / "proxy.toml"
    config.write_text(f'[server]\nport = {port}\n[backends.local]\nupstream = "{thread.url}/v1"\ndefault = true\n'
                      f'[backends.down]\nupstream = "http://127.0.0.1:{dead}/v1"\nmodels = ["down-model"]\n')
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("wb") as fo, err.open("wb") as fe:
        proc = subprocess.Popen([sys.executable, "-m", "streamparse", "serve", "--config", str(config),
                                 "--log-format", "json"], stdout=fo, stderr=fe)
        try:
            deadline = time.monotonic() + 30
            while not port_open(port) and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert port_open(port), err.read_text()
            base = f"http://127.0.0.1:{port}"
            client = OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
            stream = client.chat.completions.with_raw_response.create(
                model="m", messages=ASK, tools=TOOLS, stream=True, extra_headers={"x-request-id": "log-stream"})
            assert [c for c in stream.parse()]
            whole = client.chat.completions.with_raw_response.create(model="m", messages=ASK, tools=TOOLS)
            failed = httpx.post(base + "/v1/chat/completions", json={"model": "down-model", "messages": ASK})
            anthropic = httpx.post(base + "/v1/messages", json={"model": "m", "max_tokens": 9, "messages": ASK})
            assert failed.status_code == 502 and anthropic.status_code == 200
        finally:
            proc.terminate()
            proc.wait(30)
    lines = _lines(out) + _lines(err)
    requests = [line for line in lines if line["logger"] == "streamparse.access"]
    assert len(requests) == 4, lines  # one per request, uvicorn's text access log is off
    assert not any("HTTP/1.1" in line["message"] for line in lines if line["logger"].startswith("uvicorn"))
    by_id = {line["request_id"]: line for line in requests}
    streamed = by_id["log-stream"]
    assert streamed["route"] == "/v1/chat/completions" and streamed["front"] == "chat"
    assert streamed["backend"] == "local" and streamed["status"] == 200 and streamed["stream"] is True
    assert streamed["tool_calls"] == 1 and streamed["diagnostics"] == ["coerced"]
    assert 0 <= streamed["ttfb_s"] <= streamed["total_s"] and streamed["fallback_from"] == []
    plain = by_id[whole.headers["x-request-id"]]
    assert plain["stream"] is False and plain["tool_calls"] == 1 and plain["diagnostics"] == ["coerced"]
    assert plain["level"] == "info" and plain["time"].endswith("Z") and plain["method"] == "POST"
    error = by_id[failed.headers["x-request-id"]]
    assert error["status"] == 502 and error["backend"] == "down" and error["tool_calls"] == 0
    assert by_id[anthropic.headers["x-request-id"]]["front"] == "messages"
    assert any(line["logger"] == "streamparse.serve" and "proxy on" in line["message"] for line in lines)
    assert any(line["level"] == "warning" and "'down'" in line["message"] for line in lines)  # the start-up probe


def test_the_text_log_shows_the_proxys_own_lines() -> None:
    """In text mode (the default) the proxy's own INFO lines (what a backend's chat template decided, a backend
    found) are written beside uvicorn's, at the log level; they were lost (no handler: only warnings showed)."""
    code = ("import logging.config\n"
            "from streamparse.proxy.access_log import log_config\n"
            "for level in ('info', 'warning'):\n"
            "    logging.config.dictConfig(log_config('text', level))\n"
            "    logging.getLogger('streamparse.server').info('the template decided, at %s', level)\n"
            "    logging.getLogger('streamparse.access').info('a request line, at %s', level)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert "the template decided, at info" in said and "at warning" not in said and "a request line" not in said
