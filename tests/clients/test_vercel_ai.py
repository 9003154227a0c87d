"""The Vercel AI SDK (npm ``ai`` + ``@ai-sdk/openai`` + ``zod``) through ``streamparse serve``: a multi-step tool loop.

``vercel_tool_loop.mjs`` uses the SDK's default OpenAI provider (``createOpenAI({baseURL, apiKey})``; ``openai(id)``
is the Responses API) with one tool (a zod input schema; its ``execute`` prints the token it got) and
``stopWhen: stepCountIs(3)``, through ``generateText`` and through ``streamText``. The upstream is a scripted
OpenAI-compatible chat server with no tool support: it writes some text and a Hermes ``<tool_call>`` for the tool,
and once the tool's result is in the history, an answer quoting it. Each with the SDK's default ``store`` (its second
request names the first answer's message by an ``item_reference``, which the proxy reads from the answers it
stored) and with ``providerOptions.openai.store = false`` (the SDK sends the message itself).

Opt-in: ``python -m pytest -m agent_cli tests/clients/test_vercel_ai.py``. It installs the packages with npm into a
cache directory (``$STREAMPARSE_AGENT_CACHE``, else ``~/.cache/streamparse-agents``, subdirectory ``vercel-ai``; the
package specs from ``$STREAMPARSE_VERCEL_AI`` (space-separated), default the latest releases) and skips, saying why,
without node and npm or when the install fails and nothing is cached. Tested with ai 7.0.173, @ai-sdk/openai 4.0.118,
zod 4.6.7.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from agent_harness import Relay, ScriptedUpstream, npm_install, serve_proxy, tool_outputs
from redis_server import RedisServer, redis_server  # noqa: F401 (a fixture)

pytestmark = pytest.mark.agent_cli

PACKAGES = os.environ.get("STREAMPARSE_VERCEL_AI", "ai@latest @ai-sdk/openai@latest zod@latest").split()
SCRIPT = Path(__file__).with_name("vercel_tool_loop.mjs")
MODEL = "qwen2.5-coder"
LEAD = "Let me save it."


@pytest.fixture(scope="module")
def sdk() -> Path:
    """The cache directory the SDK is installed in (its ``node_modules``)."""
    return npm_install("vercel-ai", PACKAGES, "node_modules/@ai-sdk/openai/package.json")


class ScriptedToolModel(ScriptedUpstream):
    """Some text and a ``save_token`` call written as text, then, once a tool result is in the history, an answer
    quoting it."""

    def __init__(self, token: str):
        super().__init__()
        self.token = token

    def answer(self, body: dict[str, Any]) -> str:
        output = tool_outputs(body)
        if output is None:
            call = {"name": "save_token", "arguments": {"token": self.token}}
            return f"{LEAD}\n<tool_call>" + json.dumps(call) + "</tool_call>"
        said = f"saved {self.token}" if f"saved {self.token}" in output else "nothing I could read"
        return f"The tool answered: {said}."


@pytest.fixture
def token() -> str:
    return f"streamparse-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def model(token: str) -> Iterator[ScriptedToolModel]:
    yield ScriptedToolModel(token)


def run_script(sdk: Path, where: Path, mode: str, base_url: str, token: str, store: str) -> tuple[dict[str, Any], str]:
    """Run the script beside the cached ``node_modules``; (its RESULT object, everything it printed)."""
    where.mkdir()
    shutil.copy(SCRIPT, where / SCRIPT.name)
    (where / "node_modules").symlink_to(sdk / "node_modules", target_is_directory=True)
    run = subprocess.run(["node", SCRIPT.name, mode, base_url, token, MODEL, store], cwd=where,
                         env={"PATH": os.environ["PATH"], "HOME": str(where)}, capture_output=True, text=True,
                         timeout=120)
    printed = f"rc {run.returncode}\nstdout: {run.stdout[-4000:]}\nstderr: {run.stderr[-3000:]}"
    results = [line[len("RESULT "):] for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert results, printed
    return json.loads(results[-1]), printed


@pytest.mark.parametrize("store", ["default", "false"])
@pytest.mark.parametrize("mode", ["generate", "stream"])
def test_vercel_ai_runs_a_tool_loop_through_the_proxy(sdk: Path, model: ScriptedToolModel, token: str, mode: str,
                                                      store: str, tmp_path: Path) -> None:
    with serve_proxy(model, "", tmp_path) as proxy, Relay(proxy) as relay:
        result, printed = run_script(sdk, tmp_path / "script", mode, relay.url + "/v1", token, store)
    exchanges = relay.posts("/v1/responses")
    where = f"{printed}\nanswers: {[bytes(e.answer[-2000:]) for e in exchanges]}"
    assert not result["errors"], where
    assert result["runs"] == [{"token": token}] and f"TOOL save_token {token}" in printed, where  # the tool ran
    steps = result["steps"]
    assert len(steps) == 2, where
    assert steps[0]["toolCalls"] == [{"toolName": "save_token", "input": {"token": token}}], where
    assert steps[0]["toolResults"] == [{"toolName": "save_token", "output": f"saved {token}"}], where
    assert result["text"] == f"The tool answered: saved {token}.", where

    # SDK -> proxy: two Responses requests, streamed or not as asked
    assert len(exchanges) == 2 and all(e.status == 200 for e in exchanges), where
    assert all(bool(e.body.get("stream")) == (mode == "stream") for e in exchanges), where
    if mode == "stream":
        assert {"tool-call", "tool-result", "text-delta"} <= set(result["parts"]), result["parts"]
    first_answer = exchanges[0].events()
    if mode == "stream":
        items = [e["item"] for e in first_answer if e.get("type") == "response.output_item.done"]
    else:
        items = first_answer[0]["output"]
    message = next(i for i in items if i["type"] == "message")
    call = next(i for i in items if i["type"] == "function_call")
    assert call["name"] == "save_token" and json.loads(call["arguments"]) == {"token": token}, items
    second = exchanges[1].body
    references = [i for i in second["input"] if i.get("type") == "item_reference"]
    if store == "default":  # the SDK names its first step's message; the proxy has to read it from its store
        assert {"type": "item_reference", "id": message["id"]} in references, second["input"]
    else:
        assert second.get("store") is False and not references, second["input"]
    outputs = [i for i in second["input"] if i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == [call["call_id"]], second["input"]

    # proxy -> upstream: the second chat request holds the first step whole (its text, its call, the result)
    assert len(model.requests) == 2, model.requests
    history = model.requests[1]["messages"]
    assistant = [m for m in history if m["role"] == "assistant"]
    assert len(assistant) == 1 and LEAD in (assistant[0].get("content") or ""), history
    assert [c["function"]["name"] for c in assistant[0]["tool_calls"]] == ["save_token"], history
    assert [m for m in history if m["role"] == "tool"][0]["content"] == f"saved {token}", history


@pytest.mark.parametrize("mode", ["generate", "stream"])
def test_vercel_ai_loops_hold_across_two_workers_with_a_shared_store(sdk: Path, token: str, mode: str, tmp_path: Path,
                                                                      redis_server: RedisServer) -> None:
    """The SDK's default ``store``: each loop's second request names the first answer's message by
    ``item_reference``, and may reach the other worker. With ``--responses-store redis://…`` every loop completes
    (with each worker's own memory store about half of them failed)."""
    model = ScriptedToolModel(token)
    failed: list[str] = []
    with serve_proxy(model, "", tmp_path, ["--workers", "2", "--responses-store", redis_server.url]) as proxy:
        for loop in range(10):
            result, printed = run_script(sdk, tmp_path / f"loop{loop}", mode, proxy + "/v1", token, "default")
            if result["errors"] or result.get("text") != f"The tool answered: saved {token}.":
                failed.append(printed)
    assert not failed, failed[0]
    second_steps = [body for body in model.requests if any(m["role"] == "tool" for m in body["messages"])]
    assert len(second_steps) == 10  # each loop's second step reached the model, its first step read back whole
    assert all(LEAD in json.dumps(body["messages"]) for body in second_steps)
