"""Claude Code (npm ``@anthropic-ai/claude-code``) through ``streamparse serve``: a whole tool loop.

The upstream is a scripted OpenAI-compatible server with no tool support of its own: it writes a Hermes
``<tool_call>`` for Claude Code's ``Bash`` tool as text, and once the tool's output is in the history, an answer
that quotes it. ``claude -p`` (streaming, as Claude Code always asks) must run the command (it writes a file with a
token unique to the run) and print the final answer. Once with a native-tools backend and inline system messages
(the defaults), once with ``tool_prompt = "hermes"`` and ``system_messages = "fold"``.

Opt-in: ``python -m pytest -m agent_cli tests/clients/test_claude_code.py``. It installs the package with npm into
a cache directory (``$STREAMPARSE_AGENT_CACHE``, else ``~/.cache/streamparse-agents``; the package spec from
``$STREAMPARSE_CLAUDE_CODE``, default the latest release) and skips, saying why, without node and npm or when the
install fails and nothing is cached. Tested with 2.1.197.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from streamparse.harness.replay import completion_chunks, sse_frames
from streamparse.proxy.runner import ServerThread, free_port, port_open, started_process

pytestmark = pytest.mark.agent_cli

PACKAGE = os.environ.get("STREAMPARSE_CLAUDE_CODE", "@anthropic-ai/claude-code@latest")
CACHE = Path(os.environ.get("STREAMPARSE_AGENT_CACHE", Path.home() / ".cache" / "streamparse-agents")) / "claude-code"


@pytest.fixture(scope="module")
def claude() -> tuple[Path, str]:
    """The ``claude`` executable, installed with npm into the cache directory, and its version line."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Claude Code needs node and npm, which are not on PATH")
    CACHE.mkdir(parents=True, exist_ok=True)
    binary = CACHE / "node_modules" / ".bin" / "claude"
    try:
        done = subprocess.run(["npm", "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", PACKAGE],
                              capture_output=True, text=True, timeout=600)
        failure = None if done.returncode == 0 else done.stderr.strip()[-800:]
    except subprocess.TimeoutExpired:
        failure = "npm install took longer than 600 s"
    if failure is not None and not binary.exists():
        pytest.skip(f"npm install {PACKAGE} failed and nothing is cached in {CACHE}: {failure}")
    try:
        version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"the installed claude does not run here: {exc}")
    if version.returncode != 0:
        pytest.skip(f"the installed claude does not run here: {version.stderr.strip()[-800:]}")
    return binary, version.stdout.strip()


class ScriptedModel:
    """A tool-less model server: a Bash call written as text first, then an answer quoting the tool's output.
    A request for JSON (Claude Code's session title) gets a JSON object. Records each request body."""

    def __init__(self, command: str, token: str):
        self.command, self.token = command, token
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []

    def tool_output(self, body: dict[str, Any]) -> str | None:
        """The text of the tool results in the history (a ``tool`` message, or one rendered by tool prompting)."""
        texts = [json.dumps(m.get("content")) for m in body.get("messages") or ()
                 if m.get("role") == "tool" or (m.get("role") == "user" and "<tool_response" in json.dumps(m))]
        return "\n".join(texts) if texts else None

    def answer(self, body: dict[str, Any]) -> str:
        if (body.get("response_format") or {}).get("type") == "json_schema":
            return '{"title": "Run a command"}'
        output = self.tool_output(body)
        if output is None:
            call = {"name": "Bash", "arguments": {"command": self.command, "description": "Write the token"}}
            return "I will run it.\n<tool_call>" + json.dumps(call) + "</tool_call>"
        said = self.token if self.token in output else "nothing I could read"
        return f"The command printed {said}."

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


@pytest.fixture
def token() -> str:
    return f"streamparse-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def model(token: str) -> Iterator[ScriptedModel]:
    yield ScriptedModel(f"echo {token} | tee proof.txt", token)


BACKENDS = {"native_inline": "", "prompted_fold": 'tool_prompt = "hermes"\nsystem_messages = "fold"\n'}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_claude_code_runs_a_tool_loop_through_the_proxy(claude: tuple[Path, str], model: ScriptedModel, token: str,
                                                        backend: str, tmp_path: Path) -> None:
    binary, version = claude
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    with ServerThread(model.app()) as up:
        config = tmp_path / "streamparse.toml"
        config.write_text(f'[backends.local]\nupstream = "{up.url}/v1"\ndefault = true\n{BACKENDS[backend]}')
        port = free_port()
        serve = [sys.executable, "-m", "streamparse", "serve", "--config", str(config), "--port", str(port),
                 "--log-level", "warning"]
        with started_process(serve, lambda: port_open(port)):
            env = {"PATH": os.environ["PATH"], "HOME": str(home), "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
                   "ANTHROPIC_API_KEY": "sk-local", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
                   "DISABLE_AUTOUPDATER": "1"}
            run = subprocess.run([str(binary), "-p", "Run the command with the Bash tool, then say what it printed.",
                                  "--output-format", "json", "--allowedTools", "Bash"],
                                 cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"{version}: {run.stderr[-2000:]}\n{run.stdout[-2000:]}"
    result = json.loads(run.stdout)
    assert (work / "proof.txt").read_text().strip() == token  # Claude Code ran the Bash command
    assert result["is_error"] is False and result["result"] == f"The command printed {token}.", result
    main = [r for r in model.requests if r.get("response_format") is None]
    assert len(main) == 2 and all(r.get("stream") is True for r in main)  # the call, then the answer
    if backend == "prompted_fold":  # one leading system message, holding the tool instructions
        for body in main:
            roles = [m["role"] for m in body["messages"]]
            assert roles.count("system") == 1 and roles[0] == "system" and "tools" not in body
            assert "<tool_call>" in body["messages"][0]["content"]
    else:
        assert all(any(t["function"]["name"] == "Bash" for t in r["tools"]) for r in main)
