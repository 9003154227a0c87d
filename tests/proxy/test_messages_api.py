"""The Anthropic Messages API served by the proxy, driven by the real anthropic client.

Three backends behind it, all scripted model servers that record what they receive:
one that ignores ``tools`` (``tool_prompt = "hermes"``), the same with ``system_messages = "fold"``
(a chat template that takes one leading system message only), and one that takes OpenAI
tools natively (the request is translated; the model still writes markup, which is parsed).
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import anthropic
import httpx
import pytest

from streamparse.proxy.config import Backend, ProxyConfig
from streamparse.prompting.requests import ToolChoice, instructions, render_tool_result
from streamparse.dialects.render import render
from streamparse.proxy.runner import ServerThread
from streamparse.proxy.app import create_app

from upstreams import FaultLog, RecordingModel, faulty_upstream

WEATHER = {"name": "get_weather", "description": "Current weather for a city",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
CLOCK = {"name": "get_time", "description": "Local time in a timezone",
         "input_schema": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]}}
TOOLS = [WEATHER, CLOCK]
OPENAI_TOOLS = [{"type": "function", "function": {"name": t["name"], "parameters": t["input_schema"],
                                                  "description": t["description"]}} for t in TOOLS]
CALL = render("hermes", "get_weather", {"city": "Paris"})
ASK = [{"role": "user", "content": "Weather in Paris?"}]


@pytest.fixture(scope="module")
def model() -> Iterator[RecordingModel]:
    yield RecordingModel()


@pytest.fixture(scope="module")
def proxies(model: RecordingModel) -> Iterator[dict[str, ServerThread]]:
    with ServerThread(model.app()) as up:
        prompted = ProxyConfig.single(up.url + "/v1", {"tool_prompt": "hermes"})
        native = ProxyConfig(backends=[Backend(name="native", upstream=up.url + "/v1", default=True,
                                               model_map={"claude-local": "qwen-upstream"})])
        folded = ProxyConfig.single(up.url + "/v1", {"tool_prompt": "hermes", "system_messages": "fold"})
        with ServerThread(create_app(prompted)) as p1, ServerThread(create_app(native)) as p2, \
                ServerThread(create_app(folded)) as p3:
            yield {"prompted": p1, "native": p2, "folded": p3}


def client(server: ServerThread) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url, api_key="sk-ant-test", max_retries=0, timeout=30)


def sse_types(server: ServerThread, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The raw stream: (event name, data) in order; checks each event's name equals its data's type."""
    out = []
    with httpx.Client(timeout=30) as http, http.stream("POST", server.url + "/v1/messages", json=body,
                                                     headers={"x-api-key": "k", "anthropic-version": "2023-06-01"}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in r.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
                assert data["type"] == name
                out.append((name, data))
    return out


@pytest.mark.parametrize("stream", [False, True])
def test_tool_use_from_a_tool_less_backend(proxies: dict[str, ServerThread], model: RecordingModel,
                                           stream: bool) -> None:
    model.reset("Let me check.\n" + CALL)
    kw: dict[str, Any] = dict(model="m", max_tokens=256, system="You are terse.", messages=ASK, tools=TOOLS)
    if stream:
        with client(proxies["prompted"]).messages.stream(**kw) as s:
            message = s.get_final_message()
    else:
        message = client(proxies["prompted"]).messages.create(**kw)
    assert message.role == "assistant" and message.model == "m" and message.id.startswith("msg_")
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[0].text.strip() == "Let me check."
    use = message.content[1]
    assert use.id.startswith("toolu_") and use.name == "get_weather" and use.input == {"city": "Paris"}
    assert message.stop_reason == "tool_use" and message.stop_sequence is None
    assert message.usage.input_tokens == (10 if stream else 11) and message.usage.output_tokens > 0
    (body,) = model.requests
    assert "tools" not in body and "tool_choice" not in body and body["max_tokens"] == 256
    assert body["messages"] == [
        {"role": "system", "content": "You are terse.\n\n" + instructions(OPENAI_TOOLS, "hermes", ToolChoice("auto"))},
        {"role": "user", "content": "Weather in Paris?"}]
    assert body.get("stream", False) is stream


def test_stream_events_come_in_anthropics_order(proxies: dict[str, ServerThread], model: RecordingModel) -> None:
    model.reset("<think>Paris, so weather.</think>Checking.\n" + CALL)
    events = sse_types(proxies["prompted"], {"model": "m", "max_tokens": 64, "messages": ASK, "tools": TOOLS,
                                             "stream": True})
    names = [n for n, _ in events]
    assert names[:2] == ["message_start", "ping"] and names[-2:] == ["message_delta", "message_stop"]
    blocks: list[tuple[str, list[str]]] = []  # (block type, delta types) in order
    open_index = None
    for name, data in events[2:-2]:
        if name == "content_block_start":
            assert open_index is None and data["index"] == len(blocks)
            open_index = data["index"]
            blocks.append((data["content_block"]["type"], []))
        elif name == "content_block_delta":
            assert data["index"] == open_index
            blocks[-1][1].append(data["delta"]["type"])
        elif name == "content_block_stop":
            assert data["index"] == open_index
            open_index = None
        else:
            assert name == "ping"
    assert open_index is None
    assert [b for b, _ in blocks] == ["thinking", "text", "tool_use"]
    assert set(blocks[0][1]) == {"thinking_delta"} and set(blocks[1][1]) == {"text_delta"}
    assert set(blocks[2][1]) == {"input_json_delta"}
    start = events[0][1]["message"]
    assert start["content"] == [] and start["stop_reason"] is None and start["role"] == "assistant"
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert model.requests[0]["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("stream", [False, True])
def test_two_turns_with_the_anthropic_client(proxies: dict[str, ServerThread], model: RecordingModel,
                                             stream: bool) -> None:
    model.reset(CALL, "Sunny, 21 °C.")
    ac = client(proxies["prompted"])

    def ask(messages: list[dict[str, Any]]) -> anthropic.types.Message:
        kw: dict[str, Any] = dict(model="m", max_tokens=128, messages=messages, tools=TOOLS)
        if stream:
            with ac.messages.stream(**kw) as s:
                return s.get_final_message()
        return ac.messages.create(**kw)

    first = ask(ASK)
    (use,) = [b for b in first.content if b.type == "tool_use"]
    history = ASK + [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "sunny, 21 C"}]}]
    final = ask(history)
    assert [b.type for b in final.content] == ["text"] and final.content[0].text == "Sunny, 21 °C."
    assert final.stop_reason == "end_turn"
    sent = model.requests[1]["messages"]
    assert "tools" not in model.requests[1]
    assert sent[0]["role"] == "system" and "get_weather" in sent[0]["content"]
    assert sent[1:] == [{"role": "user", "content": "Weather in Paris?"},
                        {"role": "assistant", "content": render("hermes", "get_weather", {"city": "Paris"})},
                        {"role": "user", "content": render_tool_result(use.id, "get_weather", "sunny, 21 C")}]


@pytest.mark.parametrize("choice, mode, shown", [
    ({"type": "auto"}, ToolChoice("auto"), True),
    ({"type": "any"}, ToolChoice("required"), True),
    ({"type": "tool", "name": "get_weather"}, ToolChoice("named", "get_weather"), True),  # the call it makes
    ({"type": "auto", "disable_parallel_tool_use": True}, ToolChoice("auto", parallel=False), True),
    ({"type": "none"}, ToolChoice("none"), False),
])
def test_every_tool_choice_through_tool_prompt(proxies: dict[str, ServerThread], model: RecordingModel,
                                               choice: dict[str, Any], mode: ToolChoice, shown: bool) -> None:
    model.reset(CALL)
    message = client(proxies["prompted"]).messages.create(model="m", max_tokens=64, messages=ASK, tools=TOOLS,
                                                          tool_choice=choice)  # type: ignore[arg-type]
    system = model.requests[0]["messages"][0]
    if shown:
        assert system == {"role": "system", "content": instructions(OPENAI_TOOLS, "hermes", mode)}
        assert [b.type for b in message.content] == ["tool_use"] and message.stop_reason == "tool_use"
    else:  # no instructions, nothing parsed: the markup is the answer's text
        assert system["role"] == "user"
        assert [b.type for b in message.content] == ["text"] and message.content[0].text == CALL
        assert message.stop_reason == "end_turn"


@pytest.mark.parametrize("choice, expected", [
    ({"type": "auto"}, "auto"),
    ({"type": "any"}, "required"),
    ({"type": "tool", "name": "get_weather"}, {"type": "function", "function": {"name": "get_weather"}}),
    ({"type": "none"}, "none"),
])
def test_every_tool_choice_to_a_native_backend(proxies: dict[str, ServerThread], model: RecordingModel,
                                               choice: dict[str, Any], expected: Any) -> None:
    model.reset(CALL)
    message = client(proxies["native"]).messages.create(model="claude-local", max_tokens=64, messages=ASK, tools=TOOLS,
                                                        tool_choice=choice)  # type: ignore[arg-type]
    body = model.requests[0]
    assert body["model"] == "qwen-upstream" and body["tools"] == OPENAI_TOOLS and body["tool_choice"] == expected
    assert message.model == "claude-local"
    kinds = [b.type for b in message.content]
    assert kinds == (["text"] if expected == "none" else ["tool_use"])


def test_request_fields_are_translated(proxies: dict[str, ServerThread], model: RecordingModel) -> None:
    model.reset(("<think>hmm</think>A short answer", "length"))
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    message = client(proxies["native"]).messages.create(
        model="claude-local", max_tokens=5, system=[{"type": "text", "text": "Be brief."}],
        messages=[{"role": "user", "content": [{"type": "text", "text": "What is this?"}, image]}],
        stop_sequences=["\n\n"], metadata={"user_id": "u-1"}, thinking={"type": "enabled", "budget_tokens": 1024},
        extra_body={"temperature": 0.2, "top_p": 0.9})  # this SDK release no longer has them as arguments
    body = model.requests[0]
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]
    assert (body["max_tokens"], body["stop"], body["temperature"], body["top_p"], body["user"]) == (
        5, ["\n\n"], 0.2, 0.9, "u-1")
    assert body["chat_template_kwargs"] == {"enable_thinking": True}
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[0].thinking == "hmm" and message.content[1].text == "A short answer"
    assert message.stop_reason == "max_tokens"


def test_client_key_and_headers(proxies: dict[str, ServerThread], model: RecordingModel) -> None:
    model.reset("hi")
    client(proxies["native"]).messages.create(model="m", max_tokens=8, messages=ASK)
    headers = model.headers[0]
    assert headers["authorization"] == "Bearer sk-ant-test"
    assert "x-api-key" not in headers and not any(k.startswith("anthropic-") for k in headers)


def test_bad_requests_get_anthropic_errors(proxies: dict[str, ServerThread], model: RecordingModel) -> None:
    model.reset("unused")
    ac = client(proxies["native"])
    with pytest.raises(anthropic.BadRequestError) as info:  # max_tokens is required (the SDK checks it too)
        ac.post("/v1/messages", cast_to=object, body={"model": "m", "messages": ASK})
    assert info.value.status_code == 400
    assert info.value.body == {"type": "error", "error": {"type": "invalid_request_error",
                                                          "message": "max_tokens: a positive integer is required"}}
    with pytest.raises(anthropic.BadRequestError, match="role"):
        ac.messages.create(model="m", max_tokens=8, messages=[{"role": "robot", "content": "x"}])  # type: ignore[list-item]
    with pytest.raises(anthropic.BadRequestError, match="tool_choice"):
        ac.messages.create(model="m", max_tokens=8, messages=ASK, tools=TOOLS,
                           tool_choice={"type": "tool", "name": "nope"})
    with httpx.Client(timeout=30) as http:
        resp = http.post(proxies["native"].url + "/v1/messages", content=b"{not json")
    assert resp.status_code == 400 and resp.json()["type"] == "error"
    assert model.requests == []  # none of these reached the backend


def test_upstream_failures_keep_their_status_in_anthropic_shape() -> None:
    log = FaultLog()
    with ServerThread(faulty_upstream(log)) as up, \
            ServerThread(create_app(ProxyConfig.single(up.url + "/v1"))) as px:
        ac = client(px)
        with pytest.raises(anthropic.InternalServerError) as info:
            ac.messages.create(model="status500", max_tokens=8, messages=ASK)
        assert info.value.status_code == 500 and info.value.body["type"] == "error"
        assert info.value.body["error"]["type"] == "api_error"
        with ac.messages.stream(model="broken", max_tokens=8, messages=ASK) as s:
            with pytest.raises(anthropic.APIStatusError):
                s.get_final_message()


def test_count_tokens_is_an_estimate(proxies: dict[str, ServerThread], model: RecordingModel) -> None:
    model.reset("unused")
    ac = client(proxies["prompted"])
    small = ac.messages.count_tokens(model="m", messages=ASK)
    with_tools = ac.messages.count_tokens(model="m", messages=ASK, tools=TOOLS)
    assert 0 < small.input_tokens < with_tools.input_tokens
    with httpx.Client(timeout=30) as http:
        resp = http.post(proxies["prompted"].url + "/v1/messages/count_tokens", json={"model": "m", "messages": ASK})
    assert resp.headers["x-streamparse-estimate"].startswith("characters/4")
    assert model.requests == []


def test_claude_code_style_request(proxies: dict[str, ServerThread], model: RecordingModel) -> None:
    """Claude Code posts to ``/v1/messages?beta=true`` with a bearer token, beta headers, cache_control marks
    and system blocks; it gets an ordinary answer."""
    model.reset("Done.")
    body = {"model": "m", "max_tokens": 32, "stream": True,
            "system": [{"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}],
            "tools": [{**WEATHER, "cache_control": {"type": "ephemeral"}}]}
    headers = {"authorization": "Bearer local", "anthropic-version": "2023-06-01",
               "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14"}
    with httpx.Client(timeout=30) as http:
        resp = http.post(proxies["prompted"].url + "/v1/messages?beta=true", json=body, headers=headers)
    assert resp.status_code == 200 and resp.text.rstrip().endswith('data: {"type":"message_stop"}')
    deltas = [json.loads(line[6:])["delta"] for line in resp.text.splitlines() if '"content_block_delta"' in line]
    assert "".join(d["text"] for d in deltas) == "Done."
    sent = model.requests[0]
    assert sent["messages"][0]["content"].startswith("You are Claude Code.\n\nYou can call the tools listed below.")
    assert model.headers[0]["authorization"] == "Bearer local" and "anthropic-beta" not in model.headers[0]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("backend", ["native", "prompted"])
def test_reasoning_is_a_thinking_block_even_when_no_call_is_parsed(proxies: dict[str, ServerThread],
                                                                    model: RecordingModel, backend: str,
                                                                    stream: bool) -> None:
    """tool_choice none: the answer is not parsed for calls (the markup stays text), but its reasoning is
    still a thinking block, as it is for a request with no tools at all."""
    model.reset("<think>Paris is in France.</think>It is sunny.\n" + CALL)
    kw: dict[str, Any] = dict(model="m", max_tokens=256, messages=ASK, tools=TOOLS, tool_choice={"type": "none"})
    if stream:
        with client(proxies[backend]).messages.stream(**kw) as s:
            message = s.get_final_message()
    else:
        message = client(proxies[backend]).messages.create(**kw)
    kinds = [block.type for block in message.content]
    assert kinds == ["thinking", "text"], kinds
    assert message.content[0].thinking == "Paris is in France."
    assert "<tool_call>" in message.content[1].text and message.stop_reason == "end_turn"


# --------------------------------------------------------------------------- what current Claude Code sends

MID = {"role": "system", "content": "Available agents: none."}  # Claude Code sends such a message after the first


def ask_with_a_system_message(ac: anthropic.Anthropic, stream: bool, **kw: Any) -> anthropic.types.Message:
    """A ``system``-role message inside ``messages``, as the SDK types it (``SystemMessageParam``)."""
    args: dict[str, Any] = dict(model="m", max_tokens=64, system="Lead.", messages=[*ASK, MID], **kw)
    if stream:
        with ac.messages.stream(**args) as s:
            return s.get_final_message()
    return ac.messages.create(**args)


@pytest.mark.parametrize("stream", [False, True])
def test_a_system_message_inside_messages_is_sent_in_its_place(proxies: dict[str, ServerThread],
                                                                model: RecordingModel, stream: bool) -> None:
    model.reset(CALL)
    message = ask_with_a_system_message(client(proxies["native"]), stream, tools=TOOLS)
    assert [b.type for b in message.content] == ["tool_use"] and message.stop_reason == "tool_use"
    assert model.requests[0]["messages"] == [{"role": "system", "content": "Lead."}, *ASK, MID]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("backend", ["prompted", "folded"])
def test_system_messages_with_tool_prompt_inline_and_folded(proxies: dict[str, ServerThread], model: RecordingModel,
                                                            backend: str, stream: bool) -> None:
    model.reset(CALL)
    message = ask_with_a_system_message(client(proxies[backend]), stream, tools=TOOLS)
    assert [b.type for b in message.content] == ["tool_use"] and message.content[0].input == {"city": "Paris"}
    prompt = instructions(OPENAI_TOOLS, "hermes", ToolChoice("auto"))
    if backend == "prompted":  # inline: the instructions join the leading message, the other stays in place
        assert model.requests[0]["messages"] == [{"role": "system", "content": "Lead.\n\n" + prompt}, *ASK, MID]
    else:  # fold: one leading system message, the client's text in order, then the instructions
        assert model.requests[0]["messages"] == [
            {"role": "system", "content": "Lead.\n\n" + MID["content"] + "\n\n" + prompt}, *ASK]


def test_the_beta_client_and_its_query_string(proxies: dict[str, ServerThread], model: RecordingModel) -> None:
    """``client.beta.messages`` posts to ``/v1/messages?beta=true`` (and ``/count_tokens?beta=true``) with an
    ``anthropic-beta`` header, as Claude Code does; the beta system message type goes through."""
    model.reset("Done.")
    beta = client(proxies["native"]).beta.messages
    message = beta.create(model="m", max_tokens=16, messages=[*ASK, {**MID, "clear_at": "never"}],
                          betas=["context-management-2025-06-27", "mid-conversation-system-2026-04-07"],
                          context_management={"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
                          thinking={"type": "adaptive"})
    assert [b.type for b in message.content] == ["text"] and message.content[0].text == "Done."  # type: ignore[union-attr]
    sent = model.requests[0]
    assert sent["messages"] == [*ASK, MID] and sent["chat_template_kwargs"] == {"enable_thinking": True}
    assert "context_management" not in sent and not any(k.startswith("anthropic-") for k in model.headers[0])
    counted = beta.count_tokens(model="m", messages=[*ASK, MID], betas=["context-management-2025-06-27"])
    assert counted.input_tokens > 0 and len(model.requests) == 1


def test_claude_codes_title_request(proxies: dict[str, ServerThread], model: RecordingModel) -> None:
    """Claude Code's title request asks for JSON by ``output_config.format``: the backend is asked for it too."""
    model.reset('{"title": "Weather in Paris"}')
    schema = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"],
              "additionalProperties": False}
    with httpx.Client(timeout=30) as http:
        resp = http.post(proxies["prompted"].url + "/v1/messages?beta=true", json={
            "model": "m", "max_tokens": 32, "messages": ASK, "tools": [], "thinking": {"type": "disabled"},
            "system": [{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.197.363;"},
                       {"type": "text", "text": "Write a title."}],
            "output_config": {"effort": "high", "format": {"type": "json_schema", "schema": schema}}},
            headers={"x-api-key": "k", "anthropic-beta": "structured-outputs-2025-12-15"})
    assert resp.status_code == 200 and resp.json()["content"] == [{"type": "text", "text": '{"title": "Weather in Paris"}'}]
    sent = model.requests[0]
    assert sent["response_format"] == {"type": "json_schema",
                                       "json_schema": {"name": "output", "schema": schema, "strict": True}}
    assert sent["messages"] == [{"role": "system", "content": "Write a title."}, *ASK]  # no billing line


@pytest.mark.parametrize("body, param", [
    ({"messages": [*ASK, {"role": "system", "content": [{"type": "image", "source": {}}]}]}, "messages[1].content[0]"),
    ({"messages": ASK, "thread": {"type": "continue", "previous_message_id": "msg_1"}}, "thread"),
    ({"messages": [{"role": "user", "content": [{"type": "document", "source": {"type": "url", "url": "u"}}]}]},
     "messages[0].content[0].source"),
])
def test_what_would_change_the_answer_is_a_400_naming_the_field(proxies: dict[str, ServerThread],
                                                                model: RecordingModel, body: dict[str, Any],
                                                                param: str) -> None:
    model.reset("unused")
    with httpx.Client(timeout=30) as http:
        resp = http.post(proxies["native"].url + "/v1/messages?beta=true", json={"model": "m", "max_tokens": 8, **body})
    assert resp.status_code == 400 and resp.json()["error"]["type"] == "invalid_request_error"
    assert param in resp.json()["error"]["message"] and model.requests == []


# --------------------------------------------------------------------------- deferred tools (Claude Code's tool search)

PLACEHOLDER = {"name": "DeferredToolPlaceholder", "description": "Placeholder for deferred tools. Never call it.",
               "input_schema": {"type": "object", "properties": {}}, "defer_loading": True}
PLACEHOLDER_CALL = render("hermes", "DeferredToolPlaceholder", {})


def test_a_deferred_tool_is_not_offered_and_the_header_says_so(proxies: dict[str, ServerThread],
                                                                model: RecordingModel) -> None:
    """Claude Code 2.1.332 with tool search on sends ``DeferredToolPlaceholder`` (``defer_loading: true``) ahead
    of its tools: the backend never sees it, and the model calling it by name gets text, not a ``tool_use``."""
    model.reset(PLACEHOLDER_CALL)
    raw = client(proxies["native"]).messages.with_raw_response.create(
        model="claude-local", max_tokens=64, messages=ASK, tools=[PLACEHOLDER, WEATHER])
    assert "DeferredToolPlaceholder" in raw.headers["x-streamparse-diagnostic"]
    message = raw.parse()
    assert model.requests[0]["tools"] == OPENAI_TOOLS[:1]
    assert [b.type for b in message.content] == ["text"] and message.stop_reason == "end_turn"
    assert "DeferredToolPlaceholder" in message.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("backend", ["native", "prompted"])
def test_a_deferred_tool_streamed_and_through_a_tool_prompt(proxies: dict[str, ServerThread], model: RecordingModel,
                                                            backend: str) -> None:
    """Streamed: the header and a comment before the first event name it; with a tool prompt it is not in the
    prompt either; a real tool's call still leaves as a ``tool_use``."""
    model.reset(PLACEHOLDER_CALL + "\n" + CALL)
    with httpx.Client(timeout=30) as http:
        resp = http.post(proxies[backend].url + "/v1/messages?beta=true", headers={"x-api-key": "k"}, json={
            "model": "m", "max_tokens": 64, "messages": ASK, "tools": [PLACEHOLDER, WEATHER], "stream": True})
    assert resp.status_code == 200 and "DeferredToolPlaceholder" in resp.headers["x-streamparse-diagnostic"]
    first = resp.text.split("\n\n")[0]
    assert first.startswith(":") and "DeferredToolPlaceholder" in first
    starts = [json.loads(line[6:])["content_block"] for line in resp.text.splitlines()
              if line.startswith("data: ") and '"content_block_start"' in line]
    assert [b.get("name") for b in starts if b["type"] == "tool_use"] == ["get_weather"]
    sent = model.requests[0]
    assert "DeferredToolPlaceholder" not in json.dumps(sent)
    if backend == "native":
        assert sent["tools"] == OPENAI_TOOLS[:1]
    else:
        assert "tools" not in sent and "get_weather" in sent["messages"][0]["content"]


def test_only_deferred_tools_send_none(proxies: dict[str, ServerThread], model: RecordingModel) -> None:
    model.reset("Hello.")
    message = client(proxies["native"]).messages.create(model="m", max_tokens=16, messages=ASK, tools=[PLACEHOLDER],
                                                        tool_choice={"type": "auto"})
    assert "tools" not in model.requests[0] and "tool_choice" not in model.requests[0]
    assert message.content[0].text == "Hello."  # type: ignore[union-attr]
