"""Codex CLI (npm ``@openai/codex``) through ``streamparse serve``'s Responses API: a whole tool loop.

Codex talks to a custom provider (``wire_api = "responses"``) at the proxy, which sits in front of a scripted
OpenAI-compatible chat server with no tool support of its own. That server writes a Hermes ``<tool_call>`` as text,
and once the tool's output is in the history, an answer quoting it. ``codex exec`` (which always streams) must run
the call and print the final answer. Cases:

- ``native``: a native-tools backend; the upstream finds Codex's shell tool among the request's ``tools`` (in Codex
  0.171 ``exec_command`` with ``{"cmd": ...}``; the name and argument are read from what is offered, so a renamed
  tool still works) and calls it with a command writing a token unique to the run into a file;
- ``prompted``: the same with ``tool_prompt = "hermes"`` (the tools are then described in the system prompt);
- ``apply_patch``: Codex offers its ``custom`` ``apply_patch`` tool only to models of its catalog; the run points
  ``model_catalog_json`` at a catalog entry for the local model name (cloned from ``codex debug models``), the
  upstream calls ``apply_patch`` with ``{"input": <patch>}``, and the proxy must give it back as a
  ``custom_tool_call`` that Codex applies (the patch adds a file holding the token).

Opt-in: ``python -m pytest -m agent_cli tests/clients/test_codex.py``. It installs the package with npm into a cache
directory (``$STREAMPARSE_AGENT_CACHE``, else ``~/.cache/streamparse-agents``, subdirectory ``codex``; the package
spec from ``$STREAMPARSE_CODEX``, default the latest release) and skips, saying why, without node and npm or when the
install fails and nothing is cached. Tested with 0.171.0.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from agent_harness import Relay, ScriptedUpstream, npm_install, serve_proxy, tool_outputs, version_of

pytestmark = pytest.mark.agent_cli

PACKAGE = os.environ.get("STREAMPARSE_CODEX", "@openai/codex@latest")
MODEL = "qwen2.5-coder"  # a local model's name: not in Codex's catalog
KEY_ENV = "STREAMPARSE_CODEX_KEY"
PATCH_TOOL = "apply_patch"


@pytest.fixture(scope="module")
def codex() -> tuple[Path, str]:
    """The ``codex`` executable, installed with npm into the cache directory, and its version line."""
    binary = npm_install("codex", [PACKAGE], "node_modules/.bin/codex") / "node_modules" / ".bin" / "codex"
    return binary, version_of([str(binary), "--version"], "codex")


def offered_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tools a chat request offers, name -> parameter schema: its native ``tools``, else the ones the tool
    prompt lists in a system message (``## name``, description, ``Parameters (JSON schema): {...}``)."""
    tools = {t["function"]["name"]: t["function"].get("parameters") or {}
             for t in body.get("tools") or () if t.get("type") == "function"}
    if tools:
        return tools
    for message in body.get("messages") or ():
        if message.get("role") == "system" and isinstance(message.get("content"), str):
            for name, schema in re.findall(r"^## (\S+)\n(?:(?!^## ).*\n)*?Parameters \(JSON schema\): (\{.*\})$",
                                           message["content"], flags=re.MULTILINE):
                try:
                    tools[name] = json.loads(schema)
                except ValueError:
                    continue
    return tools


def shell_call(tools: dict[str, dict[str, Any]], command: str) -> dict[str, Any]:
    """A call of the shell tool among ``tools`` running ``command``: the tool whose one required parameter is the
    command (``cmd`` or ``command``), preferring a name with ``exec`` or ``shell`` in it."""
    candidates = []
    for name, schema in tools.items():
        props, required = schema.get("properties") or {}, schema.get("required") or []
        for key in ("cmd", "command"):
            if key in required and key in props:
                value: Any = ["bash", "-lc", command] if props[key].get("type") == "array" else command
                rank = 0 if ("exec" in name or "shell" in name) else 1
                candidates.append((rank, name, {key: value}))
    if not candidates:
        raise AssertionError(f"no shell tool among the offered tools: {sorted(tools)}")
    _, name, arguments = min(candidates)
    return {"name": name, "arguments": arguments}


class ScriptedCodexModel(ScriptedUpstream):
    """First a call written as text (the shell tool running ``command``, or ``apply_patch`` with ``patch``), then,
    once a tool result is in the history, an answer quoting the token if the result shows the tool worked."""

    def __init__(self, token: str, command: str, patch: str | None = None):
        super().__init__()
        self.token, self.command, self.patch = token, command, patch
        self.calls: list[dict[str, Any]] = []

    def answer(self, body: dict[str, Any]) -> str:
        output = tool_outputs(body)
        if output is None:
            if self.patch is not None:
                call = {"name": PATCH_TOOL, "arguments": {"input": self.patch}}
            else:
                call = shell_call(offered_tools(body), self.command)
            self.calls.append(call)
            return "I will run it.\n<tool_call>" + json.dumps(call) + "</tool_call>"
        worked = self.token in output if self.patch is None else "proof.txt" in output
        return f"The tool said {self.token}." if worked else "The tool did not work."


def codex_home(home: Path, port: int, catalog: Path | None) -> Path:
    """A throwaway ``CODEX_HOME`` whose config sends ``MODEL`` to the proxy on ``port`` over the Responses API."""
    home.mkdir()
    catalog_line = f"model_catalog_json = {json.dumps(str(catalog))}\n" if catalog else ""
    (home / "config.toml").write_text(
        f'model = "{MODEL}"\nmodel_provider = "streamparse"\n{catalog_line}'
        "[model_providers.streamparse]\n"
        'name = "streamparse"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\n'
        'wire_api = "responses"\n'
        f'env_key = "{KEY_ENV}"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n")
    return home


def patch_catalog(binary: Path, where: Path) -> Path:
    """A model catalog with one entry for ``MODEL``: a copy of a built-in entry whose ``apply_patch`` is the
    freeform (``custom``) tool, read from ``codex debug models``. Skips when there is none."""
    home = where / "catalog-home"
    home.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(where), "CODEX_HOME": str(home)}
    done = subprocess.run([str(binary), "debug", "models"], env=env, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        pytest.skip(f"codex debug models failed: {done.stderr[-800:]}")
    models = json.loads(done.stdout).get("models") or []
    freeform = [m for m in models if m.get("apply_patch_tool_type") == "freeform"]
    if not freeform:
        pytest.skip("no model in this Codex's catalog gets the freeform apply_patch tool")
    entry = next((m for m in freeform if m.get("slug") == "gpt-5.5"), freeform[0])
    entry = {**entry, "slug": MODEL, "display_name": MODEL, "description": "a local model through streamparse"}
    catalog = where / "catalog.json"
    catalog.write_text(json.dumps({"models": [entry]}))
    return catalog


@pytest.fixture
def token() -> str:
    return f"streamparse-{uuid.uuid4().hex[:12]}"


CASES = {"native": "", "prompted": 'tool_prompt = "hermes"\n', "apply_patch": ""}


@pytest.mark.parametrize("case", sorted(CASES))
def test_codex_runs_a_tool_loop_through_the_proxy(codex: tuple[Path, str], token: str, case: str,
                                                  tmp_path: Path) -> None:
    binary, version = codex
    patch = f"*** Begin Patch\n*** Add File: proof.txt\n+{token}\n*** End Patch\n"
    model = ScriptedCodexModel(token, f"echo {token} | tee proof.txt", patch if case == "apply_patch" else None)
    work = tmp_path / "work"
    work.mkdir()
    catalog = patch_catalog(binary, tmp_path) if case == "apply_patch" else None
    with serve_proxy(model, CASES[case], tmp_path) as proxy, Relay(proxy) as relay:
        home = codex_home(tmp_path / "codex-home", relay.port, catalog)
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CODEX_HOME": str(home), KEY_ENV: "sk-local",
               "NO_COLOR": "1"}
        run = subprocess.run([str(binary), "exec", "--skip-git-repo-check",
                              "--dangerously-bypass-approvals-and-sandbox", "--ephemeral", "--color", "never",
                              "Run the command with your shell tool, then say what it printed."],
                             cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=300)
    exchanges = relay.posts("/v1/responses")
    where = (f"{version} ({case}): rc {run.returncode}\nstderr: {run.stderr[-3000:]}\nstdout: {run.stdout[-2000:]}"
             f"\nanswers: {[bytes(e.answer[-1500:]) for e in exchanges]}")
    assert run.returncode == 0, where
    assert (work / "proof.txt").read_text().strip() == token, where  # Codex ran the call
    assert f"The tool said {token}." in run.stdout, where
    # Codex -> proxy: two streamed Responses requests; proxy -> upstream: two streamed chat requests
    assert len(exchanges) == 2 and all(e.body["stream"] is True and e.status == 200 for e in exchanges), where
    assert len(model.requests) == 2 and all(r.get("stream") is True for r in model.requests), where
    first = model.requests[0]
    if case == "prompted":  # the tools are described in the system prompt, not offered natively
        assert "tools" not in first and model.calls[0]["name"] in offered_tools(first)
    else:
        assert model.calls[0]["name"] in [t["function"]["name"] for t in first["tools"]]
    # the item the proxy made of the text call, and the result Codex sent back for it
    done = [e["item"] for e in exchanges[0].events() if e.get("type") == "response.output_item.done"]
    calls = [i for i in done if i["type"] in ("function_call", "custom_tool_call")]
    assert len(calls) == 1 and calls[0]["name"] == model.calls[0]["name"], done
    call = calls[0]
    results = {i["type"]: i for i in exchanges[1].body["input"] if i.get("call_id") == call["call_id"]}
    if case == "apply_patch":  # offered as a custom tool (by the catalog entry), called as one
        assert {"type": "custom", "name": PATCH_TOOL} in [{k: t.get(k) for k in ("type", "name")}
                                                          for t in exchanges[0].body["tools"]], exchanges[0].body
        patch_tool = next(t["function"] for t in first["tools"] if t["function"]["name"] == PATCH_TOOL)
        assert patch_tool["parameters"]["required"] == ["input"]  # the custom tool, as a one-string function
        assert call["type"] == "custom_tool_call" and call["input"] == model.patch, call
        assert "custom_tool_call_output" in results, results
    else:
        assert call["type"] == "function_call" and json.loads(call["arguments"]) == model.calls[0]["arguments"]
        assert token in results["function_call_output"]["output"], results
