"""streamparse's vLLM parsers and SGLang detector read every answer as the library does, through the engines' own
parser interfaces: vLLM's composed ``Parser`` (``ParserManager.get_parser``: ``parse`` whole, ``parse_delta``
delta by delta with ``finished`` on the last) and SGLang's ``FunctionCallParser`` (``parse_non_stream``;
``parse_stream_chunk`` then ``parse_stream_end``), for any chunking.

Runs in the engines environment (``engine_env``): ``STREAMPARSE_ENGINES_VENV/bin/python -m pytest -m engines
tests/integrations/test_engine_parsers.py``; elsewhere it skips, saying so. ``vllm_read`` and ``sglang_read`` are
the two readings, for any answer (acceptance runs held-out answers through them).
"""

from __future__ import annotations

import json
import os
from typing import Any, Sequence

import pytest
from hypothesis import given, settings, strategies as st

import streamparse
from engine_env import chat_template, opted_in, tokenizer_dir

pytestmark = pytest.mark.engines
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
vllm_plugins = pytest.importorskip("vllm.plugins", reason="vLLM is not installed here: run in the engines "
                                   "environment (tests/integrations/engine_env.py)")
pytest.importorskip("sglang.srt.plugins", reason="SGLang is not installed here: run in the engines environment")

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
           "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
TEMPLATE = ""  # the tokenizer's chat template (set by the tokenizer fixture)
ANSWERS = [
    'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    "<think>Oslo, two days. Writing <tool_call> here is thinking.</think>\nOn it."
    # Qwen3-Coder's XML: not Qwen2.5's format (its template says Hermes JSON), so text to every reader
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n2\n</parameter>\n"
    "</function>\n</tool_call>",
    '\n<think>\nfirst</think>\n\n<tool_call>{"name": "get_weather", "arguments": {"city": "Zürich ✓"}}</tool_call>'
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Bern"}}</tool_call>',
    "Plain prose: 2 < 3, a <b>tag</b>, a {brace} and </tool_call> alone.",
    '<tool_call>{"name": "unknown_tool", "arguments": {}}</tool_call> stays text.',
]


@pytest.fixture(scope="module")
def tokenizer(request: pytest.FixtureRequest) -> Any:
    opted_in(request.config)
    import sys

    from transformers import AutoTokenizer

    vllm_plugins.load_general_plugins()  # the entry point, as `vllm serve` runs it
    from sglang.srt.plugins import load_plugins

    load_plugins()  # the entry point, as SGLang runs it
    folder = tokenizer_dir(sys.executable)
    global TEMPLATE
    TEMPLATE = chat_template(folder)
    return AutoTokenizer.from_pretrained(folder)


def _parser_cls(tokenizer: Any, reasoning: bool) -> Any:
    from vllm.parser.parser_manager import ParserManager

    return ParserManager.get_parser(tool_parser_name="streamparse",
                                    reasoning_parser_name="streamparse" if reasoning else None,
                                    enable_auto_tools=True, tokenizer=tokenizer)


def _request(tools: Sequence[dict[str, Any]]) -> Any:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    return ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], tools=list(tools))


def vllm_read(tokenizer: Any, text: str, cuts: Sequence[int] | None, tools: Sequence[dict[str, Any]] = TOOLS,
              reasoning: bool = True) -> tuple[str, str, list[tuple[str, str]]]:
    """(content, reasoning, calls) of ``text`` through vLLM's composed parser: whole (``cuts`` None) or in the
    deltas ``cuts`` makes, delta-only as vLLM's serving layer drives it."""
    cls, request = _parser_cls(tokenizer, reasoning), _request(tools)
    parser = cls(tokenizer, request.tools, chat_template_kwargs=None)
    request = parser.adjust_request(request)
    if cuts is None:
        said, content, calls = parser.parse(text, request, enable_auto_tools=True)
        return content or "", said or "", [(c.name, c.arguments) for c in calls or ()]
    bounds = [0, *sorted(set(c for c in cuts if 0 < c < len(text))), len(text)]
    content, said, found = "", "", []
    prompt = tokenizer.encode("<|im_start|>assistant\n")
    for i, (a, b) in enumerate(zip(bounds, bounds[1:])):
        delta = parser.parse_delta(text[a:b], tokenizer.encode(text[a:b]), request,
                                   prompt_token_ids=prompt if i == 0 else None, finished=b == len(text))
        if delta is not None:
            content += delta.content or ""
            said += delta.reasoning or ""
            found += [(c.function.name, c.function.arguments) for c in delta.tool_calls]
    return content, said, found


def sglang_read(tokenizer: Any, text: str, cuts: Sequence[int] | None,
                tools: Sequence[dict[str, Any]] = TOOLS) -> tuple[str, list[tuple[str, str]]]:
    """(normal text, calls) of ``text`` through SGLang's ``FunctionCallParser``, whole or in the chunks ``cuts``
    makes."""
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    parser = FunctionCallParser([Tool(**t) for t in tools], "streamparse", tokenizer=tokenizer)
    if cuts is None:
        normal, calls = parser.parse_non_stream(text)
        return normal, [(c.name or "", c.parameters) for c in calls]
    bounds = [0, *sorted(set(c for c in cuts if 0 < c < len(text))), len(text)]
    normal, found = "", []
    for a, b in zip(bounds, bounds[1:]):
        piece, calls = parser.parse_stream_chunk(text[a:b])
        normal += piece
        found += [(c.name or "", c.parameters) for c in calls]
    piece, calls = parser.parse_stream_end()
    return normal + piece, found + [(c.name or "", c.parameters) for c in calls]


def library(text: str, reasoning: bool = True) -> tuple[str, str, list[tuple[str, str]]]:
    """The library's reading with the model's chat template (the plug-ins take their setup from it)."""
    result = streamparse.parse(text, TOOLS, chat_template=TEMPLATE)
    calls = [(c.name, c.arguments) for c in result.tool_calls]
    if reasoning:
        return result.content, result.reasoning, calls
    return _as_text(text), "", calls


def _as_text(text: str) -> str:
    """The library's reading with reasoning kept as text where it stood (the parsers' rule without a reasoning
    parser)."""
    parser = streamparse.StreamParser(TOOLS, chat_template=TEMPLATE)
    return "".join(e.text for e in parser.feed(text) + parser.close()
                   if isinstance(e, (streamparse.TextDelta, streamparse.ReasoningDelta)))


def test_registered_through_the_entry_points(tokenizer: Any) -> None:
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.server_args import _tool_call_parser_choices
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    assert "streamparse" in ToolParserManager.list_registered()
    assert "streamparse" in ReasoningParserManager.list_registered()
    assert "streamparse" in FunctionCallParser.ToolCallParserEnum
    assert "streamparse" in _tool_call_parser_choices()


@pytest.mark.parametrize("text", ANSWERS)
@pytest.mark.parametrize("reasoning", [True, False], ids=["with-reasoning-parser", "tool-parser-alone"])
def test_vllm_whole_and_token_by_token_read_as_the_library(tokenizer: Any, text: str, reasoning: bool) -> None:
    expected = library(text, reasoning)
    content, said, calls = expected
    whole = (content if content.strip() else "", said, calls)  # vLLM's whole path drops whitespace-only content
    assert vllm_read(tokenizer, text, None, reasoning=reasoning) == whole
    ids = tokenizer.encode(text)
    cuts = [len(tokenizer.decode(ids[:i])) for i in range(1, len(ids))]  # the deltas vLLM's detokenizer makes
    assert vllm_read(tokenizer, text, cuts, reasoning=reasoning) == expected


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(ANSWERS), st.lists(st.integers(0, 400), max_size=30), st.booleans())
def test_vllm_any_chunking(tokenizer: Any, text: str, cuts: list[int], reasoning: bool) -> None:
    assert vllm_read(tokenizer, text, cuts, reasoning=reasoning) == library(text, reasoning)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(ANSWERS), st.lists(st.integers(0, 400), max_size=30))
def test_sglang_whole_and_any_chunking(tokenizer: Any, text: str, cuts: list[int]) -> None:
    content, _, calls = library(text, reasoning=False)
    assert sglang_read(tokenizer, text, cuts) == (content, calls)
    # SGLang's whole path hands back the answer as it was when its detector finds no call (reasoning markers
    # included: run SGLang's --reasoning-parser so the detector never sees them)
    assert sglang_read(tokenizer, text, None) == ((content, calls) if calls else (text, []))


def test_the_format_and_start_come_from_the_tokenizers_template(tokenizer: Any) -> None:
    """Qwen2.5-Coder's own template (from the GGUF) writes its calls as Hermes JSON in <tool_call> tags, and
    its generation prompt opens no reasoning: both parsers read that, with no setting."""
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    tool = ToolParserManager.get_tool_parser("streamparse")(tokenizer, None)
    setup = tool.setup(_request(TOOLS))
    # (the template's format first; every other format is still detected after it)
    assert (setup.names[0], setup.source, setup.start_in_reasoning) == ("hermes", "template", False)
    assert len(setup.names) > 1
    reasoning = ReasoningParserManager.get_reasoning_parser("streamparse")(tokenizer, chat_template_kwargs={})
    assert reasoning.setup.names[0] == "hermes"
    assert (reasoning.reasoning_start_str, reasoning.reasoning_end_str) == ("<think>", "</think>")


def test_vllm_required_tool_choice_reads_the_models_format(tokenizer: Any) -> None:
    """``supports_required_and_named`` is False: a required call is read in the model's own markup."""
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    cls = _parser_cls(tokenizer, reasoning=True)
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], tools=TOOLS,
                                    tool_choice="required")
    parser = cls(tokenizer, request.tools, chat_template_kwargs=None)
    request = parser.adjust_request(request)
    assert request.skip_special_tokens is False
    _, _, calls = parser.parse(ANSWERS[0], request, enable_auto_tools=True)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("get_weather", {"city": "Paris"})]
