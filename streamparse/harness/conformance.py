"""The ``canitoolcall`` conformance suite, replayed through streamparse as an operator would run it.

canitoolcall (PyPI, Apache-2.0) is a third-party corpus of recorded model outputs, each with the parse a correct
engine returns. Each fixture is parsed whole and streamed at several chunkings, through the library
(:class:`~streamparse.StreamParser`) or through the OpenAI chunk layer the proxy runs
(:class:`~streamparse.openai.ChunkRewriter`), and canitoolcall's own checks judge the results.

Invariant: the configuration is chosen per *model*, never per fixture: the backend row an operator writes for the
fixture's reference model (:data:`MODELS`: the pinned dialect, ``reasoning_start``, ``response_start``; the table
``docs/dialects.md`` shows), applied to what the request asked (the fixture's ``thinking``) as the proxy's
``plan`` applies it. Nothing here looks at a fixture's expected result.

Streams are cut from *units*: each of the family's markers (special tokens) is one unit, every other character
is one unit. That is finer than any tokenizer, so each realistic strategy of the suite (``one``, ``special``,
``token``, ``rand:S:8``) is at least as hard here as over token ids.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.events import Diagnostic
from ..core.parser import StreamParser

if TYPE_CHECKING:  # canitoolcall is the optional ``conformance`` extra, imported only when a run starts
    from canitoolcall.chunking import ChunkStrategy
    from canitoolcall.fixtures import Family, Fixture
    from canitoolcall.results import CaseResult, ParseResult

__all__ = ["MODELS", "Model", "Setup", "model_for", "setup_for", "request_for", "prompt_setup", "units", "replay", "run", "LAYERS"]

LAYERS = ("library", "openai")


@dataclass(frozen=True)
class Model:
    """What an operator writes in a backend for one model: the pinned dialect, ``reasoning_start`` and
    ``response_start`` (``docs/proxy.md``)."""

    name: str  # the models, as docs/dialects.md names them
    pattern: str  # matches the model's Hugging Face repo id
    dialect: str
    reasoning_start: str = "closed"
    response_start: bool = False


# The first match wins. docs/dialects.md shows this table ("which dialect for which model").
MODELS: tuple[Model, ...] = (
    Model("Qwen3-Coder", r"Qwen3-Coder", "qwen3_coder"),
    Model("Qwen3.5 and later", r"Qwen3\.[5-9]", "qwen3_coder", "auto"),  # thinks unless asked not to
    Model("Qwen3 Thinking-2507", r"Qwen3-.*Thinking", "hermes", "open"),  # its template always opens <think>
    Model("Qwen3, Qwen3 Instruct-2507", r"Qwen", "hermes"),  # the hybrid model writes <think> itself
    Model("DeepSeek V3.1", r"DeepSeek-V3\.1", "deepseek_v31", "asked"),
    Model("DeepSeek V4.1", r"DeepSeek-V4\.1", "deepseek_v41", "asked"),
    Model("DeepSeek V3.2, V4", r"DeepSeek-V3\.[2-9]|DeepSeek-V4", "deepseek_v32", "asked"),
    Model("DeepSeek V3, R1", r"DeepSeek", "deepseek_v3"),
    Model("GLM-4.5, 4.6", r"GLM-4\.[56]", "glm45"),  # the model writes <think> itself
    Model("GLM-4.7, 5.x", r"GLM", "glm45", "auto"),  # the template opens <think> unless thinking is off
    Model("gpt-oss", r"gpt-oss", "openai"),
    Model("Kimi K3", r"Kimi-K3", "kimi_k3", "auto", response_start=True),
    Model("Kimi K2.5+, K2 Thinking", r"Kimi-K2\.[5-9]|Kimi-K2-Thinking", "kimi_k2", "auto"),
    Model("Kimi K2 Instruct", r"Kimi", "kimi_k2"),
    Model("Llama 4", r"Llama-4", "pythonic"),
    Model("Llama 3.1-3.3", r"Llama", "llama3_json"),
    Model("Mistral 7B v0.3", r"Mistral-7B-Instruct-v0\.[1-3]", "mistral"),
    Model("Mistral Small 3.2, Devstral, Magistral, Ministral 3", r"Mistral|Magistral|Ministral|Devstral", "mistral_v11"),
    Model("Gemma 4", r"gemma-4", "gemma4"),
)

# A generation prompt that ends inside a span: its last opener of that kind is not closed after it.
_REASONING = (("<think>", "<|open|>think<|sep|>", "<|channel>thought", "[THINK]"),
              ("</think>", "<|close|>think<|sep|>", "<channel|>", "[/THINK]"))
_RESPONSE = (("<|open|>response<|sep|>", "<|channel|>final<|message|>"), ("<|close|>response<|sep|>", "<|end|>", "<|return|>"))


@dataclass(frozen=True)
class Setup:
    """How one answer is read: its pinned dialect, and whether it starts inside reasoning or a response channel."""

    dialect: str
    start_in_reasoning: bool
    start_in_response: bool = False

    def options(self) -> dict[str, Any]:
        return {"dialects": [self.dialect], "start_in_reasoning": self.start_in_reasoning,
                "start_in_response": self.start_in_response}


def model_for(fixture: Fixture) -> Model | None:
    """The operator's row for the fixture's reference model (None: no dialect reads it)."""
    return next((m for m in MODELS if re.search(m.pattern, fixture.reference_model)), None)


def request_for(fixture: Fixture) -> dict[str, Any]:
    """What the client asked about thinking, as a chat request says it (both spellings templates read)."""
    if fixture.thinking is None:
        return {}
    return {"chat_template_kwargs": {"enable_thinking": fixture.thinking, "thinking": fixture.thinking}}


def setup_for(fixture: Fixture, family: Family | None = None) -> Setup | None:
    """How the proxy reads the fixture's answer: the model's row, and the request's ask decided as ``plan`` does."""
    from ..proxy.plan import opens_reasoning

    model = model_for(fixture)
    if model is None:
        return None
    reasoning = opens_reasoning(request_for(fixture), model.reasoning_start)
    return Setup(model.dialect, reasoning, model.response_start and not reasoning)


def generation_prompt(fixture: Fixture, family: Family | None) -> str:
    """The text the template appended after the prompt: the fixture's own, else its model's default."""
    if fixture.generation_prompt is not None:
        return fixture.generation_prompt
    ref = family.reference_for(fixture.reference_model) if family else None
    return (ref.default_generation_prompt if ref else None) or ""


def _opens(prompt: str, markers: tuple[tuple[str, ...], tuple[str, ...]]) -> bool:
    openers, closers = markers
    opened = max(prompt.rfind(o) for o in openers)
    return opened >= 0 and all(prompt.rfind(c) < opened for c in closers)


def prompt_setup(fixture: Fixture, family: Family | None) -> tuple[bool, bool]:
    """What the fixture's generation prompt itself opens: (reasoning, a response channel). The operator's table
    is checked against it (tests/conformance)."""
    prompt = generation_prompt(fixture, family)
    return _opens(prompt, _REASONING), _opens(prompt, _RESPONSE)


def units(text: str, markers: Iterable[str]) -> list[str]:
    """``text`` cut into units: each marker whole, every other character alone (joined, they give ``text``)."""
    found = sorted({m for m in markers if m}, key=len, reverse=True)
    if not found:
        return list(text)
    pattern = re.compile("|".join(map(re.escape, found)) + "|.", re.S)
    return pattern.findall(text)


def chunks(text: str, markers: Sequence[str], strategy: ChunkStrategy) -> list[str]:
    """The deltas one strategy cuts ``text`` into (``special``: each marker alone, the runs between whole)."""
    from canitoolcall.chunking import split

    parts = units(text, markers)
    special = {p for p in parts if len(p) > 1}
    return ["".join(group) for group in split(parts, strategy, special=special)]


def _library(fixture: Fixture, setup: Setup, deltas: Sequence[str]) -> tuple[ParseResult, list[Diagnostic]]:
    from canitoolcall.results import ParsedToolCall, ParseResult

    parser = StreamParser(fixture.tools, **setup.options())
    events = [ev for d in deltas for ev in parser.feed(d)] + parser.close(truncated=fixture.truncated)
    from ..core.events import ParseResult as Gathered

    got = Gathered(events)
    calls = tuple(ParsedToolCall(c.name, c.arguments) for c in got.tool_calls)
    return ParseResult(got.content or None, got.reasoning or None, calls), got.diagnostics


def _openai(fixture: Fixture, setup: Setup, deltas: Sequence[str]) -> tuple[ParseResult, list[Diagnostic]]:
    """The deltas as ``chat.completion.chunk`` s through the proxy's chunk layer, gathered as a client would."""
    from canitoolcall.results import ParsedToolCall, ParseResult

    from ..wire.chunks import ChunkRewriter

    finish = "length" if fixture.truncated else "stop"
    rewriter = ChunkRewriter(fixture.tools, **setup.options())
    upstream = [{"id": "c", "object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": {"content": d}, "finish_reason": None}]} for d in deltas]
    upstream.append({"id": "c", "object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": {}, "finish_reason": finish}]})
    out = [c for chunk in upstream for c in rewriter.feed(chunk)] + rewriter.close()
    content, reasoning, calls = [], [], {}  # type: ignore[var-annotated]
    for chunk in out:
        for choice in chunk.get("choices", ()):
            delta = choice.get("delta") or {}
            content.append(delta.get("content") or "")
            reasoning.append(delta.get("reasoning_content") or "")
            for tc in delta.get("tool_calls") or ():
                slot = calls.setdefault(tc["index"], ["", ""])
                fn = tc.get("function") or {}
                slot[0] += fn.get("name") or ""
                slot[1] += fn.get("arguments") or ""
    made = tuple(ParsedToolCall(name, args) for _, (name, args) in sorted(calls.items()))
    return ParseResult("".join(content) or None, "".join(reasoning) or None, made), []


_LAYER = {"library": _library, "openai": _openai}


@dataclass
class Replay:
    """One fixture's parses: whole, and streamed per strategy id, with the whole parse's diagnostics."""

    nonstream: ParseResult
    streams: dict[str, ParseResult]
    diagnostics: list[Diagnostic]


def replay(fixture: Fixture, family: Family | None, setup: Setup, layer: str = "library",
           strategies: Sequence[ChunkStrategy] | None = None) -> Replay:
    """Parse ``fixture`` whole and at each chunking, through ``layer`` (``library`` or ``openai``)."""
    from canitoolcall.chunking import DEFAULT_STRATEGIES

    parse = _LAYER[layer]
    markers = tuple(family.markers) if family else ()
    whole, diagnostics = parse(fixture, setup, [fixture.raw_output])
    streams = {s.id: parse(fixture, setup, chunks(fixture.raw_output, markers, s))[0]
               for s in (strategies or DEFAULT_STRATEGIES)}
    return Replay(whole, streams, diagnostics)


def run(layer: str = "library", families: Sequence[str] | None = None,
        strategies: Sequence[ChunkStrategy] | None = None) -> list[CaseResult]:
    """Every selected fixture replayed and judged by canitoolcall's checks, in corpus order."""
    from canitoolcall.checks import case_status, run_checks
    from canitoolcall.fixtures import load_fixtures
    from canitoolcall.results import CaseResult, Observation, Status
    # The suite runner's lookup, not its pytest plugin's: the plugin imports pytest, which the extra lacks.
    from canitoolcall.runner import family_for

    results = []
    read: dict[Path, Family | None] = {}  # each family.json read once
    for fixture in load_fixtures(None, families=list(families) if families else None):
        family = family_for(fixture, read)
        setup = setup_for(fixture, family)
        if setup is None:
            results.append(CaseResult(fixture.id, fixture.family, Status.UNSUPPORTED, reason="no dialect for the model"))
            continue
        got = replay(fixture, family, setup, layer, strategies)
        obs = Observation(nonstream=got.nonstream, streams=got.streams)
        rows = tuple(run_checks(fixture, family, obs))
        results.append(CaseResult(fixture.id, fixture.family, case_status(rows), checks=rows,
                                  parser_config=setup.options(),
                                  observed=obs))
    return results
