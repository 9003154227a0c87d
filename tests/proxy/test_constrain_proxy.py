"""``constrain`` in the proxy: the prompted dialect's decoding constraint reaches the upstream in its engine's
fields, ``auto`` finds the engine, and a constraint the upstream refuses never fails the request.

Real servers on 127.0.0.1: an engine double (a scripted model that records every request, answers the
probes an engine answers, and can refuse constrained requests with a 400) behind the proxy, driven by the
real openai and anthropic clients.
"""

from __future__ import annotations

import io
import json
import threading
from typing import Any

import anthropic
import anyio
import httpx
import pytest
from openai import OpenAI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from streamparse.cli import main
from streamparse.constraints import build_constraint
from streamparse.dialects.render import render
from streamparse.harness.replay import completion_chunks, sse_frames
from streamparse.prompting.requests import ToolChoice
from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ConfigError, ProxyConfig, load_config
from streamparse.proxy.engines import Engines, engine_from, server_root
from streamparse.proxy.pipeline import CONSTRAINT_HEADER
from streamparse.proxy.plan import client_constraint, plan_chat
from streamparse.proxy.runner import ServerThread

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                                                    "unit": {"type": "string", "enum": ["C", "F"]}},
                   "required": ["city"]}}}
CLOCK = {"type": "function", "function": {
    "name": "get_time", "description": "Local time in a timezone",
    "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]}}}
TOOLS = [WEATHER, CLOCK]
ANTHROPIC_TOOLS = [{"name": t["function"]["name"], "description": t["function"]["description"],
                    "input_schema": t["function"]["parameters"]} for t in TOOLS]
CALL = render("hermes", "get_weather", {"city": "Paris"})
ASK = [{"role": "user", "content": "Weather in Paris?"}]
CONSTRAINT_FIELDS = {"grammar", "grammar_lazy", "grammar_triggers", "preserved_tokens", "response_format", "ebnf",
                     "structured_outputs"}
FORMS = {"llamacpp": "gbnf", "vllm": "structural_tag", "sglang": "legacy_structural_tag"}  # hermes, few tools
OWNERS = {"vllm": "vllm", "sglang": "sglang"}  # /v1/models owned_by; everything else says "organization-owner"


class EngineDouble:
    """A scripted model server posing as ``kind`` (llamacpp: /props; vllm, sglang: /v1/models owned_by;
    sglang_info: /get_server_info; plain: none of them). ``refuse``: a 400 to any constrained request."""

    def __init__(self, kind: str = "plain", *, refuse: bool = False, answer: str = "Let me check.\n" + CALL):
        self.kind, self.refuse, self.answer = kind, refuse, answer
        self.lock = threading.Lock()
        self.bodies: list[dict[str, Any]] = []
        self.probes: list[str] = []

    def app(self) -> Starlette:
        async def chat(request: Request) -> Response:
            body = json.loads(await request.body())
            with self.lock:
                self.bodies.append(body)
            if self.refuse and CONSTRAINT_FIELDS & set(body):
                return JSONResponse({"error": {"message": "failed to parse grammar", "type": "invalid_request_error"}},
                                    status_code=400)
            if not body.get("stream"):
                return JSONResponse({"id": "c1", "object": "chat.completion", "created": 1, "model": "m", "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": self.answer}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}})
            frames = sse_frames(completion_chunks([self.answer], "m"))
            return StreamingResponse(frames, media_type="text/event-stream")

        def probe(name: str, kinds: tuple[str, ...], body: Any) -> Any:
            async def answer(request: Request) -> Response:
                with self.lock:
                    self.probes.append(name)
                return JSONResponse(body) if self.kind in kinds else JSONResponse({"detail": "Not Found"}, 404)
            return answer

        models = {"object": "list", "data": [{"id": "m", "object": "model",
                                              "owned_by": OWNERS.get(self.kind, "organization-owner")}]}
        return Starlette(routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/props", probe("props", ("llamacpp",), {"default_generation_settings": {"n_ctx": 4096},
                                                            "total_slots": 1}), methods=["GET"]),
            Route("/v1/models", probe("models", ("vllm", "sglang", "sglang_info", "plain", "llamacpp"), models),
                  methods=["GET"]),
            Route("/get_server_info", probe("get_server_info", ("sglang_info",), {"model_path": "/m", "tp_size": 1}),
                  methods=["GET"]),
        ])


@pytest.fixture
def double() -> EngineDouble:
    return EngineDouble()


def proxy(up: ServerThread, **backend: Any) -> ServerThread:
    # (chat_template off: these tests count the upstream's requests, and the template lookup would be one more)
    return ServerThread(create_app(ProxyConfig.single(up.url + "/v1", {"tool_prompt": "hermes", "chat_template": "off",
                                                                       **backend})))


def openai_client(server: ServerThread) -> OpenAI:
    return OpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=0, timeout=30)


def ask_openai(server: ServerThread, stream: bool, **kw: Any) -> tuple[httpx.Headers, list[tuple[str, str]]]:
    """The response headers and the calls (name, arguments) the openai client got."""
    args = {"tools": TOOLS, **kw}
    if args["tools"] is None:
        del args["tools"]
    raw = openai_client(server).chat.completions.with_raw_response.create(
        model="m", messages=ASK, stream=stream, **args)
    parsed = raw.parse()
    calls: list[tuple[str, str]] = []
    if stream:
        pieces: dict[int, list[str]] = {}
        for chunk in parsed:
            for tc in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
                got = pieces.setdefault(tc.index, ["", ""])
                got[0] += tc.function.name or ""
                got[1] += tc.function.arguments or ""
        calls = [(n, a) for n, a in pieces.values()]
    else:
        calls = [(c.function.name, c.function.arguments) for c in parsed.choices[0].message.tool_calls or []]
    return raw.headers, calls


def expected(kind: Any, choice: ToolChoice = ToolChoice(), tools: list[Any] = TOOLS) -> dict[str, Any]:
    made = build_constraint("hermes", tools, tool_choice=choice, parallel_tool_calls=choice.parallel, backend=kind)
    assert made is not None
    return made.request_fields()


# ----------------------------------------------------------------------------- the constraint reaches the upstream

@pytest.mark.parametrize("kind", ["llamacpp", "vllm", "sglang"])
@pytest.mark.parametrize("stream", [False, True])
def test_each_engine_receives_its_constraint(double: EngineDouble, kind: str, stream: bool) -> None:
    with ServerThread(double.app()) as up, proxy(up, constrain=kind) as p:
        headers, calls = ask_openai(p, stream)
    assert calls == [("get_weather", '{"city": "Paris"}')]
    assert headers[CONSTRAINT_HEADER] == f"{kind} {FORMS[kind]} (hermes)"
    (body,) = double.bodies
    fields = expected(kind)
    assert {k: body.get(k) for k in fields} == fields
    assert not {"tools", "tool_choice"} & set(body)  # llama.cpp refuses tools with a grammar; tool_prompt sends none
    if kind == "llamacpp":  # the non-lazy grammar: /v1/chat/completions replaces the lazy fields with its own
        assert not {"grammar_lazy", "grammar_triggers"} & set(body) and "get_weather" in body["grammar"]
    assert double.probes == []  # a named engine is never probed


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_front_is_constrained_too(double: EngineDouble, stream: bool) -> None:
    with ServerThread(double.app()) as up, proxy(up, constrain="llamacpp") as p:
        client = anthropic.Anthropic(base_url=p.url, api_key="sk-test", max_retries=0, timeout=30)
        raw = client.messages.with_raw_response.create(model="m", max_tokens=100, messages=ASK,  # type: ignore[call-overload]
                                                       tools=ANTHROPIC_TOOLS, tool_choice={"type": "any"}, stream=stream)
        parsed = raw.parse()
        if stream:
            names = [e.content_block.name for e in parsed if e.type == "content_block_start"
                     and e.content_block.type == "tool_use"]
        else:
            names = [b.name for b in parsed.content if b.type == "tool_use"]
    assert names == ["get_weather"] and raw.headers[CONSTRAINT_HEADER] == "llamacpp gbnf (hermes)"
    (body,) = double.bodies
    assert body["grammar"] == expected("llamacpp", ToolChoice("required"))["grammar"]  # any: at least one call
    assert body["grammar"] != expected("llamacpp")["grammar"]


def test_tool_choice_shapes_the_constraint(double: EngineDouble) -> None:
    with ServerThread(double.app()) as up, proxy(up, constrain="llamacpp") as p:
        ask_openai(p, False, tool_choice={"type": "function", "function": {"name": "get_time"}})
        ask_openai(p, False, parallel_tool_calls=False)
        ask_openai(p, False, tool_choice="required")
    named, single, required = (b["grammar"] for b in double.bodies)
    assert named == expected("llamacpp", ToolChoice("named", "get_time"))["grammar"]
    assert "get_time" in named and "get_weather" not in named
    assert single == expected("llamacpp", ToolChoice(parallel=False))["grammar"]
    assert required == expected("llamacpp", ToolChoice("required"))["grammar"]
    assert len({named, single, required, expected("llamacpp")["grammar"]}) == 4


@pytest.mark.parametrize("extra", [
    {"tool_choice": "none"},
    {"response_format": {"type": "json_object"}},
    {"extra_body": {"guided_json": {"type": "object"}}},
    {"extra_body": {"grammar": "root ::= \"yes\""}},
    {"tools": None},
], ids=["tool_choice_none", "response_format", "guided_json", "own_grammar", "no_tools"])
def test_no_constraint_where_it_would_clash_or_has_nothing_to_hold(double: EngineDouble, extra: dict[str, Any]) -> None:
    with ServerThread(double.app()) as up, proxy(up, constrain="vllm") as p:
        headers, _ = ask_openai(p, False, **extra)
    (body,) = double.bodies
    assert CONSTRAINT_HEADER not in headers
    sent = extra.get("extra_body", {})
    for key in ("response_format", "grammar", "ebnf", "guided_json"):  # the client's own fields, untouched
        if key in sent or key in extra:
            assert body[key] == {**extra, **sent}[key]
        else:
            assert key not in body


def test_constrain_off_sends_no_constraint(double: EngineDouble) -> None:
    with ServerThread(double.app()) as up, proxy(up) as p:
        headers, calls = ask_openai(p, True)
    assert calls == [("get_weather", '{"city": "Paris"}')] and CONSTRAINT_HEADER not in headers
    assert not CONSTRAINT_FIELDS & set(double.bodies[0]) and double.probes == []


# ----------------------------------------------------------------------------- auto


@pytest.mark.parametrize("kind, engine", [("llamacpp", "llamacpp"), ("vllm", "vllm"), ("sglang", "sglang"),
                                          ("sglang_info", "sglang"), ("plain", None)])
def test_auto_probes_once_and_remembers(kind: str, engine: str | None) -> None:
    double = EngineDouble(kind)
    with ServerThread(double.app()) as up, proxy(up, constrain="auto") as p:
        first, _ = ask_openai(p, False)
        probes = list(double.probes)
        second, calls = ask_openai(p, True)
    assert double.probes == probes  # asked once; the second request used what the first found
    assert calls == [("get_weather", '{"city": "Paris"}')]
    if engine is None:
        assert probes == ["props", "models", "get_server_info"]
        assert CONSTRAINT_HEADER not in first and CONSTRAINT_HEADER not in second
        assert not any(CONSTRAINT_FIELDS & set(b) for b in double.bodies)
    else:
        assert probes[0] == "props" and first[CONSTRAINT_HEADER] == second[CONSTRAINT_HEADER] == f"{engine} {FORMS[engine]} (hermes)"
        assert all({k: b.get(k) for k in expected(engine)} == expected(engine) for b in double.bodies)


def test_auto_asks_an_unreachable_upstream_again_later() -> None:
    with ServerThread(Starlette()) as gone:
        url = gone.url
    backend = Backend("b", url + "/v1", tool_prompt="hermes", constrain="auto", connect_timeout=1)

    async def twice() -> tuple[Any, Any, dict[str, Any]]:
        async with httpx.AsyncClient() as client:
            engines = Engines(client)
            return await engines.engine(backend), await engines.engine(backend), engines.found

    first, second, found = anyio.run(twice)
    assert first is None and second is None and found == {}  # not remembered as "no engine"


def test_probe_helpers() -> None:
    assert server_root("http://h:8000/v1") == "http://h:8000"
    assert server_root("https://h/llm/v1/") == "https://h/llm"
    assert server_root("http://h:8000") == "http://h:8000"
    assert engine_from("props", {"default_generation_settings": {}}) == "llamacpp"
    assert engine_from("props", {"detail": "x"}) is None
    assert engine_from("models", {"data": [{"id": "a", "owned_by": "vllm"}]}) == "vllm"
    assert engine_from("models", {"data": [{"owned_by": "vllm"}, {"owned_by": "sglang"}]}) is None  # ambiguous
    assert engine_from("models", {"data": [{"owned_by": "openai"}]}) is None
    assert engine_from("models", ["not", "a", "dict"]) is None
    assert engine_from("get_server_info", {"tp_size": 1}) == "sglang"


# ----------------------------------------------------------------------------- a refused constraint


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("kind", ["llamacpp", "vllm"])
def test_a_refused_constraint_is_dropped_and_said(kind: str, stream: bool, caplog: pytest.LogCaptureFixture) -> None:
    double = EngineDouble(refuse=True)
    with ServerThread(double.app()) as up, proxy(up, constrain=kind) as p:
        headers, calls = ask_openai(p, stream)
    assert calls == [("get_weather", '{"city": "Paris"}')]
    assert headers[CONSTRAINT_HEADER] == "dropped (400 from upstream)"
    constrained, plain = double.bodies
    assert CONSTRAINT_FIELDS & set(constrained) and not CONSTRAINT_FIELDS & set(plain)
    assert {k: v for k, v in constrained.items() if k not in CONSTRAINT_FIELDS} == plain  # otherwise the same request
    assert any("refused" in r.getMessage() and "failed to parse grammar" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_client_gets_the_answer_after_a_refusal(stream: bool) -> None:
    double = EngineDouble(refuse=True)
    with ServerThread(double.app()) as up, proxy(up, constrain="sglang") as p:
        client = anthropic.Anthropic(base_url=p.url, api_key="sk-test", max_retries=0, timeout=30)
        raw = client.messages.with_raw_response.create(model="m", max_tokens=100, messages=ASK,  # type: ignore[call-overload]
                                                       tools=ANTHROPIC_TOOLS, stream=stream)
        parsed = raw.parse()
        blocks = [e.content_block for e in parsed if e.type == "content_block_start"] if stream else parsed.content
    assert [b.name for b in blocks if b.type == "tool_use"] == ["get_weather"]
    assert raw.headers[CONSTRAINT_HEADER] == "dropped (400 from upstream)" and len(double.bodies) == 2


def test_a_400_to_the_plain_request_is_the_answer(double: EngineDouble) -> None:
    """Without a constraint a 400 is relayed as before (one request); a refused retry is relayed too."""
    class AlwaysRefuses(EngineDouble):
        def app(self) -> Starlette:
            async def chat(request: Request) -> Response:
                with self.lock:
                    self.bodies.append(json.loads(await request.body()))
                return JSONResponse({"error": {"message": "bad request", "type": "invalid_request_error"}}, 400)
            return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])

    for constrain, sent in (("off", 1), ("llamacpp", 2)):
        refusing = AlwaysRefuses()
        with ServerThread(refusing.app()) as up, proxy(up, constrain=constrain) as p:
            resp = httpx.post(p.url + "/v1/chat/completions", json={"model": "m", "messages": ASK, "tools": TOOLS})
        assert resp.status_code == 400 and resp.json()["error"]["message"] == "bad request"
        assert len(refusing.bodies) == sent
        assert resp.headers.get(CONSTRAINT_HEADER) == (None if constrain == "off" else "dropped (400 from upstream)")


def test_a_retry_after_a_refusal_goes_without_the_constraint() -> None:
    """tool_prompt_retry: the corrective request is built from the request that worked (no constraint)."""
    double = EngineDouble(refuse=True, answer="I think it is sunny.")
    with ServerThread(double.app()) as up, proxy(up, constrain="llamacpp", tool_prompt_retry=True) as p:
        resp = httpx.post(p.url + "/v1/chat/completions",
                          json={"model": "m", "messages": ASK, "tools": TOOLS, "tool_choice": "required"})
    assert resp.status_code == 200 and resp.headers[CONSTRAINT_HEADER] == "dropped (400 from upstream)"
    assert len(double.bodies) == 3 and [bool(CONSTRAINT_FIELDS & set(b)) for b in double.bodies] == [True, False, False]


# ----------------------------------------------------------------------------- plan, config and command line


def test_plan_keeps_the_unconstrained_request() -> None:
    backend = Backend("b", "http://h/v1", tool_prompt="hermes", constrain="llamacpp")
    payload = {"model": "m", "messages": ASK, "tools": TOOLS}
    plain = plan_chat(payload, backend).upstream
    plan = plan_chat(payload, backend, "llamacpp")
    assert plan.constraint is not None and plan.upstream == {**plain, **expected("llamacpp")}
    plan.drop_constraint()
    assert plan.upstream == plain and plan.constraint is None
    assert client_constraint({"guided_regex": "a+"}) == "guided_regex"
    assert client_constraint({"response_format": None, "temperature": 0}) is None


def test_config_refuses_constrain_it_cannot_honour(tmp_path: Any) -> None:
    def load(lines: str) -> Backend:
        path = tmp_path / "p.toml"
        path.write_text('[backends.a]\nupstream = "http://127.0.0.1:9/v1"\n' + lines, encoding="utf-8")
        return load_config(str(path)).backends[0]

    assert load('tool_prompt = "hermes"\nconstrain = "auto"\n').constrain == "auto"
    assert load('tool_prompt = "hermes"\n').constrain == "off"
    assert load('constrain = "off"\n').constrain == "off"
    with pytest.raises(ConfigError, match="constrain = 'llamacpp' needs tool_prompt"):
        load('constrain = "llamacpp"\n')
    with pytest.raises(ConfigError, match="did you mean 'llamacpp'"):
        load('tool_prompt = "hermes"\nconstrain = "llamacp"\n')
    with pytest.raises(ConfigError, match="must be one of"):
        load('tool_prompt = "hermes"\nconstrain = true\n')
    with pytest.raises(ConfigError, match="cannot constrain tool_prompt = 'glm45'"):
        load('tool_prompt = "glm45"\nconstrain = "vllm"\n')


def run_cli(*argv: str) -> tuple[int, str]:
    import contextlib

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            code = main(list(argv), out=io.StringIO())
        except SystemExit as exc:  # argparse's own refusals
            code = int(exc.code or 0)
    return code, err.getvalue()


def test_serve_constrain_option(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    up = ["serve", "--upstream", "http://127.0.0.1:9/v1"]
    code, err = run_cli(*up, "--constrain", "llamacpp")
    assert code == 2 and "--constrain goes with --tool-prompt" in err
    config = tmp_path / "p.toml"
    config.write_text('[backends.a]\nupstream = "http://127.0.0.1:9/v1"\n', encoding="utf-8")
    code, err = run_cli("serve", "--config", str(config), "--constrain", "auto")
    assert code == 2 and "in a config file set constrain per backend" in err
    code, err = run_cli(*up, "--tool-prompt", "hermes", "--constrain", "guess")
    assert code == 2 and "invalid choice" in err
    code, err = run_cli(*up, "--tool-prompt", "glm45", "--constrain", "vllm")
    assert code == 2 and "cannot constrain" in err

    seen: list[Any] = []
    import streamparse.cli.serve as serve

    def fake_serve(settings: Any, level: str, out: Any) -> int:  # everything checked, nothing bound
        seen.append(settings)
        return 0

    monkeypatch.setattr(serve, "_serve", fake_serve)
    assert run_cli(*up, "--tool-prompt", "hermes", "--constrain", "auto") == (0, "")
    assert run_cli(*up, "--tool-prompt-retry", "--constrain", "vllm") == (0, "")  # tool_prompt defaults to hermes
    assert [s["backend"]["constrain"] for s in seen] == ["auto", "vllm"]
    from streamparse.proxy.workers import config_from_settings

    assert config_from_settings(seen[0]).backends[0].constrain == "auto"
