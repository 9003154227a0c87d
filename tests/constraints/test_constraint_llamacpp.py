"""Opt-in: llama.cpp's own grammar engine decodes under the constraint (``llama-server``, a small real model).

Checks what only the real server can: it reads the GBNF, a constrained answer is a well-formed call
to a declared tool with schema-valid arguments, a prompt that needs no tool still gets plain text
(the whole-answer grammar leaves prose free), ``tool_choice`` required gets a call, and parallel off
gets at most one. Not a score: the lead's BFCL evaluation measures accuracy and speed.

Marker ``realmodel``; needs ``LLAMA_SERVER`` (else ``llama-server`` on PATH) and ``STREAMPARSE_GGUF``
(see tests/proxy/test_real_model_tools.py for the model)::

    LLAMA_SERVER=… STREAMPARSE_GGUF=… python -m pytest -m realmodel tests/constraints/test_constraint_llamacpp.py
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

import streamparse as sp
from streamparse.constraints import build_constraint
from streamparse.prompting.requests import prompt_request
from streamparse.proxy.runner import free_port, started_process

pytestmark = pytest.mark.realmodel

UNITS = ["celsius", "fahrenheit"]
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The current weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": UNITS}},
                   "required": ["city", "unit"]}}}]
WEATHER = "What is the weather in Paris right now? Use celsius."
CHAT = "Say hello in French, one word."


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    binary = os.environ.get("LLAMA_SERVER") or shutil.which("llama-server")
    model = os.environ.get("STREAMPARSE_GGUF")
    if not binary or not model or not Path(model).is_file():
        pytest.skip("needs LLAMA_SERVER (or llama-server on PATH) and STREAMPARSE_GGUF")
    port = free_port()
    cmd = [binary, "-m", model, "--jinja", "-t", "1", "-c", "4096", "-np", "1", "--seed", "7",
           "--host", "127.0.0.1", "--port", str(port), "--no-webui"]

    def ready() -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    with started_process(cmd, ready, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"}):
        yield f"http://127.0.0.1:{port}"


def ask(server: str, dialect: str, user: str, **choice: Any) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    payload: dict[str, Any] = {"messages": [{"role": "user", "content": user}], "tools": TOOLS}
    if "tool_choice" in choice:
        payload["tool_choice"] = choice["tool_choice"]
    if "parallel_tool_calls" in choice:
        payload["parallel_tool_calls"] = choice["parallel_tool_calls"]
    prompted = prompt_request(payload, dialect)
    constraint = build_constraint(dialect, TOOLS, **choice)
    assert constraint is not None
    body = {**prompted.payload, **constraint.request_fields(), "temperature": 0, "max_tokens": 120}
    response = httpx.post(f"{server}/v1/chat/completions", json=body, timeout=600)
    assert response.status_code == 200, response.text[:500]
    text = response.json()["choices"][0]["message"].get("content") or ""
    result = sp.parse(text, TOOLS, **prompted.parser_options())
    return text, [(c.name, json.loads(c.arguments)) for c in result.tool_calls]


def well_formed(calls: list[tuple[str, dict[str, Any]]]) -> bool:
    return all(name == "get_weather" and set(args) == {"city", "unit"} and isinstance(args["city"], str)
               and args["unit"] in UNITS for name, args in calls)


@pytest.mark.parametrize("dialect", ["hermes", "pythonic", "qwen3_coder", "llama3_json"])
def test_llama_server_decodes_under_the_constraint(server: str, dialect: str) -> None:
    text, calls = ask(server, dialect, WEATHER)
    assert calls and well_formed(calls), text
    text, calls = ask(server, dialect, CHAT)
    assert well_formed(calls), text
    text, calls = ask(server, dialect, CHAT, tool_choice="required")
    assert len(calls) >= 1 and well_formed(calls), text
    text, calls = ask(server, dialect, WEATHER, parallel_tool_calls=False)
    assert len(calls) <= 1 and well_formed(calls), text
