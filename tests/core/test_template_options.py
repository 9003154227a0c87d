"""``StreamParser``, ``parse``, ``iparse`` and ``aparse`` given the model's chat template (``chat_template``,
``chat_template_kwargs``) or the generation prompt (``generation_prompt``): the format and the start state come
from them, and what the caller says itself wins. Real templates only (llama.cpp's, from PyPI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from streamparse import StreamParser, aparse, iparse, parse, read_template
from streamparse.core.events import ReasoningDelta, TextDelta, ToolCall
from template_files import llama_cpp_templates

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
QWEN35_ANSWER = ("The user wants the weather.\n</think>\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\n"
                 "Paris\n</parameter>\n</function>\n</tool_call>")


@pytest.fixture(scope="module")
def templates() -> Path:
    return llama_cpp_templates()


def _template(templates: Path, name: str) -> str:
    return (templates / name).read_text(encoding="utf-8")


def _split(events: list[Any]) -> tuple[str, str, list[tuple[str, str]]]:
    """(content, whitespace around it left out; reasoning; calls)."""
    return ("".join(e.text for e in events if isinstance(e, TextDelta)).strip(),
            "".join(e.text for e in events if isinstance(e, ReasoningDelta)),
            [(e.name, e.arguments) for e in events if isinstance(e, ToolCall)])


def test_the_template_decides_the_format_and_the_start_state(templates: Path) -> None:
    """Qwen3.5's template opens <think> in the generation prompt and writes calls as Qwen3-Coder XML: told only the
    template, the answer's reasoning, closed by a </think> never opened in it, is reasoning, and the call is read."""
    source = _template(templates, "Qwen3.5-4B.jinja")
    told_nothing = _split(StreamParser(TOOLS).read_whole(QWEN35_ANSWER))
    assert "</think>" in told_nothing[0]
    got = _split(StreamParser(TOOLS, chat_template=source).read_whole(QWEN35_ANSWER))
    assert got == ("", "The user wants the weather.\n", [("get_weather", '{"city": "Paris"}')])
    setup = read_template(source)
    assert setup.format_name == "qwen3_coder" and setup.start_in_reasoning and "<|im_end|>" in setup.stop_tokens
    assert setup.dialects is not None and len(setup.dialects) > 1  # read first, never alone: the others after it


def test_the_kwargs_change_the_start_state(templates: Path) -> None:
    source = _template(templates, "Qwen3.5-4B.jinja")
    answer = "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>"
    off = {"enable_thinking": False}
    assert not read_template(source, kwargs=off).start_in_reasoning
    got = parse(answer, TOOLS, chat_template=source, chat_template_kwargs=off)
    assert [c.name for c in got.tool_calls] == ["get_weather"] and got.reasoning == ""


def test_what_the_caller_says_wins(templates: Path) -> None:
    source = _template(templates, "Qwen3.5-4B.jinja")
    closed = _split(StreamParser(TOOLS, chat_template=source, start_in_reasoning=False).read_whole(QWEN35_ANSWER))
    assert closed[1] == "" and "</think>" in closed[0]  # told: the prompt did not open reasoning
    hermes = StreamParser(TOOLS, chat_template=source, dialects=["hermes"]).read_whole(QWEN35_ANSWER)
    assert not [e for e in hermes if isinstance(e, ToolCall)]  # told: read hermes only
    given = "<|im_start|>assistant\n<think>\n\n</think>\n\n"  # the engine's own generation prompt wins
    assert not read_template(source, generation_prompt=given).start_in_reasoning


def test_a_generation_prompt_alone_sets_the_start_state() -> None:
    got = _split(StreamParser(TOOLS, generation_prompt="<|im_start|>assistant\n<think>\n").read_whole(QWEN35_ANSWER))
    assert got[1] == "The user wants the weather.\n" and got[2] == [("get_weather", '{"city": "Paris"}')]
    assert _split(StreamParser(TOOLS, generation_prompt="<|im_start|>assistant\n").read_whole("hi"))[0] == "hi"


def test_harmony_answers_continue_the_generation_prompt(templates: Path) -> None:
    """gpt-oss's prompt ends with ``<|start|>assistant``: what the model writes next (a channel) is read as the
    continuation of it, and so is the template's own way of writing a call (the recipient first)."""
    source = _template(templates, "openai-gpt-oss-120b.jinja")
    model = ("<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary "
             'to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>')
    got = _split(StreamParser(TOOLS, chat_template=source).read_whole(model))
    assert got == ("", "Need the weather.", [("get_weather", '{"city": "Paris"}')])
    template_way = ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>'
    assert _split(StreamParser(TOOLS, chat_template=source).read_whole(template_way))[2] == \
        [("get_weather", '{"city": "Paris"}')]


def test_streamed_and_iterated_the_same(templates: Path) -> None:
    source = _template(templates, "Qwen3.5-4B.jinja")
    whole = parse(QWEN35_ANSWER, TOOLS, chat_template=source)
    pieces = [QWEN35_ANSWER[i : i + 3] for i in range(0, len(QWEN35_ANSWER), 3)]
    streamed = _split([e for e in iparse(pieces, TOOLS, chat_template=source)])
    assert streamed == ("", whole.reasoning, [(c.name, c.arguments) for c in whole.tool_calls])


@pytest.mark.anyio
async def test_aparse_takes_the_template_too(templates: Path) -> None:
    source = _template(templates, "Qwen3.5-4B.jinja")

    async def deltas() -> Any:
        for i in range(0, len(QWEN35_ANSWER), 5):
            yield QWEN35_ANSWER[i : i + 5]

    events = [e async for e in aparse(deltas(), TOOLS, chat_template=source)]
    assert _split(events)[2] == [("get_weather", '{"city": "Paris"}')]


def test_read_template_is_cached_per_template_and_kwargs(templates: Path) -> None:
    source = _template(templates, "Qwen3-Coder.jinja")
    first = read_template(source, kwargs={"enable_thinking": True})
    assert read_template(source, kwargs={"enable_thinking": True}) is first
    assert read_template(source) is not first


def test_a_derived_declaration_runs_as_a_dialect(templates: Path) -> None:
    """``dialects=`` takes a declaration object (the derived one a setup holds) beside names."""
    from streamparse.core.template_reading import derived_for

    found, _ = derived_for(_template(templates, "tencent-Hy3.jinja"))
    assert found.dialect is not None
    text = ("<tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n"
            "<arg_key:opensource>days</arg_key:opensource>\n<arg_value:opensource>2</arg_value:opensource>\n"
            "</tool_call:opensource>\n</tool_calls:opensource>")
    got = parse(text, TOOLS, dialects=[found.dialect])
    assert [(c.name, c.parsed_arguments) for c in got.tool_calls] == [("get_weather", {"days": 2})]
    assert got.content.strip() == ""
    mixed = parse("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>", TOOLS,
                  dialects=["hermes", found.dialect])
    assert [c.name for c in mixed.tool_calls] == ["get_weather"]
