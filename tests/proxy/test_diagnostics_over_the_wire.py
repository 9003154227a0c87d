"""What the parser refused, repaired or coerced reaches the proxy's client (issue 23), opt-out per backend:
a response header on whole answers, SSE comment lines in streams; the payloads themselves stay as the SDKs
expect them. Real proxy on 127.0.0.1, the real openai client and raw httpx."""

from __future__ import annotations

import json
from typing import Any, Iterator

import httpx
import pytest
from openai import OpenAI

from streamparse.harness.replay import create_replay_app
from streamparse.proxy.app import create_app
from streamparse.proxy.config import ProxyConfig
from streamparse.proxy.runner import ServerThread

UNIT: dict[str, Any] = {"type": "function", "function": {"name": "set_unit", "parameters": {
    "type": "object", "properties": {"unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                                     "label": {"type": "string"}}}}}
ANSWER = '<tool_call>{"name": "set_unit", "arguments": {"unit": "Celsius", "label": 25}}</tool_call>'
BODY = {"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": [UNIT]}


@pytest.fixture(scope="module")
def proxies() -> Iterator[dict[str, str]]:
    with ServerThread(create_replay_app(lambda _request, _choice: ANSWER)) as up:
        url = up.url + "/v1"
        with ServerThread(create_app(ProxyConfig.single(url))) as on, \
                ServerThread(create_app(ProxyConfig.single(url, {"report_diagnostics": False}))) as off:
            yield {"on": on.url, "off": off.url}


def test_a_whole_answer_carries_its_diagnostics_in_a_header(proxies: dict[str, str]) -> None:
    raw = httpx.post(proxies["on"] + "/v1/chat/completions", json=BODY, timeout=30)
    notes = json.loads(raw.headers["x-streamparse-diagnostics"])
    assert {n["code"] for n in notes} == {"coerced"}
    assert {n["details"]["parameter"] for n in notes} == {"unit", "label"}
    client = OpenAI(base_url=proxies["on"] + "/v1", api_key="sk-test", max_retries=0, timeout=30)
    call = client.chat.completions.create(**BODY).choices[0].message.tool_calls[0]  # type: ignore[call-overload,index]
    assert json.loads(call.function.arguments) == {"unit": "celsius", "label": "25"}


def test_a_stream_carries_them_as_comment_lines(proxies: dict[str, str]) -> None:
    with httpx.stream("POST", proxies["on"] + "/v1/chat/completions", json={**BODY, "stream": True}, timeout=30) as r:
        lines = list(r.iter_lines())
    comments = [json.loads(line.split("streamparse diagnostic ", 1)[1]) for line in lines
                if line.startswith(": streamparse diagnostic ")]
    assert {c["code"] for c in comments} == {"coerced"}
    client = OpenAI(base_url=proxies["on"] + "/v1", api_key="sk-test", max_retries=0, timeout=30)
    pieces = [p.function.arguments or "" for chunk in client.chat.completions.create(**BODY, stream=True)  # type: ignore[call-overload]
              for choice in chunk.choices for p in choice.delta.tool_calls or []]
    assert json.loads("".join(pieces)) == {"unit": "celsius", "label": "25"}


def test_report_diagnostics_false_says_nothing(proxies: dict[str, str]) -> None:
    raw = httpx.post(proxies["off"] + "/v1/chat/completions", json=BODY, timeout=30)
    assert "x-streamparse-diagnostics" not in raw.headers
    with httpx.stream("POST", proxies["off"] + "/v1/chat/completions", json={**BODY, "stream": True}, timeout=30) as r:
        assert not [line for line in r.iter_lines() if "streamparse diagnostic" in line]
