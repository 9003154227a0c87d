"""A page in a real browser (headless Chromium) calls the proxy from another origin: a page served on one loopback
port, `streamparse serve --cors-origins <that page's origin>` on another, so every request is cross-origin and the
browser enforces CORS itself. The page streams a chat completion with the openai SDK's headers, asks
`/v1/messages` with the anthropic SDK's, and reads `x-request-id`; a proxy that does not allow the page's origin is
refused by the browser. The page posts what it found back to its own server (no DOM scraping, no fixed wait). Opt-in part: the Vercel AI SDK bundled into the page (esbuild), skipped without node/npm.

Skips (saying why) when no Chromium is installed (Debian: `apt-get install -y chromium`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from streamparse.proxy.app import create_app
from streamparse.proxy.config import ProxyConfig
from streamparse.proxy.runner import ServerThread, free_port, port_open
from upstreams import RecordingModel

CALL = 'Checking. <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
TOOL = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if found := shutil.which(name):
            return found
    pytest.skip("no Chromium on PATH (Debian: apt-get install -y chromium)")


class Page:
    """A page server on 127.0.0.1: ``/`` is ``html``, ``/app.js`` is ``script``. The page posts its result (JSON) to
    ``/result``; ``/hold``, an image the page shows, is answered only then, so the page's load event (after which
    Chromium's ``--dump-dom`` ends the browser) waits for the result, however long the page's requests take."""

    def __init__(self, html: str, script: str = "") -> None:
        self.html, self.script = html + '<img src="/hold" alt="">', script
        self.result: dict[str, Any] | None = None
        self.port = free_port()
        self.origin = f"http://127.0.0.1:{self.port}"

    def app(self) -> Starlette:
        posted = anyio.Event()

        async def page(request: Request) -> Response:
            return HTMLResponse(self.html)

        async def script(request: Request) -> Response:
            return Response(self.script, media_type="text/javascript")

        async def result(request: Request) -> Response:
            self.result = json.loads(await request.body())
            posted.set()
            return Response(status_code=204)

        async def hold(request: Request) -> Response:
            with anyio.move_on_after(HOLD_SECONDS):  # (a page that never posts still ends: its result is missing)
                await posted.wait()
            return Response(GIF, media_type="image/gif")

        return Starlette(routes=[Route("/", page), Route("/app.js", script), Route("/hold", hold),
                                 Route("/result", result, methods=["POST"])])

    def run(self, browser: str) -> dict[str, Any]:
        """Load the page in headless Chromium until its load event; what the page posted."""
        with ServerThread(self.app(), port=self.port), tempfile.TemporaryDirectory() as profile:
            done = subprocess.run([browser, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                                   f"--user-data-dir={profile}", "--dump-dom", self.origin + "/"],
                                  capture_output=True, text=True, timeout=HOLD_SECONDS + 60)
        assert self.result is not None, f"the page posted no result: {done.stderr[-2000:]}"
        assert "error" not in self.result, self.result
        return self.result


HOLD_SECONDS = 90
GIF = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")
POST_RESULT = 'fetch("/result", {method: "POST", body: JSON.stringify(out)});'


PAGE = """<!doctype html><html><body><script>
const PROXY = %(proxy)s, OTHER = %(other)s, TOOLS = %(tools)s, SCHEMA = %(schema)s;
async function chat(base) {
  const r = await fetch(base + "/v1/chat/completions", {method: "POST", headers: {
      "content-type": "application/json", "authorization": "Bearer sk-browser", "x-stainless-lang": "js",
      "x-stainless-os": "Unknown", "x-stainless-retry-count": "0", "x-request-id": "browser-chat-1"},
    body: JSON.stringify({model: "m", stream: true, tools: TOOLS, messages: [{role: "user", content: "weather?"}]})});
  const reader = r.body.getReader(), decoder = new TextDecoder();
  let buffer = "", text = "", names = [], args = {}, finish = null;
  for (;;) {
    const {done, value} = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, {stream: true});
    let end;
    while ((end = buffer.indexOf("\\n\\n")) >= 0) {
      const event = buffer.slice(0, end); buffer = buffer.slice(end + 2);
      for (const line of event.split("\\n")) {
        if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
        for (const choice of JSON.parse(line.slice(6)).choices || []) {
          const delta = choice.delta || {};
          text += delta.content || "";
          for (const call of delta.tool_calls || []) {
            if (call.function && call.function.name) names.push(call.function.name);
            args[call.index] = (args[call.index] || "") + ((call.function && call.function.arguments) || "");
          }
          finish = choice.finish_reason || finish;
        }
      }
    }
  }
  return {status: r.status, id: r.headers.get("x-request-id"), type: r.headers.get("content-type"), text, names,
          args: Object.values(args), finish};
}
async function messages(base) {
  const r = await fetch(base + "/v1/messages", {method: "POST", headers: {
      "content-type": "application/json", "x-api-key": "sk-browser", "anthropic-version": "2023-06-01",
      "anthropic-dangerous-direct-browser-access": "true"},
    body: JSON.stringify({model: "m", max_tokens: 100, messages: [{role: "user", content: "weather?"}],
                          tools: [{name: "get_weather", input_schema: SCHEMA}]})});
  return {status: r.status, id: r.headers.get("x-request-id"), body: await r.json()};
}
(async () => {
  const out = {};
  try {
    out.chat = await chat(PROXY);
    out.messages = await messages(PROXY);
    try { await chat(OTHER); out.blocked = null; } catch (e) { out.blocked = String(e); }
  } catch (e) { out.error = String(e); }
  %(post)s
})();
</script></body></html>"""


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[RecordingModel, ServerThread]]:
    model = RecordingModel(CALL)
    with ServerThread(model.app()) as thread:
        yield model, thread


@pytest.fixture
def serve(upstream: tuple[RecordingModel, ServerThread]) -> Iterator[Any]:
    """``serve(origins)``: a real ``streamparse serve --cors-origins ORIGINS`` in front of the upstream; its URL."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(origins: str) -> str:
        port = free_port()
        procs.append(subprocess.Popen([sys.executable, "-m", "streamparse", "serve", "--upstream",
                                       upstream[1].url + "/v1", "--port", str(port), "--cors-origins", origins,
                                       "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 30
        while not port_open(port) and procs[-1].poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert port_open(port)
        return f"http://127.0.0.1:{port}"

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(30)


def test_a_page_on_another_origin_streams_through_the_proxy(serve: Any,
                                                             upstream: tuple[RecordingModel, ServerThread]) -> None:
    browser = chromium()
    model = upstream[0]
    page = Page("")
    origin = page.origin
    proxy = serve(origin)
    elsewhere = ProxyConfig.single(upstream[1].url + "/v1", cors_origins=["https://somewhere-else.example"])
    with ServerThread(create_app(elsewhere)) as other:
        page.html = PAGE % {"proxy": json.dumps(proxy), "other": json.dumps(other.url), "schema": json.dumps(TOOL),
                            "post": POST_RESULT, "tools": json.dumps([{"type": "function", "function": {
                                "name": "get_weather", "parameters": TOOL}}])} + page.html
        result = page.run(browser)
    chat = result["chat"]
    assert chat["status"] == 200 and chat["type"].startswith("text/event-stream")
    assert chat["text"] == "Checking. " and chat["names"] == ["get_weather"] and chat["finish"] == "tool_calls"
    assert [json.loads(a) for a in chat["args"]] == [{"city": "Paris"}]
    assert chat["id"] == "browser-chat-1"  # exposed to the page, and the upstream saw the same one
    assert any(h.get("x-request-id") == "browser-chat-1" for h in model.headers)
    assert any(h.get("origin") == origin for h in model.headers)
    messages = result["messages"]
    assert messages["status"] == 200 and len(messages["id"]) == 32
    assert [b["type"] for b in messages["body"]["content"]] == ["text", "tool_use"]
    assert messages["body"]["content"][1]["input"] == {"city": "Paris"}
    assert result["blocked"] and "Failed to fetch" in result["blocked"]  # the browser refused the other proxy


AI_SDK_PAGE = """<!doctype html><html><body><script src="/app.js"></script></body></html>"""
AI_SDK_SCRIPT = """
import { streamText, tool, jsonSchema } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
(async () => {
  const out = {};
  try {
    const provider = createOpenAI({ baseURL: PROXY + "/v1", apiKey: "sk-browser" });
    const result = streamText({ model: provider.chat("m"), prompt: "weather?",
      tools: { get_weather: tool({ inputSchema: jsonSchema(SCHEMA) }) } });
    out.text = "";
    for await (const part of result.textStream) out.text += part;
    out.calls = (await result.toolCalls).map((c) => ({ name: c.toolName, input: c.input }));
    out.finish = await result.finishReason;
  } catch (e) { out.error = String(e && e.stack || e); }
  POST_RESULT
})();
""".replace("POST_RESULT", POST_RESULT)


@pytest.mark.agent_cli
def test_the_vercel_ai_sdk_in_a_page(serve: Any, tmp_path: Path) -> None:
    """Opt-in (``-m agent_cli``): ``ai`` + ``@ai-sdk/openai`` from npm, bundled for the browser with esbuild."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "clients"))
    from agent_harness import npm_install

    browser = chromium()
    sdk = npm_install("vercel-ai-browser", os.environ.get("STREAMPARSE_VERCEL_AI", "ai@latest @ai-sdk/openai@latest")
                      .split() + ["esbuild@latest"], "node_modules/.bin/esbuild")
    page = Page(AI_SDK_PAGE)
    proxy = serve(page.origin)
    entry = tmp_path / "entry.mjs"
    entry.write_text(f"const PROXY = {json.dumps(proxy)}, SCHEMA = {json.dumps(TOOL)};\n" + AI_SDK_SCRIPT)
    bundle = tmp_path / "app.js"
    built = subprocess.run([str(sdk / "node_modules/.bin/esbuild"), str(entry), "--bundle", "--format=iife",
                            "--platform=browser", f"--outfile={bundle}"], cwd=sdk, capture_output=True, text=True,
                           timeout=120, env={**os.environ, "NODE_PATH": str(sdk / "node_modules")})
    assert built.returncode == 0, built.stderr[-2000:]
    page.script = bundle.read_text()
    result = page.run(browser)
    assert result["text"] == "Checking. " and result["finish"] == "tool-calls"
    assert result["calls"] == [{"name": "get_weather", "input": {"city": "Paris"}}]
