"""vLLM's own server with ``--tool-call-parser streamparse --reasoning-parser streamparse``: its three fronts that
use the parser (``/v1/chat/completions``, ``/v1/responses``, ``/v1/messages``), streamed and whole, driven by the
openai and anthropic SDKs over loopback.

The server is vLLM 0.33's ``build_and_serve`` in the engines environment (``engine_env``), in front of a
scripted engine client (``vllm_scripted_server.py``) that streams each answer token by token through the
Qwen2.5-Coder tokenizer. No plugin path is given: the parsers are found through the ``vllm.general_plugins``
entry point. Opt-in (marker ``engines``): it needs the engines environment, and skips saying so without it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

import pytest

from engine_env import engines_python, opted_in, tokenizer_dir
from served import served
from streamparse.proxy.runner import free_port

pytestmark = pytest.mark.engines

HERE = Path(__file__).parent
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
ANSWERS = {
    "hermes": 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    "think": "<think>They ask about Oslo. A <tool_call> tag inside thinking is not a call.</think>Checking now."
             '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>',
    "prose": "No tool needed: 2 < 3 and <b>bold</b> stays text.",
}


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    opted_in(request.config)
    python = engines_python()
    model = tokenizer_dir(python)
    work = tmp_path_factory.mktemp("vllm")
    (work / "answers.json").write_text(json.dumps(ANSWERS), encoding="utf-8")
    record = work / "record.jsonl"
    port = free_port()
    env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu", "HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1"}
    base = f"http://127.0.0.1:{port}"
    with served([str(python), str(HERE / "vllm_scripted_server.py"), str(work / "answers.json"), str(record), "--",
                 "--model", str(model), "--host", "127.0.0.1", "--port", str(port), "--served-model-name", "qwen",
                 "--enable-auto-tool-choice", "--tool-call-parser", "streamparse", "--reasoning-parser", "streamparse"],
                base + "/v1/models", work / "server.log", name="vLLM",
                timeout=300, poll=1, grace=30, env=env):  # (importing vLLM and torch on 2 shared cores: minutes)
        yield base, record


def _ask(case: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"What is the weather? [case {case}]"}]


def _streamed(stream: Any) -> dict[str, Any]:
    content, reasoning, calls, finish = "", "", [], None
    for chunk in stream:
        delta = chunk.choices[0].delta
        content += delta.content or ""
        reasoning += getattr(delta, "reasoning", None) or ""
        calls += [(c.function.name, c.function.arguments) for c in delta.tool_calls or ()]
        finish = chunk.choices[0].finish_reason or finish
    return {"content": content, "reasoning": reasoning, "calls": calls, "finish": finish}


def _whole(response: Any) -> dict[str, Any]:
    message = response.choices[0].message
    calls = [(c.function.name, c.function.arguments) for c in message.tool_calls or ()]
    return {"content": message.content or "", "reasoning": getattr(message, "reasoning", None) or "",
            "calls": calls, "finish": response.choices[0].finish_reason}


@pytest.mark.parametrize("case, expected", [
    ("hermes", {"content": "Let me check.\n", "reasoning": "", "calls": [("get_weather", '{"city": "Paris"}')],
                "finish": "tool_calls"}),
    ("think", {"content": "Checking now.", "reasoning": "They ask about Oslo. A <tool_call> tag inside thinking is "
               "not a call.", "calls": [("get_weather", '{"city": "Oslo"}')], "finish": "tool_calls"}),
    ("prose", {"content": ANSWERS["prose"], "reasoning": "", "calls": [], "finish": "stop"}),
])
def test_chat_completions_streamed_and_whole(server: tuple[str, Path], case: str, expected: dict[str, Any]) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=server[0] + "/v1", api_key="none")
    whole = _whole(client.chat.completions.create(model="qwen", messages=_ask(case), tools=TOOLS))
    streamed = _streamed(client.chat.completions.create(model="qwen", messages=_ask(case), tools=TOOLS, stream=True))
    assert whole == expected
    assert streamed == expected


def test_special_tokens_are_kept_and_the_real_template_rendered(server: tuple[str, Path]) -> None:
    from openai import OpenAI

    OpenAI(base_url=server[0] + "/v1", api_key="none").chat.completions.create(
        model="qwen", messages=_ask("hermes"), tools=TOOLS)
    seen = [json.loads(line) for line in server[1].read_text(encoding="utf-8").splitlines()]
    last = seen[-1]
    assert last["case"] == "hermes"
    assert last["skip_special_tokens"] is False  # the parser's adjust_request
    assert last["prompt_tail"].endswith("<|im_start|>assistant\n")  # Qwen2.5's own template, tools listed
    assert "<tool_call>" in last["prompt_tail"]


def test_responses_streamed_and_whole(server: tuple[str, Path]) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=server[0] + "/v1", api_key="none")
    tools = [{"type": "function", "name": "get_weather", "parameters": WEATHER}]
    whole = client.responses.create(model="qwen", input="Weather? [case think]", tools=tools)
    kinds = [item.type for item in whole.output]
    assert kinds == ["reasoning", "message", "function_call"]
    call = whole.output[-1]
    assert (call.name, json.loads(call.arguments)) == ("get_weather", {"city": "Oslo"})
    assert whole.output[1].content[0].text == "Checking now."

    done: list[Any] = []
    text = ""
    with client.responses.stream(model="qwen", input="Weather? [case hermes]", tools=tools) as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                text += event.delta
            if event.type == "response.output_item.done":
                done.append(event.item)
    assert text == "Let me check.\n"
    calls = [(i.name, json.loads(i.arguments)) for i in done if i.type == "function_call"]
    assert calls == [("get_weather", {"city": "Paris"})]


def test_messages_streamed_and_whole(server: tuple[str, Path]) -> None:
    import anthropic

    client = anthropic.Anthropic(base_url=server[0], api_key="none")
    tools = [{"name": "get_weather", "input_schema": WEATHER}]
    whole = client.messages.create(model="qwen", max_tokens=256, messages=_ask("hermes"), tools=tools)
    assert whole.stop_reason == "tool_use"
    assert [b.type for b in whole.content] == ["text", "tool_use"]
    assert whole.content[0].text == "Let me check.\n"
    assert (whole.content[1].name, whole.content[1].input) == ("get_weather", {"city": "Paris"})

    with client.messages.stream(model="qwen", max_tokens=256, messages=_ask("hermes"), tools=tools) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "tool_use"
    uses = [(b.name, b.input) for b in final.content if b.type == "tool_use"]
    assert uses == [("get_weather", {"city": "Paris"})]
    assert "".join(b.text for b in final.content if b.type == "text") == "Let me check.\n"
