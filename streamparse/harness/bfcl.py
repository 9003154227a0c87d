"""Opt-in real-model evaluation on a BFCL slice: ``python -m streamparse.harness.bfcl --help``.

For each configuration and category, every case's question goes with its functions (as OpenAI
``tools``) through the real ``openai`` client, streamed, to:

- ``native``: llama.cpp's ``llama-server --jinja`` directly (its own tool calling);
- ``template``: the streamparse proxy in front of it, no ``tool_prompt`` (tools go upstream, the
  model's own template renders them, the proxy parses what comes back);
- ``prompt:DIALECT``: the proxy with ``tool_prompt = DIALECT`` (the proxy prompts the tools; no tools
  go upstream).

The proxy runs in this process, with an httpx transport that records the bytes llama.cpp sent, so
each record holds what the model wrote (``raw``) next to what the client received. Records are
appended as JSON lines as they come (``--out``), so a run can be stopped and resumed (``--resume``).
Scoring is :mod:`bfcl_score`; the report (table, failures, what the parser lost) is :mod:`bfcl_report`.

Invariant: one llama-server for the whole run, one request at a time, temperature 0; a case that
fails to complete is recorded with its error, never skipped silently.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import httpx

from ..proxy.app import create_app
from ..proxy.config import ProxyConfig
from ..proxy.runner import ServerThread, free_port, started_process
from .bfcl_report import report
from .bfcl_score import openai_tools, score_case

__all__ = ["CATEGORIES", "load_cases", "Recorder", "ask", "run", "main"]

CATEGORIES = ("simple_python", "multiple", "parallel", "irrelevance")
DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "bfcl"
MODEL = "qwen2.5-coder-0.5b"


def load_cases(data: Path, category: str) -> list[dict[str, Any]]:
    """The cases of one category, each with its ``ground_truth`` (None for irrelevance)."""
    answers: dict[str, Any] = {}
    answer_file = data / "possible_answer" / f"BFCL_v4_{category}.json"
    if answer_file.exists():
        for line in answer_file.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                answers[row["id"]] = row["ground_truth"]
    cases = []
    for line in (data / f"BFCL_v4_{category}.json").read_text().splitlines():
        if line.strip():
            case = json.loads(line)
            case["ground_truth"] = answers.get(case["id"])
            cases.append(case)
    return cases


# --------------------------------------------------------------------------- recording what llama.cpp sent

class _Tee(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, sink: list[bytes]) -> None:
        self.inner, self.sink = inner, sink

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.sink.append(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class Recorder(httpx.AsyncBaseTransport):
    """An httpx transport that keeps every upstream request body and response body."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.log: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        response = await self.inner.handle_async_request(request)
        sink: list[bytes] = []
        entry: dict[str, Any] = {"request": body, "status": response.status_code, "body": sink}
        self.log.append(entry)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(response.status_code, headers=response.headers, stream=_Tee(response.stream, sink),
                              extensions=response.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()


def upstream_answer(entry: dict[str, Any]) -> dict[str, Any]:
    """What llama.cpp answered: its text, reasoning, the calls it parsed itself, finish reason, timings."""
    text = b"".join(entry["body"]).decode("utf-8", "replace")
    out: dict[str, Any] = {"status": entry["status"], "text": "", "reasoning": "", "calls": [], "timings": None}
    try:
        request = json.loads(entry["request"] or b"{}")
        out["tools_upstream"] = bool(request.get("tools"))
    except ValueError:
        pass
    if entry["status"] != 200:
        out["error"] = text[:2000]
        return out
    events = [line[6:] for line in text.splitlines() if line.startswith("data: ") and line[6:].strip() != "[DONE]"]
    objects = [json.loads(e) for e in events] if events else [json.loads(text)]
    calls: dict[int, dict[str, str]] = {}
    for obj in objects:
        out["timings"] = obj.get("timings") or out["timings"]
        for choice in obj.get("choices") or []:
            part = choice.get("delta") or choice.get("message") or {}
            out["text"] += part.get("content") or ""
            out["reasoning"] += part.get("reasoning_content") or ""
            for i, tc in enumerate(part.get("tool_calls") or []):
                call = calls.setdefault(tc.get("index", i), {"name": "", "arguments": ""})
                fn = tc.get("function") or {}
                call["name"] += fn.get("name") or ""
                call["arguments"] += fn.get("arguments") or ""
    out["calls"] = [c for _, c in sorted(calls.items())]
    return out


# --------------------------------------------------------------------------- asking

def request_body(case: dict[str, Any], max_tokens: int, seed: int) -> dict[str, Any]:
    return {"model": MODEL, "messages": case["question"][0], "tools": openai_tools(case["function"]),
            "tool_choice": "auto", "temperature": 0, "seed": seed, "max_tokens": max_tokens}


def ask(base: str, body: dict[str, Any], stream: bool = True) -> dict[str, Any]:
    """One answer through the real openai client: content, calls, finish reason, seconds, error."""
    from openai import APIError, OpenAI

    client = OpenAI(base_url=base, api_key="none", max_retries=0, timeout=900)
    out: dict[str, Any] = {"content": "", "calls": [], "finish": None, "error": None}
    start = time.monotonic()
    try:
        if stream:
            calls: dict[int, dict[str, str]] = {}
            for chunk in client.chat.completions.create(stream=True, **body):
                extra = chunk.model_extra or {}
                out["timings"] = extra.get("timings") or out.get("timings")  # llama.cpp's own, when direct
                for choice in chunk.choices:
                    out["content"] += choice.delta.content or ""
                    for tc in choice.delta.tool_calls or []:
                        call = calls.setdefault(tc.index, {"name": "", "arguments": ""})
                        call["name"] += (tc.function.name or "") if tc.function else ""
                        call["arguments"] += (tc.function.arguments or "") if tc.function else ""
                    out["finish"] = choice.finish_reason or out["finish"]
            out["calls"] = [call for _, call in sorted(calls.items())]
        else:
            message = client.chat.completions.create(stream=False, **body).choices[0]
            out["content"] = message.message.content or ""
            out["finish"] = message.finish_reason
            out["calls"] = [{"name": tc.function.name, "arguments": tc.function.arguments}
                            for tc in message.message.tool_calls or [] if tc.type == "function"]
    except APIError as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    out["seconds"] = round(time.monotonic() - start, 3)
    return out


def _proxy_backend(config: str) -> dict[str, Any]:
    if config == "template":
        return {}
    if config.startswith("prompt:"):  # prompt:DIALECT, or prompt:DIALECT+constrain (a grammar for llama.cpp too)
        dialect, _, extra = config.split(":", 1)[1].partition("+")
        if extra not in ("", "constrain"):
            raise ValueError(f"unknown option {extra!r} in {config!r}: only +constrain")
        return {"tool_prompt": dialect, **({"constrain": "llamacpp"} if extra else {})}
    raise ValueError(f"unknown configuration {config!r}: native, template, prompt:DIALECT or prompt:DIALECT+constrain")


@contextmanager
def endpoint(config: str, upstream: str) -> Iterator[tuple[str, Recorder | None]]:
    """The base URL to ask under ``config``, and the recorder of what llama.cpp sent (None: native)."""
    if config == "native":
        yield upstream, None
        return
    recorder = Recorder()
    client = httpx.AsyncClient(transport=recorder, timeout=httpx.Timeout(900, connect=10))
    app = create_app(ProxyConfig.single(upstream, _proxy_backend(config)), client=client)
    with ServerThread(app) as server:
        yield server.url + "/v1", recorder


@contextmanager
def llama_server(binary: str, model: str, threads: int, context: int, seed: int) -> Iterator[str]:
    port = free_port()
    cmd = [binary, "-m", model, "--jinja", "-t", str(threads), "-tb", str(threads), "-c", str(context), "-np", "1",
           "--seed", str(seed), "--host", "127.0.0.1", "--port", str(port), "--no-webui"]

    def ready() -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    with started_process(cmd, ready, timeout=300, env={**os.environ, "OMP_NUM_THREADS": str(threads)}):
        yield f"http://127.0.0.1:{port}/v1"


# --------------------------------------------------------------------------- running

def run_case(config: str, category: str, case: dict[str, Any], base: str, recorder: Recorder | None,
             max_tokens: int, seed: int, compare: bool) -> dict[str, Any]:
    body = request_body(case, max_tokens, seed)
    seen = len(recorder.log) if recorder else 0
    answer = ask(base, body, stream=True)
    record: dict[str, Any] = {"config": config, "category": category, "id": case["id"], **answer}
    if recorder is not None:
        upstream = [upstream_answer(e) for e in recorder.log[seen:]]
        record["upstream"] = upstream
        record["raw"] = upstream[-1]["text"] if upstream else None
    else:
        record["raw"] = answer["content"]
    verdict = score_case(category, case["function"], [] if answer["error"] else answer["calls"],
                         case["ground_truth"])
    if answer["error"]:
        verdict = type(verdict)(False, "error", answer["error"][:300])
    record.update(correct=verdict.correct, kind=verdict.kind, detail=verdict.detail)
    if compare:
        # llama.cpp's answer may differ between two identical requests (its prompt cache changes the
        # numerics), so calls are compared only when the model wrote the same text both times.
        seen = len(recorder.log) if recorder else 0
        whole = ask(base, body, stream=False)
        whole_raw = upstream_answer(recorder.log[-1])["text"] if recorder and len(recorder.log) > seen else None
        same_calls = ([(c["name"], _json(c["arguments"])) for c in whole["calls"]] ==
                      [(c["name"], _json(c["arguments"])) for c in answer["calls"]])
        if recorder is None:
            same_raw = whole["content"] == answer["content"] or same_calls and not answer["calls"]
        else:
            same_raw = whole_raw == record["raw"]
        record["nonstream_same"] = (same_calls and whole["content"] == answer["content"]) if same_raw else "raw_differs"
        if record["nonstream_same"] is not True:
            record["nonstream"] = {**whole, "raw": whole_raw}
    return record


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def select(cases: list[dict[str, Any]], offset: int, limit: int | None) -> list[dict[str, Any]]:
    """The ``limit`` cases after the first ``offset`` (a tuning slice apart from a reporting one)."""
    return cases[offset:][:limit]


def interleaved(cases: dict[str, list[dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """Cases taken round-robin across categories, so a run stopped early has some of each."""
    order: list[tuple[str, dict[str, Any]]] = []
    for i in range(max((len(v) for v in cases.values()), default=0)):
        order += [(category, items[i]) for category, items in cases.items() if i < len(items)]
    return order


def run(upstream: str, configs: list[str], categories: list[str], data: Path, out: Path, *, limit: dict[str, int],
        max_tokens: int = 256, seed: int = 7, compare: int = 2, resume: bool = False,
        offset: int = 0) -> list[dict[str, Any]]:
    """Ask every case under every configuration (case-major, categories interleaved, so a stopped
    run is balanced); append each record to ``out`` (JSON lines) as it comes."""
    done: dict[tuple[str, str], dict[str, Any]] = {}
    if resume and out.exists():
        for line in out.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                done[(rec["config"], rec["id"])] = rec
    elif out.exists():
        out.unlink()
    records = list(done.values())
    cases = {c: select(load_cases(data, c), offset, limit.get(c)) for c in categories}
    position = {case["id"]: i for items in cases.values() for i, case in enumerate(items)}
    with ExitStack() as stack, out.open("a") as sink:
        endpoints = {config: stack.enter_context(endpoint(config, upstream)) for config in configs}
        for category, case in interleaved(cases):
            for config in configs:
                if (config, case["id"]) in done:
                    continue
                base, recorder = endpoints[config]
                record = run_case(config, category, case, base, recorder, max_tokens, seed,
                                  position[case["id"]] < compare)
                records.append(record)
                sink.write(json.dumps(record, ensure_ascii=False) + "\n")
                sink.flush()
                print(f"{config:<20} {case['id']:<22} {record['kind']:<18} {record['seconds']:>6.1f}s",
                      file=sys.stderr, flush=True)
    return records


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m streamparse.harness.bfcl", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the BFCL slice (default: %(default)s)")
    p.add_argument("--out", type=Path, default=Path("bfcl_records.jsonl"), help="records, JSON lines")
    p.add_argument("--configs", default="native,template,prompt:hermes,prompt:pythonic",
                   help="comma-separated: native, template, prompt:DIALECT, prompt:DIALECT+constrain")
    p.add_argument("--categories", default=",".join(CATEGORIES))
    p.add_argument("--limit", action="append", default=[], metavar="CATEGORY=N",
                   help="first N cases of a category (or N for all categories); repeatable")
    p.add_argument("--upstream", help="an already running llama-server's /v1 URL (else one is started)")
    p.add_argument("--llama-server", default=os.environ.get("LLAMA_SERVER", "llama-server"))
    p.add_argument("--model", default=os.environ.get("STREAMPARSE_GGUF"))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--context", type=int, default=4096)
    p.add_argument("--offset", type=int, default=0, help="skip the first N cases of each category")
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--compare", type=int, default=2, help="also ask the first N cases of each category unstreamed")
    p.add_argument("--resume", action="store_true", help="keep the records in --out and ask only the others")
    p.add_argument("--report-only", action="store_true", help="print the report of the records in --out")
    args = p.parse_args(argv)
    categories = [c.strip() for c in args.categories.split(",") if c.strip()]
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    limit: dict[str, int] = {}
    for item in args.limit:
        name, _, n = item.rpartition("=")
        for category in ([name] if name else categories):
            limit[category] = int(n)
    cases = {case["id"]: case for c in categories for case in load_cases(args.data, c)}
    if args.report_only:
        records = [json.loads(line) for line in args.out.read_text().splitlines() if line.strip()]
    else:
        with ExitStack() as stack:
            upstream = args.upstream
            if not upstream:
                if not args.model:
                    p.error("--model (or STREAMPARSE_GGUF) is needed to start llama-server, or give --upstream")
                upstream = stack.enter_context(llama_server(args.llama_server, args.model, args.threads, args.context,
                                                            args.seed))
            records = run(upstream, configs, categories, args.data, args.out, limit=limit,
                          max_tokens=args.max_tokens, seed=args.seed, compare=args.compare, resume=args.resume,
                          offset=args.offset)
    print(report(records, cases))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
