"""``streamparse serve`` with no flag in front of an engine that serves a REAL chat template (scripted llama.cpp and
vLLM endpoints, ``template_engines``): the proxy finds the template, and the answer is read as the template says,
on every front, streamed and not: the format (named-only functionary v3.2 included, whose generation prompt ends
with ``>>>``), reasoning the prompt opened (Qwen3.5), and thinking turned off by the request's own kwargs (OpenAI
``chat_template_kwargs``, Anthropic ``thinking``, Responses ``reasoning.effort``). Settings the operator wrote still
win. ``/readyz`` shows what was found and decided; the log says it once."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Iterator

import anthropic
import httpx
import pytest
from openai import OpenAI

from streamparse.proxy.app import create_app
from streamparse.proxy.config import ProxyConfig
from streamparse.proxy.runner import ServerThread
from template_engines import ScriptedEngine
from template_files import llama_cpp_template, llama_cpp_templates
from openai_reading import chat_read

WEATHER: dict[str, Any] = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
ASK = [{"role": "user", "content": "Weather in Paris?"}]
QWEN35_CALL = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
THOUGHT = "The user wants the weather in Paris."
THINKS = f"{THOUGHT}\n</think>\n\nLet me check.\n{QWEN35_CALL}"  # the prompt opened <think>: no opening tag
PLAIN = f"Let me check.\n{QWEN35_CALL}"


@pytest.fixture(scope="module")
def templates() -> Path:
    return llama_cpp_templates()


@pytest.fixture
def served(templates: Path) -> Iterator[Any]:
    """``served(engine, **backend settings)`` -> the proxy's base URL, the engine behind it running."""
    stack: list[ServerThread] = []

    def start(engine: ScriptedEngine, **settings: Any) -> str:
        upstream = ServerThread(engine.app()).__enter__()
        stack.append(upstream)
        proxy = ServerThread(create_app(ProxyConfig.single(upstream.url + "/v1", settings))).__enter__()
        stack.append(proxy)
        return proxy.url

    yield start
    for server in reversed(stack):
        server.__exit__(None, None, None)


def chat(base: str, stream: bool, **extra: Any) -> tuple[str, list[tuple[str, Any]], str]:
    """(content, calls, reasoning_content) through the OpenAI front, with the openai client."""
    return chat_read(base, ASK, stream=stream, tools=[WEATHER], extra=extra)


@pytest.mark.parametrize("stream", [False, True])
def test_reasoning_the_template_opened_is_split_out(served: Any, templates: Path, stream: bool) -> None:
    engine = ScriptedEngine("llamacpp", llama_cpp_template("Qwen3.5-4B.jinja"), answer=THINKS)
    content, calls, reasoning = chat(served(engine), stream)
    assert reasoning.strip() == THOUGHT and content.strip() == "Let me check."
    assert calls == [("get_weather", {"city": "Paris"})]
    assert engine.hits["GET /props"] >= 1 and engine.chats[0]["tools"]  # (tools forwarded as always)


@pytest.mark.parametrize("stream", [False, True])
def test_thinking_turned_off_by_the_request(served: Any, templates: Path, stream: bool) -> None:
    engine = ScriptedEngine("llamacpp", llama_cpp_template("Qwen3.5-4B.jinja"), answer=PLAIN)
    content, calls, reasoning = chat(served(engine), stream, chat_template_kwargs={"enable_thinking": False})
    assert reasoning == "" and content.strip() == "Let me check." and calls == [("get_weather", {"city": "Paris"})]
    asked = [body for path, body in engine.bodies if path == "/apply-template"]
    assert asked and all(body["chat_template_kwargs"] == {"enable_thinking": False} for body in asked)


def test_the_operator_s_settings_win(served: Any, templates: Path) -> None:
    engine = ScriptedEngine("llamacpp", llama_cpp_template("Qwen3.5-4B.jinja"), answer=THINKS)
    content, calls, reasoning = chat(served(engine, reasoning_start="closed"), False)
    assert reasoning == "" and THOUGHT in content  # as before the template was read: the operator said closed
    assert calls == [("get_weather", {"city": "Paris"})]
    engine = ScriptedEngine("llamacpp", llama_cpp_template("Qwen3.5-4B.jinja"), answer=THINKS)
    content, calls, reasoning = chat(served(engine, dialect="hermes"), False)
    assert reasoning.strip() == THOUGHT and calls == [] and "<function=get_weather>" in content


@pytest.mark.parametrize("stream", [False, True])
def test_a_named_only_format_is_read_when_the_template_says_so(served: Any, templates: Path, stream: bool) -> None:
    """functionary v3.2's generation prompt ends with ``>>>``: the model writes the name and its arguments."""
    engine = ScriptedEngine("llamacpp", llama_cpp_template("meetkai-functionary-medium-v3.2.jinja"),
                            answer='get_weather\n{"city": "Paris"}')
    content, calls, _ = chat(served(engine), stream)
    assert calls == [("get_weather", {"city": "Paris"})] and content.strip() == ""
    before = ScriptedEngine("llamacpp", llama_cpp_template("meetkai-functionary-medium-v3.2.jinja"),
                            answer='get_weather\n{"city": "Paris"}')
    content, calls, _ = chat(served(before, chat_template="off"), stream)
    assert calls == [] and "get_weather" in content  # without the template: auto-detection, as before


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_thinking_off_reaches_the_template(served: Any, templates: Path, stream: bool) -> None:
    engine = ScriptedEngine("llamacpp", llama_cpp_template("Qwen3.5-4B.jinja"), answer=PLAIN)
    client = anthropic.Anthropic(base_url=served(engine), api_key="sk-ant-test", max_retries=0, timeout=30)
    request: dict[str, Any] = {"model": "m", "max_tokens": 100, "messages": ASK, "thinking": {"type": "disabled"},
                               "tools": [{"name": "get_weather", "input_schema": WEATHER["function"]["parameters"]}]}
    if stream:
        with client.messages.stream(**request) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**request)
    kinds = [block.type for block in message.content]
    assert kinds == ["text", "tool_use"] and message.content[1].input == {"city": "Paris"}  # type: ignore[union-attr]
    asked = [body for path, body in engine.bodies if path == "/apply-template"]
    assert asked[0]["chat_template_kwargs"] == {"enable_thinking": False}


def test_responses_reasoning_effort_reaches_the_template(served: Any, templates: Path) -> None:
    engine = ScriptedEngine("llamacpp", llama_cpp_template("Qwen3.5-4B.jinja"), answer=THINKS)
    client = OpenAI(base_url=served(engine) + "/v1", api_key="sk-test", max_retries=0, timeout=30)
    answer = client.responses.create(model="m", input="Weather in Paris?", reasoning={"effort": "high"},
                                     tools=[{"type": "function", "name": "get_weather",
                                             "parameters": WEATHER["function"]["parameters"]}])
    kinds = [item.type for item in answer.output]
    assert kinds == ["reasoning", "message", "function_call"], kinds
    asked = [body for path, body in engine.bodies if path == "/apply-template"]
    assert asked[0]["reasoning_effort"] == "high"


def test_vllm_renders_the_generation_prompt_through_tokenize(served: Any, templates: Path) -> None:
    engine = ScriptedEngine("vllm", llama_cpp_template("Qwen3.5-4B.jinja"), model="m", tokenizer_info=True, answer=THINKS)
    content, calls, reasoning = chat(served(engine), True)
    assert reasoning.strip() == THOUGHT and calls == [("get_weather", {"city": "Paris"})]
    assert engine.hits["POST /tokenize"] == 2 and engine.hits["POST /detokenize"] == 2


def test_readyz_and_the_log_say_what_was_found(served: Any, templates: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "streamparse.server")
    template = llama_cpp_template("Qwen3.5-4B.jinja")
    base = served(ScriptedEngine("llamacpp", template, answer=THINKS))
    chat(base, False)
    page = httpx.get(base + "/readyz", timeout=10).json()
    shown = page["chat_templates"]["default"]
    assert shown["setting"] == "auto"
    model = shown["models"]["m"]
    assert model["from"] == "GET /props (llama.cpp b11434-515e855)" and model["engine"] == "llamacpp"
    assert model["decided"] == {"format": "qwen3_coder", "derived": False, "start": "in reasoning"}
    assert model["characters"] == len(template) and template[:100] not in json.dumps(page)
    said = [r.getMessage() for r in caplog.records if "chat template from" in r.getMessage()]
    assert len(said) == 1 and "reads as qwen3_coder" in said[0] and "answers start in reasoning" in said[0]


def test_nothing_found_leaves_parsing_as_it_was(served: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "streamparse.server")
    base = served(ScriptedEngine("plain", answer=f"Sure. {QWEN35_CALL}"))
    for _ in range(2):
        content, calls, reasoning = chat(base, False)
        assert calls == [("get_weather", {"city": "Paris"})] and content.strip() == "Sure."
    warned = [r.getMessage() for r in caplog.records if "no chat template found" in r.getMessage()]
    assert len(warned) == 1 and "--chat-template PATH" in warned[0]
    assert httpx.get(base + "/readyz", timeout=10).json()["chat_templates"]["default"]["models"]
