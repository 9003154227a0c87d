"""Claude Code (npm ``@anthropic-ai/claude-code``) through ``streamparse serve``: a whole tool loop.

The upstream is a scripted OpenAI-compatible server with no tool support of its own: it writes a Hermes
``<tool_call>`` for Claude Code's ``Bash`` tool as text, and once the tool's output is in the history, an answer
that quotes it. ``claude -p`` (streaming, as Claude Code always asks) must run the command (it writes a file with a
token unique to the run) and print the final answer. Once with a native-tools backend and inline system messages
(the defaults), once with ``tool_prompt = "hermes"`` and ``system_messages = "fold"``.

Opt-in: ``python -m pytest -m agent_cli tests/clients/test_claude_code.py``. It installs the package with npm into
a cache directory (``$STREAMPARSE_AGENT_CACHE``, else ``~/.cache/streamparse-agents``; the package spec from
``$STREAMPARSE_CLAUDE_CODE``, default the latest release) and skips, saying why, without node and npm or when the
install fails and nothing is cached. Tested with 2.1.337 (issue 40 tried 2.1.332).
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from agent_harness import ScriptedUpstream, npm_install, serve_proxy, tool_outputs, version_of

pytestmark = pytest.mark.agent_cli

PACKAGE = os.environ.get("STREAMPARSE_CLAUDE_CODE", "@anthropic-ai/claude-code@latest")


@pytest.fixture(scope="module")
def claude() -> tuple[Path, str]:
    """The ``claude`` executable, installed with npm into the cache directory, and its version line."""
    binary = npm_install("claude-code", [PACKAGE], "node_modules/.bin/claude") / "node_modules" / ".bin" / "claude"
    return binary, version_of([str(binary), "--version"], "claude")


class ScriptedModel(ScriptedUpstream):
    """A Bash call written as text first, then an answer quoting the tool's output.
    A request for JSON (Claude Code's session title) gets a JSON object."""

    def __init__(self, command: str, token: str):
        super().__init__()
        self.command, self.token = command, token

    def answer(self, body: dict[str, Any]) -> str:
        if (body.get("response_format") or {}).get("type") == "json_schema":
            return '{"title": "Run a command"}'
        output = tool_outputs(body)
        if output is None:
            call = {"name": "Bash", "arguments": {"command": self.command, "description": "Write the token"}}
            return "I will run it.\n<tool_call>" + json.dumps(call) + "</tool_call>"
        said = self.token if self.token in output else "nothing I could read"
        return f"The command printed {said}."


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
    with serve_proxy(model, BACKENDS[backend], tmp_path) as proxy:
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "ANTHROPIC_BASE_URL": proxy,
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
