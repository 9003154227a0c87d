"""``reasoning_start`` (issue 30, section 3): a chat template that opens ``<think>`` in the prompt makes the model
write its reasoning first with no opening tag (DeepSeek R1, Qwen3 thinking, GLM 4.5+, Kimi K3). The backend says so,
and each request's own ask (``chat_template_kwargs``, Anthropic ``thinking``, ``reasoning_effort`` /
``reasoning.effort``) decides under "auto" and "asked". Through the real proxy, on all three fronts, streamed and
not; the default ("closed") changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import anthropic
import pytest
from openai import OpenAI

from streamparse.harness.replay import create_replay_app
from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ConfigError, ProxyConfig, load_config
from streamparse.proxy.plan import opens_reasoning, plan_chat, thinking_asked
from streamparse.proxy.runner import ServerThread
from streamparse.proxy.workers import config_from_settings
from streamparse.wire.chunks import ChunkRewriter
from streamparse.wire.completion import rewrite_completion
from openai_reading import chat_read

WEATHER: dict[str, Any] = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
CLAUDE_WEATHER = {"name": "get_weather", "input_schema": WEATHER["function"]["parameters"]}
RESPONSES_WEATHER = {"type": "function", "name": "get_weather", "parameters": WEATHER["function"]["parameters"]}
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
THOUGHT = "Let me think... the user wants Paris. "
SCRIPTS = {
    "thinks": f"{THOUGHT}</think>\n\nThe answer {CALL}",  # the prompt opened <think>: no opening tag
    "plain": f"The answer {CALL}",  # thinking off: the template closed the reasoning itself
    "words": f"{THOUGHT}</think>\n\nParis is sunny.",
}
ASK = [{"role": "user", "content": "weather?"}]
MODES = ("open", "auto", "asked", "closed")


@pytest.fixture(scope="module")
def proxy() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """One proxy, one backend per mode (the request's model names it: "open/thinks" goes to the "open" backend
    and is answered with the "thinks" script); the upstream records what it was sent."""
    seen: list[dict[str, Any]] = []

    def script(body: dict[str, Any], _choice: int) -> str:
        seen.append(body)
        return SCRIPTS[str(body["model"]).split("/")[1]]

    with ServerThread(create_replay_app(script)) as up:
        backends = [Backend(name=mode, upstream=up.url + "/v1", reasoning_start=mode, default=mode == "closed",
                            models=[f"{mode}/{answer}" for answer in SCRIPTS]) for mode in MODES]
        with ServerThread(create_app(ProxyConfig(backends=backends))) as proxy:
            yield proxy.url, seen


def chat(base: str, model: str, stream: bool, tools: list[Any] | None = None,
         **extra: Any) -> tuple[str, list[tuple[str, Any]], str]:
    """(content, calls, reasoning_content) through the OpenAI front."""
    return chat_read(base, ASK, stream=stream, model=model, tools=tools, extra=extra)


def claude(base: str, model: str, stream: bool, **extra: Any) -> Any:
    client = anthropic.Anthropic(base_url=base, api_key="sk-ant-test", max_retries=0, timeout=30)
    request: dict[str, Any] = {"model": model, "max_tokens": 100, "messages": ASK, "tools": [CLAUDE_WEATHER], **extra}
    if not stream:
        return client.messages.create(**request)
    with client.messages.stream(**request) as events:
        return events.get_final_message()


def responses(base: str, model: str, stream: bool, **extra: Any) -> Any:
    client = OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0, timeout=30)
    request: dict[str, Any] = {"model": model, "input": "weather?", "tools": [RESPONSES_WEATHER], **extra}
    if not stream:
        return client.responses.create(**request)
    with client.responses.stream(**request) as events:
        for _ in events:
            pass
        return events.get_final_response()


# ---------------------------------------------------------------- the per-request rule, on its own

@pytest.mark.parametrize("payload, asked", [
    ({}, None),
    ({"chat_template_kwargs": {"enable_thinking": True}}, True),
    ({"chat_template_kwargs": {"enable_thinking": False}}, False),
    ({"chat_template_kwargs": {"thinking": True}}, True),  # DeepSeek V3.1+
    ({"chat_template_kwargs": {"enable_thinking": "no"}}, None),  # not a boolean: not read
    ({"reasoning_effort": "high"}, True),
    ({"reasoning_effort": "none"}, False),
    ({"reasoning_effort": "high", "chat_template_kwargs": {"enable_thinking": False}}, False),  # the template's wins
])
def test_what_the_request_asked(payload: dict[str, Any], asked: bool | None) -> None:
    assert thinking_asked(payload) is asked
    assert opens_reasoning(payload, "open") is True and opens_reasoning(payload, "closed") is False
    assert opens_reasoning(payload, "auto") is (asked is not False)
    assert opens_reasoning(payload, "asked") is (asked is True)


def test_the_plan_carries_the_decision_even_when_nothing_is_parsed() -> None:
    backend = Backend(name="b", upstream="http://127.0.0.1:9/v1", reasoning_start="open")
    plan = plan_chat({"model": "m", "messages": ASK}, backend)  # no tools: nothing to parse
    assert plan.options is None and not plan.relayable
    assert plan.rewriter_options({}) == {"request": None, "dialects": [], "start_in_reasoning": True}
    plan = plan_chat({"model": "m", "messages": ASK, "tools": [WEATHER]}, backend)
    assert plan.rewriter_options({})["start_in_reasoning"] is True
    assert plan.upstream == {"model": "m", "messages": ASK, "tools": [WEATHER]}  # nothing changes upstream
    default = Backend(name="b", upstream="http://127.0.0.1:9/v1")
    plan = plan_chat({"model": "m", "messages": ASK}, default)
    assert default.reasoning_start == "closed" and plan.relayable
    assert "start_in_reasoning" not in plan_chat({"messages": ASK, "tools": [WEATHER]}, default).rewriter_options({})


# ---------------------------------------------------------------- through the proxy

@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("mode", ["open", "auto"])
def test_openai_front_splits_reasoning_the_prompt_opened(proxy: tuple[str, list[Any]], mode: str,
                                                         stream: bool) -> None:
    content, calls, reasoning = chat(proxy[0], f"{mode}/thinks", stream, [WEATHER])
    assert reasoning == THOUGHT
    assert calls == [("get_weather", {"city": "Paris"})]
    assert content.strip() == "The answer" and "think" not in content


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_front_gives_a_thinking_block(proxy: tuple[str, list[Any]], stream: bool) -> None:
    message = claude(proxy[0], "auto/thinks", stream)
    assert [block.type for block in message.content] == ["thinking", "text", "tool_use"]
    assert message.content[0].thinking == THOUGHT
    assert message.content[1].text.strip() == "The answer"
    assert (message.content[2].name, message.content[2].input) == ("get_weather", {"city": "Paris"})
    assert message.stop_reason == "tool_use"


@pytest.mark.parametrize("stream", [False, True])
def test_responses_front_gives_a_reasoning_item(proxy: tuple[str, list[Any]], stream: bool) -> None:
    response = responses(proxy[0], "open/thinks", stream)
    kinds = [item.type for item in response.output]
    assert kinds == ["reasoning", "message", "function_call"]
    assert response.output[0].content[0].text == THOUGHT
    assert "".join(part.text for part in response.output[1].content).strip() == "The answer"
    call = response.output[2]
    assert (call.name, json.loads(call.arguments)) == ("get_weather", {"city": "Paris"})


@pytest.mark.parametrize("stream", [False, True])
def test_without_tools_the_reasoning_is_still_split(proxy: tuple[str, list[Any]], stream: bool) -> None:
    content, calls, reasoning = chat(proxy[0], "open/words", stream)
    assert (content.strip(), calls, reasoning) == ("Paris is sunny.", [], THOUGHT)


@pytest.mark.parametrize("stream", [False, True])
def test_a_request_that_turns_thinking_off_is_read_as_an_answer(proxy: tuple[str, list[Any]], stream: bool) -> None:
    base = proxy[0]
    off = {"chat_template_kwargs": {"enable_thinking": False}}
    for model, extra in (("auto/plain", off), ("asked/plain", {}), ("auto/plain", {"reasoning_effort": "none"})):
        content, calls, reasoning = chat(base, model, stream, [WEATHER], **extra)
        assert (content.strip(), calls, reasoning) == ("The answer", [("get_weather", {"city": "Paris"})], ""), model
    message = claude(base, "auto/plain", stream, thinking={"type": "disabled"})
    assert [block.type for block in message.content] == ["text", "tool_use"]
    response = responses(base, "auto/plain", stream, reasoning={"effort": "none"})
    assert [item.type for item in response.output] == ["message", "function_call"]
    # "open" ignores the request: a template that always opens reasoning does so whatever it was asked
    assert chat(base, "open/thinks", stream, [WEATHER], **off)[2] == THOUGHT


@pytest.mark.parametrize("stream", [False, True])
def test_a_request_that_turns_thinking_on_opens_it_under_asked(proxy: tuple[str, list[Any]], stream: bool) -> None:
    base = proxy[0]
    on = {"chat_template_kwargs": {"thinking": True}}  # DeepSeek V3.1's switch
    assert chat(base, "asked/thinks", stream, [WEATHER], **on)[1:] == ([("get_weather", {"city": "Paris"})], THOUGHT)
    message = claude(base, "asked/thinks", stream, thinking={"type": "enabled", "budget_tokens": 1024})
    assert [block.type for block in message.content] == ["thinking", "text", "tool_use"]
    response = responses(base, "asked/thinks", stream, reasoning={"effort": "high"})
    assert [item.type for item in response.output] == ["reasoning", "message", "function_call"]


@pytest.mark.parametrize("stream", [False, True])
def test_the_default_changes_nothing(proxy: tuple[str, list[Any]], stream: bool) -> None:
    base, seen = proxy
    content, calls, reasoning = chat(base, "closed/thinks", stream, [WEATHER])
    assert reasoning == "" and content.startswith(THOUGHT) and calls == [("get_weather", {"city": "Paris"})]
    seen.clear()
    content, calls, reasoning = chat(base, "closed/words", stream)  # nothing to parse: relayed as it came
    assert (content, calls, reasoning) == (SCRIPTS["words"], [], "")
    content, calls, reasoning = chat(base, "asked/words", stream)  # nothing asked: as closed
    assert (content, calls, reasoning) == (SCRIPTS["words"], [], "")
    assert all("start_in_reasoning" not in json.dumps(body) for body in seen)


# ---------------------------------------------------------------- an engine that splits reasoning out itself

def split_upstream() -> Any:
    """An engine with a reasoning parser: the reasoning comes as ``reasoning_content``, then the answer as content."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    async def chat(request: Request) -> Response:
        body = json.loads(await request.body())
        head = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
        if not body.get("stream"):
            message = {"role": "assistant", "reasoning_content": THOUGHT, "content": f"The answer {CALL}"}
            return JSONResponse({**head, "object": "chat.completion",
                                 "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})
        deltas = [{"role": "assistant", "content": ""}, {"reasoning_content": THOUGHT[:9]},
                  {"reasoning_content": THOUGHT[9:]}, {"content": "The answer "}, {"content": CALL}]
        frames = [{**head, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
        frames.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        data = b"".join(b"data: " + json.dumps(f).encode() + b"\n\n" for f in frames) + b"data: [DONE]\n\n"
        return StreamingResponse(iter([data]), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@pytest.mark.parametrize("stream", [False, True])
def test_reasoning_the_engine_split_out_closes_the_prompts(stream: bool) -> None:
    """"open" in front of an engine that already reads the reasoning (vLLM --reasoning-parser): its content is the
    answer, not more reasoning."""
    with ServerThread(split_upstream()) as up, \
            ServerThread(create_app(ProxyConfig.single(up.url + "/v1", {"reasoning_start": "open"}))) as proxy:
        content, calls, reasoning = chat(proxy.url, "m", stream, [WEATHER])
    assert (content.strip(), calls, reasoning) == ("The answer", [("get_weather", {"city": "Paris"})], THOUGHT)


def test_engine_split_at_the_wire_level() -> None:
    tools = [WEATHER]
    rewriter = ChunkRewriter(tools, start_in_reasoning=True)
    head = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(**delta: Any) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}

    out = rewriter.feed(chunk(role="assistant", content="")) + rewriter.feed(chunk(reasoning="Hmm."))
    out += rewriter.feed(chunk(content="Yes. ")) + (rewriter.feed_plain(chunk(content="Done.")) or []) + rewriter.close()
    said = "".join(c["choices"][0]["delta"].get("content") or "" for c in out)
    assert said in ("Yes. ", "Yes. Done.")  # (feed_plain may leave a plain chunk as it came: None)
    assert not any("reasoning_content" in c["choices"][0]["delta"] for c in out)
    # no reasoning of the upstream's own before the content: the prompt's reasoning is read from the content
    rewriter = ChunkRewriter(tools, start_in_reasoning=True)
    out = rewriter.feed(chunk(content="Hmm. </think>Yes.")) + rewriter.feed(chunk(reasoning="late")) + rewriter.close()
    assert "".join(c["choices"][0]["delta"].get("reasoning_content") or "" for c in out) == "Hmm. "
    completion = {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [{"index": 0,
                  "message": {"role": "assistant", "reasoning": "Hmm.", "content": "Yes."}, "finish_reason": "stop"}]}
    message = rewrite_completion(completion, tools, start_in_reasoning=True)["choices"][0]["message"]
    assert (message["content"], message.get("reasoning_content")) == ("Yes.", None)
    completion["choices"][0]["message"] = {"role": "assistant", "content": "Hmm. </think>Yes."}
    message = rewrite_completion(completion, tools, start_in_reasoning=True)["choices"][0]["message"]
    assert (message["content"], message["reasoning_content"]) == ("Yes.", "Hmm. ")


# ---------------------------------------------------------------- the setting: config file, flag, checks

def test_config_file_setting_and_its_checks(tmp_path: Path) -> None:
    path = tmp_path / "proxy.toml"
    head = '[backends.local]\nupstream = "http://127.0.0.1:9/v1"\n'
    path.write_text(head + 'reasoning_start = "auto"\n')
    assert load_config(str(path)).backends[0].reasoning_start == "auto"
    path.write_text(head)
    assert load_config(str(path)).backends[0].reasoning_start == "closed"
    path.write_text(head + 'reasoning_start = "opne"\n')
    with pytest.raises(ConfigError, match=r"reasoning_start must be one of .*did you mean 'open'"):
        load_config(str(path))
    path.write_text(head + "reasoning_start = true\n")
    with pytest.raises(ConfigError, match="reasoning_start must be one of"):
        load_config(str(path))
    path.write_text(head + 'reasoning_begin = "open"\n')
    with pytest.raises(ConfigError, match="did you mean 'reasoning_start'"):
        load_config(str(path))


def test_serve_flag_reaches_the_backend(monkeypatch: Any, capsys: Any, tmp_path: Path) -> None:
    from streamparse import cli
    from streamparse.cli import serve as serve_command

    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(serve_command, "_serve", lambda settings, level, out: seen.append(settings) or 0)
    assert cli.main(["serve", "--upstream", "http://127.0.0.1:9/v1", "--reasoning-start", "asked"]) == 0
    assert config_from_settings(seen[-1]).backends[0].reasoning_start == "asked"
    assert cli.main(["serve", "--upstream", "http://127.0.0.1:9/v1"]) == 0
    assert config_from_settings(seen[-1]).backends[0].reasoning_start == "closed"
    with pytest.raises(SystemExit):
        cli.main(["serve", "--upstream", "http://127.0.0.1:9/v1", "--reasoning-start", "maybe"])
    path = tmp_path / "proxy.toml"
    path.write_text('[backends.local]\nupstream = "http://127.0.0.1:9/v1"\n')
    assert cli.main(["serve", "--config", str(path), "--reasoning-start", "open"]) == 2
    assert "--reasoning-start goes with --upstream; in a config file set reasoning_start" in capsys.readouterr().err
