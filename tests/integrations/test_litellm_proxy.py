"""A real LiteLLM proxy (``litellm --config``) with ``streamparse.integrations.litellm.callback`` in front of the
project's scripted upstream (a backend that writes tool calls as text), driven by the openai SDK, streamed and
whole; and the order of callbacks with a second one present.

LiteLLM runs as its own process on 127.0.0.1 with its local model-cost map (no network). Skips, saying why,
where LiteLLM's proxy is not installed (``pip install 'streamparse-tools[litellm]'``).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from streamparse.proxy.runner import ServerThread, free_port
from served import served
from upstreams import SCRIPTS, scripted_upstream

pytest.importorskip("litellm.proxy.proxy_server", reason="LiteLLM's proxy is not installed: pip install "
                    "'streamparse-tools[litellm]'")

HERE = Path(__file__).parent
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
KEY = "sk-" + secrets.token_hex(16)  # LiteLLM's proxy refuses to start without a master key


def _config(upstream: str, callbacks: list[str]) -> str:
    models = "".join(f"""
  - model_name: {name}
    litellm_params:
      model: openai/{name}
      api_base: {upstream}/v1
      api_key: none
""" for name in ("hermes", "plain"))
    return f"model_list:{models}\nlitellm_settings:\n  callbacks: {json.dumps(callbacks)}\n"


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with ServerThread(scripted_upstream(), access_log=False) as server:
        yield server.url


def _litellm(upstream: str, callbacks: list[str], work: Path) -> Iterator[tuple[str, Path]]:
    (work / "config.yaml").write_text(_config(upstream, callbacks), encoding="utf-8")
    shutil.copy(HERE / "order_probe.py", work / "order_probe.py")
    probe_log = work / "probe.jsonl"
    port = free_port()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MASTER_KEY": KEY, "ORDER_PROBE_LOG": str(probe_log),
           "NO_PROXY": "127.0.0.1,localhost", "LITELLM_LOG": "ERROR", "DISABLE_SCHEMA_UPDATE": "True"}
    litellm = shutil.which("litellm", path=os.path.dirname(sys.executable)) or shutil.which("litellm")
    if litellm is None:
        pytest.skip("the litellm command is not installed: pip install 'streamparse-tools[litellm]'")
    base = f"http://127.0.0.1:{port}"
    with served([litellm, "--config", str(work / "config.yaml"), "--host", "127.0.0.1", "--port", str(port),
                 "--num_workers", "1"], base + "/health/liveliness", work / "litellm.log", name="litellm",
                timeout=180, env=env, cwd=work):
        yield base, probe_log


@pytest.fixture(scope="module")
def proxy_first(upstream: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """streamparse's callback first, the probe after it."""
    yield from _litellm(upstream, ["streamparse.integrations.litellm.callback", "order_probe.probe"],
                        tmp_path_factory.mktemp("litellm-first"))


@pytest.fixture(scope="module")
def probe_first(upstream: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The probe first, streamparse's callback after it."""
    yield from _litellm(upstream, ["order_probe.probe", "streamparse.integrations.litellm.callback"],
                        tmp_path_factory.mktemp("litellm-second"))


def _client(base: str) -> Any:
    from openai import OpenAI

    return OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)


def _streamed(stream: Any) -> tuple[str, list[tuple[str, Any]], str | None]:
    text, calls, finish = "", [], None
    for chunk in stream:
        for choice in chunk.choices:
            text += choice.delta.content or ""
            calls += [(c.function.name, json.loads(c.function.arguments)) for c in choice.delta.tool_calls or ()]
            finish = choice.finish_reason or finish
    return text, calls, finish


def _probe(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    path.unlink(missing_ok=True)
    return [json.loads(line) for line in lines]


HERMES_TEXT = "Let me look.\n\nDone."
HERMES_CALL = [("get_weather", {"city": "Paris"})]


def test_whole_answer_gets_structured_calls(proxy_first: tuple[str, Path]) -> None:
    answer = _client(proxy_first[0]).chat.completions.create(
        model="hermes", messages=[{"role": "user", "content": "weather?"}], tools=TOOLS)
    message = answer.choices[0].message
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == HERMES_CALL
    assert message.content == HERMES_TEXT
    assert answer.choices[0].finish_reason == "tool_calls"
    assert all(c.id.startswith("call_") for c in message.tool_calls)


def test_streamed_answer_gets_structured_calls(proxy_first: tuple[str, Path]) -> None:
    text, calls, finish = _streamed(_client(proxy_first[0]).chat.completions.create(
        model="hermes", messages=[{"role": "user", "content": "weather?"}], tools=TOOLS, stream=True))
    assert calls == HERMES_CALL
    assert text == HERMES_TEXT
    assert finish == "tool_calls"


def test_answers_without_tools_pass_untouched(proxy_first: tuple[str, Path]) -> None:
    client = _client(proxy_first[0])
    whole = client.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "hi"}])
    assert whole.choices[0].message.content == SCRIPTS["hermes"]
    assert not whole.choices[0].message.tool_calls
    text, calls, _ = _streamed(client.chat.completions.create(
        model="plain", messages=[{"role": "user", "content": "hi"}], tools=TOOLS, stream=True))
    assert (text, calls) == (SCRIPTS["plain"], [])


def test_a_callback_after_streamparse_sees_the_calls(proxy_first: tuple[str, Path]) -> None:
    base, log = proxy_first
    _probe(log)
    _streamed(_client(base).chat.completions.create(
        model="hermes", messages=[{"role": "user", "content": "weather?"}], tools=TOOLS, stream=True))
    _client(base).chat.completions.create(model="hermes", messages=[{"role": "user", "content": "w?"}], tools=TOOLS)
    seen = _probe(log)
    chunks = [s for s in seen if s["kind"] == "chunk"]
    assert sum(s["calls"] for s in chunks) == 1
    assert "<tool_call>" not in "".join(s["text"] for s in chunks)
    assert [s for s in seen if s["kind"] == "whole"] == [{"kind": "whole", "text": HERMES_TEXT, "calls": 1}]


def test_a_callback_before_streamparse_sees_the_raw_text(probe_first: tuple[str, Path]) -> None:
    base, log = probe_first
    _probe(log)
    text, calls, finish = _streamed(_client(base).chat.completions.create(
        model="hermes", messages=[{"role": "user", "content": "weather?"}], tools=TOOLS, stream=True))
    assert (text, calls, finish) == (HERMES_TEXT, HERMES_CALL, "tool_calls")  # the client still gets calls
    chunks = [s for s in _probe(log) if s["kind"] == "chunk"]
    assert "".join(s["text"] for s in chunks) == SCRIPTS["hermes"]
    assert sum(s["calls"] for s in chunks) == 0
