"""The OpenAI Responses API served by the proxy, driven by the real openai client.

Two backends behind it, both scripted model servers that record what they receive: one that ignores
``tools`` (``tool_prompt = "hermes"``) and one that takes OpenAI tools natively (the model still writes its
calls as text, Hermes or Qwen3-Coder XML, which the proxy parses).
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import httpx
import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ProxyConfig
from streamparse.proxy.runner import ServerThread

from budget import examples
from upstreams import HERMES, QWEN3, FaultLog, RecordingModel, faulty_upstream

WEATHER = {"type": "function", "name": "get_weather", "description": "Current weather for a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                          "required": ["city"]}}
PATCH = {"type": "custom", "name": "apply_patch", "description": "Apply a patch to the files."}
ASK = "Weather in Paris?"
PATCH_TEXT = "*** Begin Patch\n*** Add File: hello.txt\n+hello </tool_call> world\n*** End Patch"


@pytest.fixture(scope="module")
def model() -> Iterator[RecordingModel]:
    yield RecordingModel()


@pytest.fixture(scope="module")
def proxies(model: RecordingModel) -> Iterator[dict[str, ServerThread]]:
    with ServerThread(model.app()) as up:
        prompted = ProxyConfig.single(up.url + "/v1", {"tool_prompt": "hermes"})
        native = ProxyConfig(backends=[Backend(name="native", upstream=up.url + "/v1", default=True,
                                               dialects=["hermes", "qwen3_coder"])])
        with ServerThread(create_app(prompted)) as p1, ServerThread(create_app(native)) as p2:
            yield {"prompted": p1, "native": p2}


def client(server: ServerThread) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=0, timeout=30)


def gist(response: Any) -> list[tuple[str, Any]]:
    """Output items without ids: (type, text or (name, arguments))."""
    out: list[tuple[str, Any]] = []
    for item in response.output:
        if item.type == "message":
            out.append(("message", "".join(p.text for p in item.content)))
        elif item.type == "function_call":
            out.append(("function_call", (item.name, json.loads(item.arguments))))
        elif item.type == "custom_tool_call":
            out.append(("custom_tool_call", (item.name, item.input)))
        else:
            out.append((item.type, None))
    return out


def create(server: ServerThread, stream: bool, **kw: Any) -> Any:
    """``responses.create``, or ``responses.stream`` accumulated by the SDK."""
    if not stream:
        return client(server).responses.create(**kw)
    with client(server).responses.stream(**kw) as s:
        for _ in s:
            pass
        return s.get_final_response()


def sse(server: ServerThread, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The raw stream's events, checking each frame's ``event:`` name is its data's type."""
    out = []
    with httpx.Client(timeout=30) as http, http.stream("POST", server.url + "/v1/responses", json=body) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in r.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
                assert data["type"] == name
                out.append(data)
    return out


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("backend, answer, args", [
    ("prompted", "Let me look.\n" + HERMES + "\nDone.", {"city": "Paris"}),
    ("native", "Checking " + QWEN3 + " now.", {"city": "Oslo", "days": 2}),
])
def test_function_calls_from_text(proxies: dict[str, ServerThread], model: RecordingModel, stream: bool,
                                  backend: str, answer: str, args: dict[str, Any]) -> None:
    model.reset(answer)
    response = create(proxies[backend], stream, model="m", input=ASK, tools=[WEATHER], instructions="Be terse.")
    before, after = answer.split("<tool_call>")[0], answer.split("</tool_call>")[1]
    assert gist(response) == [("message", before), ("function_call", ("get_weather", args)), ("message", after)]
    assert response.status == "completed" and response.model == "m" and response.id.startswith("resp_")
    assert response.instructions == "Be terse." and response.tools[0].name == "get_weather"
    call = response.output[1]
    assert call.call_id and call.id.startswith("fc_") and call.status == "completed"
    assert response.usage is not None and response.usage.output_tokens > 0
    sent = model.requests[-1]
    assert sent["messages"][-1] == {"role": "user", "content": ASK}
    if backend == "native":
        assert sent["tools"] == [{"type": "function", "function": {
            "name": "get_weather", "description": WEATHER["description"], "parameters": WEATHER["parameters"]}}]
    else:  # the tools are in the prompt instead
        assert "tools" not in sent and "get_weather" in sent["messages"][0]["content"]


def test_stream_equals_whole_and_events_are_in_order(proxies: dict[str, ServerThread], model: RecordingModel) -> None:
    answer = "<think>Paris, then.</think>Let me look.\n" + HERMES + "\nDone."
    model.reset(answer)
    whole = client(proxies["native"]).responses.create(model="m", input=ASK, tools=[WEATHER])
    model.reset(answer)
    events = sse(proxies["native"], {"model": "m", "input": ASK, "tools": [WEATHER], "stream": True})
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    types = [e["type"] for e in events]
    assert types[:2] == ["response.created", "response.in_progress"] and types[-1] == "response.completed"
    streamed = openai.types.responses.Response.model_validate(events[-1]["response"])
    assert gist(streamed) == gist(whole) == [("reasoning", None), ("message", "Let me look.\n"),
                                             ("function_call", ("get_weather", {"city": "Paris"})),
                                             ("message", "\nDone.")]
    assert whole.output[0].content[0].text == "Paris, then."
    texts = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert "<tool_call>" not in texts and texts == "Let me look.\n\nDone."


@pytest.mark.parametrize("stream", [False, True])
def test_two_turn_tool_loop_with_the_whole_history(proxies: dict[str, ServerThread], model: RecordingModel,
                                                    stream: bool) -> None:
    model.reset(HERMES, "It is sunny in Paris.")
    first = create(proxies["prompted"], stream, model="m", input=ASK, tools=[WEATHER], store=False)
    call = first.output[0]
    history: list[Any] = [{"role": "user", "content": ASK}, call.model_dump(exclude_none=True),
                          {"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 24 C"}]
    second = create(proxies["prompted"], stream, model="m", input=history, tools=[WEATHER], store=False)
    assert second.output_text == "It is sunny in Paris."
    sent = model.requests[-1]["messages"]
    assert sent[-2]["role"] == "assistant" and '"get_weather"' in sent[-2]["content"]
    assert sent[-1]["role"] == "user" and "sunny, 24 C" in sent[-1]["content"] and call.call_id in sent[-1]["content"]


@pytest.mark.parametrize("stream", [False, True])
def test_previous_response_id_continues_the_stored_conversation(proxies: dict[str, ServerThread],
                                                                 model: RecordingModel, stream: bool) -> None:
    model.reset("Checking.\n" + HERMES, "Sunny.")
    first = create(proxies["native"], stream, model="m", input=ASK, tools=[WEATHER], instructions="Old rules.")
    call = first.output[1]
    second = create(proxies["native"], stream, model="m", previous_response_id=first.id, tools=[WEATHER],
                    input=[{"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}])
    assert second.output_text == "Sunny." and second.previous_response_id == first.id
    assert model.requests[-1]["messages"] == [
        {"role": "user", "content": ASK},
        {"role": "assistant", "content": "Checking.\n", "tool_calls": [{"id": call.call_id, "type": "function", "function": {
            "name": "get_weather", "arguments": call.arguments}}]},
        {"role": "tool", "tool_call_id": call.call_id, "content": "sunny"}]


def test_unknown_or_unstored_previous_response_is_a_clear_400(proxies: dict[str, ServerThread],
                                                                model: RecordingModel) -> None:
    model.reset("Hi.")
    unstored = client(proxies["native"]).responses.create(model="m", input="hi", store=False)
    for missing in ("resp_nope", unstored.id):
        with pytest.raises(openai.BadRequestError) as info:
            client(proxies["native"]).responses.create(model="m", input="again", previous_response_id=missing)
        assert info.value.body["param"] == "previous_response_id"  # type: ignore[index]
        assert "store: false" in info.value.message


@pytest.mark.parametrize("stream", [False, True])
def test_a_custom_tool_call_comes_back_as_custom_tool_call(proxies: dict[str, ServerThread], model: RecordingModel,
                                                           stream: bool) -> None:
    call = json.dumps({"name": "apply_patch", "arguments": {"input": PATCH_TEXT}})
    model.reset(f"<tool_call>{call}</tool_call>")
    response = create(proxies["native"], stream, model="m", input="Add hello.txt", tools=[PATCH])
    assert gist(response) == [("custom_tool_call", ("apply_patch", PATCH_TEXT))]  # the quoted closer is the value's
    assert model.requests[-1]["tools"][0]["function"]["parameters"]["required"] == ["input"]


def test_hosted_tools_are_left_out_and_said(proxies: dict[str, ServerThread], model: RecordingModel) -> None:
    model.reset("No search here.")
    raw = client(proxies["native"]).responses.with_raw_response.create(
        model="m", input="Search", tools=[WEATHER, {"type": "web_search"}])
    assert "web_search tool" in raw.headers["x-streamparse-diagnostic"]
    assert [t["function"]["name"] for t in model.requests[-1]["tools"]] == ["get_weather"]
    model.reset("No search here.")
    with httpx.Client(timeout=30) as http, http.stream("POST", proxies["native"].url + "/v1/responses", json={
            "model": "m", "input": "Search", "tools": [{"type": "web_search"}], "stream": True}) as r:
        body = r.read().decode()
    assert body.startswith(": tools[0]: a web_search tool") and "response.completed" in body
    with pytest.raises(openai.BadRequestError) as info:
        client(proxies["native"]).responses.create(model="m", input="Search", tools=[{"type": "web_search"}],
                                                   tool_choice={"type": "web_search_preview"})
    assert info.value.body["param"] == "tool_choice"  # type: ignore[index]


@pytest.mark.parametrize("stream", [False, True])
def test_cut_at_max_output_tokens_is_incomplete(proxies: dict[str, ServerThread], model: RecordingModel,
                                                stream: bool) -> None:
    model.reset(("A long answer that was", "length"))
    body = {"model": "m", "input": "Go on", "max_output_tokens": 5}
    if stream:  # as OpenAI does, the stream ends with response.incomplete (the SDK's stream() waits for completed)
        events = sse(proxies["native"], {**body, "stream": True})
        assert events[-1]["type"] == "response.incomplete"
        response = openai.types.responses.Response.model_validate(events[-1]["response"])
    else:
        response = client(proxies["native"]).responses.create(**body)  # type: ignore[arg-type]
    assert response.status == "incomplete" and response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output_text == "A long answer that was" and response.output[0].status == "incomplete"
    assert model.requests[-1]["max_tokens"] == 5


@pytest.mark.parametrize("body", [
    b"not json", b"[]", b'{"input": "x"}', b'{"model": "m"}', b'{"model": "m", "input": [{"type": "x"}]}',
    b'{"model": "m", "input": "x", "tools": "all"}', b'{"model": "m", "input": "x", "background": true}',
    b'{"model": "m", "input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]}',
])
def test_bad_requests_get_openai_errors_never_a_500(proxies: dict[str, ServerThread], body: bytes) -> None:
    r = httpx.post(proxies["native"].url + "/v1/responses", content=body, timeout=30,
                   headers={"content-type": "application/json"})
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["type"] == "invalid_request_error" and error["message"]


def test_an_upstream_failure_mid_stream_is_response_failed() -> None:
    log = FaultLog()
    with ServerThread(faulty_upstream(log)) as up, \
            ServerThread(create_app(ProxyConfig.single(up.url + "/v1"))) as proxy:
        events = sse(proxy, {"model": "broken", "input": "hi", "stream": True, "tools": [WEATHER]})
        assert events[-1]["type"] == "response.failed"
        assert events[-1]["response"]["status"] == "failed" and events[-1]["response"]["error"]["message"]
        with pytest.raises(openai.InternalServerError):
            client(proxy).responses.create(model="status500", input="hi", tools=[WEATHER])


def test_metrics_label_the_responses_front(proxies: dict[str, ServerThread], model: RecordingModel) -> None:
    model.reset("Hi.")
    client(proxies["native"]).responses.create(model="m", input="hi")
    page = httpx.get(proxies["native"].url + "/metrics", timeout=30).text
    assert 'route="/v1/responses"' in page and 'front="responses"' in page


def test_item_references_to_a_stored_answer(proxies: dict[str, ServerThread], model: RecordingModel) -> None:
    """The Vercel AI SDK's way: later steps name the earlier assistant items by id."""
    model.reset("Checking.\n" + HERMES, "Sunny.")
    first = client(proxies["native"]).responses.create(model="m", input=ASK, tools=[WEATHER])
    message, call = first.output
    second = client(proxies["native"]).responses.create(model="m", tools=[WEATHER], input=[
        {"role": "user", "content": ASK}, {"type": "item_reference", "id": message.id},
        {"type": "function_call", "call_id": call.call_id, "name": "get_weather", "arguments": call.arguments},
        {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}])
    assert second.output_text == "Sunny."
    assert model.requests[-1]["messages"][1]["content"] == "Checking.\n"
    with pytest.raises(openai.BadRequestError) as info:
        client(proxies["native"]).responses.create(model="m", input=[{"type": "item_reference", "id": "msg_gone"}])
    assert info.value.body["param"] == "input[0]"  # type: ignore[index]


def test_keepalive_is_an_event_for_the_responses_front(monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex's idle timer counts events, not comments: a silent upstream gets response.in_progress again, in
    sequence, and the stream still accumulates; the Anthropic front pings with its own ping event."""
    from streamparse.proxy import pipeline

    monkeypatch.setattr(pipeline, "SSE_PING_SECONDS", 0.05)
    log = FaultLog()
    with ServerThread(faulty_upstream(log)) as up, \
            ServerThread(create_app(ProxyConfig.single(up.url + "/v1"))) as proxy:
        events = sse(proxy, {"model": "slow", "input": "hi", "stream": True, "tools": [WEATHER]})
        assert [e["sequence_number"] for e in events] == list(range(len(events)))
        assert [e["type"] for e in events].count("response.in_progress") > 2
        assert events[-1]["type"] == "response.completed"
        assert events[-1]["response"]["output"][0]["content"][0]["text"].startswith("Hello <tool_ tick0")
        with httpx.Client(timeout=30) as http, http.stream("POST", proxy.url + "/v1/messages", json={
                "model": "slow", "max_tokens": 50, "stream": True, "messages": [{"role": "user", "content": "hi"}]},
                headers={"x-api-key": "k"}) as r:
            body = r.read().decode()
        assert body.count("event: ping") > 2 and body.rstrip().endswith('{"type":"message_stop"}')


def test_a_keepalive_never_overtakes_an_unsent_piece() -> None:
    from streamparse.proxy.fronts import TranslatingWire
    from streamparse.proxy.responses import ResponsesFront

    wire = ResponsesFront(model="m").wire()
    assert isinstance(wire, TranslatingWire)
    first = wire.frame()
    assert first.count(b"event: response.") == 2 and b"response.created" in first
    wire.sent()
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}]}
    assert wire.encode([("chunk", chunk)])
    assert wire.frame() == b""  # the piece is not sent yet: its numbers come first
    wire.sent()
    assert b"event: response.in_progress" in wire.frame()
    wire.sent()
    wire.encode([("done", None)])
    wire.sent()
    assert wire.frame() == b""  # ended: nothing more


def test_diagnostics_reach_a_responses_client_as_header_and_comments() -> None:
    unit = {"type": "function", "name": "set_unit", "parameters": {
        "type": "object", "properties": {"unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}}
    model = RecordingModel('<tool_call>{"name": "set_unit", "arguments": {"unit": "Celsius"}}</tool_call>')
    body = {"model": "m", "input": "go", "tools": [unit]}
    with ServerThread(model.app()) as up, ServerThread(create_app(ProxyConfig.single(up.url + "/v1"))) as px:
        raw = httpx.post(px.url + "/v1/responses", json=body, timeout=30)
        assert {n["code"] for n in json.loads(raw.headers["x-streamparse-diagnostics"])} == {"coerced"}
        assert json.loads(raw.json()["output"][0]["arguments"]) == {"unit": "celsius"}
        with httpx.stream("POST", px.url + "/v1/responses", json={**body, "stream": True}, timeout=30) as r:
            lines = list(r.iter_lines())
        assert any(line.startswith(": streamparse diagnostic ") and '"coerced"' in line for line in lines)


@pytest.mark.parametrize("stream", [False, True])
def test_a_demanded_tool_is_asked_again_or_said_missing(stream: bool) -> None:
    time_tool = {"type": "function", "name": "get_time", "parameters": {"type": "object"}}
    other = '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'
    model = RecordingModel(other, HERMES)
    with ServerThread(model.app()) as up, ServerThread(create_app(ProxyConfig.single(
            up.url + "/v1", {"tool_prompt": "hermes", "tool_prompt_retry": True}))) as px:
        response = client(px).responses.create(model="m", input=ASK, tools=[WEATHER, time_tool],
                                               tool_choice={"type": "function", "name": "get_weather"})
        assert gist(response) == [("function_call", ("get_weather", {"city": "Paris"}))] and len(model.requests) == 2
        model.reset(other)
        events = sse(px, {"model": "m", "input": ASK, "tools": [WEATHER, time_tool], "stream": True,
                          "tool_choice": "required"}) if stream else None
    if events is not None:
        assert [e["item"]["name"] for e in events if e["type"] == "response.output_item.done"] == ["get_time"]


def test_a_body_over_the_limit_is_413_in_openai_shape() -> None:
    with ServerThread(create_app(ProxyConfig.single("http://127.0.0.1:9/v1", max_body_bytes=1000))) as px:
        r = httpx.post(px.url + "/v1/responses", json={"model": "m", "input": "x" * 2000}, timeout=30)
    assert r.status_code == 413 and "limit" in r.json()["error"]["message"]


BODIES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=6),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                          st.sampled_from(["model", "input", "tools", "tool_choice", "type", "role", "content",
                                           "name", "call_id", "text", "format", "previous_response_id", "store",
                                           "reasoning", "instructions", "output", "arguments"]), inner, max_size=4),
                      max_leaves=16)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(["input", "tools", "tool_choice", "text", "previous_response_id", "store",
                                        "instructions", "reasoning", "max_output_tokens"]), BODIES, max_size=4))
def test_no_body_gets_a_500(proxies: dict[str, ServerThread], model: RecordingModel, body: dict[str, Any]) -> None:
    model.reset("Hi.")
    r = httpx.post(proxies["native"].url + "/v1/responses", json={"model": "m", **body}, timeout=30)
    assert r.status_code in (200, 400), r.text
    assert (r.json().get("error") is not None) == (r.status_code == 400)


def test_a_native_call_with_no_name_is_answered_not_stored() -> None:
    """An answer whose items cannot be read back as a conversation still reaches the client whole; only the
    store leaves it out (the review's 500 and cut stream)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, StreamingResponse
    from starlette.routing import Route

    call = {"id": "call_x", "type": "function", "function": {"name": "", "arguments": "{}"}}

    async def chat(request: Request) -> Any:
        body = json.loads(await request.body())
        if not body.get("stream"):
            return JSONResponse({"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                 "finish_reason": "tool_calls"}]})
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [
            {"index": 0, "delta": {"tool_calls": [{**call, "index": 0}]}, "finish_reason": "tool_calls"}]}
        return StreamingResponse(iter([f"data: {json.dumps(chunk)}\n\n", "data: [DONE]\n\n"]),
                                 media_type="text/event-stream")

    upstream = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
    with ServerThread(upstream) as up, ServerThread(create_app(ProxyConfig.single(up.url + "/v1"))) as px:
        whole = httpx.post(px.url + "/v1/responses", json={"model": "m", "input": "go", "tools": [WEATHER]}, timeout=30)
        assert whole.status_code == 200 and whole.json()["output"][0]["type"] == "function_call"
        events = sse(px, {"model": "m", "input": "go", "tools": [WEATHER], "stream": True})
        assert events[-1]["type"] == "response.completed"
        r = httpx.post(px.url + "/v1/responses", timeout=30,
                       json={"model": "m", "input": "again", "previous_response_id": whole.json()["id"]})
        assert r.status_code == 400 and r.json()["error"]["param"] == "previous_response_id"
