"""The ``canitoolcall`` conformance suite, replayed through streamparse as an operator would run it.

canitoolcall (PyPI, Apache-2.0) is a third-party corpus of recorded model outputs, each with the parse a correct
engine returns. Each fixture is parsed whole and streamed at several chunkings, through the library
(:class:`~streamparse.StreamParser`) or through the OpenAI chunk layer the proxy runs
(:class:`~streamparse.openai.ChunkRewriter`), and canitoolcall's own checks judge the results.

Invariant: the configuration is chosen per *model*, never per fixture: the dialect pinned for the fixture's
reference model (:data:`MODEL_DIALECTS`, the table ``docs/dialects.md`` shows), and whether the generation
prompt leaves the answer inside reasoning (:func:`prompt_opens_reasoning`, what ``reasoning_start`` tells the
proxy). Nothing here looks at a fixture's expected result.

Streams are cut from *units*: each of the family's markers (special tokens) is one unit, every other character
is one unit. That is finer than any tokenizer, so each realistic strategy of the suite (``one``, ``special``,
``token``, ``rand:S:8``) is at least as hard here as over token ids.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.events import Diagnostic
from ..core.parser import StreamParser

if TYPE_CHECKING:  # canitoolcall is the optional ``conformance`` extra, imported only when a run starts
    from canitoolcall.chunking import ChunkStrategy
    from canitoolcall.fixtures import Family, Fixture
    from canitoolcall.results import CaseResult, ParseResult

__all__ = ["MODEL_DIALECTS", "Setup", "setup_for", "prompt_opens_reasoning", "units", "replay", "run", "LAYERS"]

LAYERS = ("library", "openai")

# (reference model pattern, dialect): the first match wins. The dialect is what ``--dialect`` / a backend's
# ``dialects`` would pin for that model.
MODEL_DIALECTS: tuple[tuple[str, str], ...] = (
    (r"Qwen3-Coder|Qwen3\.[5-9]", "qwen3_coder"),
    (r"Qwen", "hermes"),
    (r"DeepSeek-V3\.1", "deepseek_v31"),
    (r"DeepSeek-V4\.1", "deepseek_v41"),
    (r"DeepSeek-V3\.[2-9]|DeepSeek-V4", "deepseek_v32"),
    (r"DeepSeek", "deepseek_v3"),
    (r"GLM", "glm45"),
    (r"gpt-oss", "openai"),
    (r"Kimi-K3", "kimi_k3"),
    (r"Kimi", "kimi_k2"),
    (r"Llama-4", "pythonic"),
    (r"Llama", "llama3_json"),
    (r"Mistral-7B-Instruct-v0\.[1-3]", "mistral"),
    (r"Mistral|Magistral|Ministral|Devstral", "mistral_v11"),
    (r"gemma-4", "gemma4"),
)

# A generation prompt that ends inside a span: its last opener of that kind is not closed after it.
_REASONING = (("<think>", "<|open|>think<|sep|>", "<|channel>thought", "[THINK]"),
              ("</think>", "<|close|>think<|sep|>", "<channel|>", "[/THINK]"))
_RESPONSE = (("<|open|>response<|sep|>", "<|channel|>final<|message|>"), ("<|close|>response<|sep|>", "<|end|>", "<|return|>"))


@dataclass(frozen=True)
class Setup:
    """How one model is served: its pinned dialect, and whether answers start inside reasoning."""

    dialect: str
    start_in_reasoning: bool
    start_in_response: bool = False

    def options(self) -> dict[str, Any]:
        return {"dialects": [self.dialect], "start_in_reasoning": self.start_in_reasoning,
                "start_in_response": self.start_in_response}


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


def prompt_opens_reasoning(prompt: str) -> bool:
    """Does the generation prompt end inside reasoning (an opener with no closer after it)?"""
    return _opens(prompt, _REASONING)


def prompt_opens_response(prompt: str) -> bool:
    """Does the generation prompt end inside a response channel (Kimi K3 with thinking off)?"""
    return _opens(prompt, _RESPONSE)


def setup_for(fixture: Fixture, family: Family | None) -> Setup | None:
    """The operator's configuration for the fixture's reference model (None: no dialect for it)."""
    for pattern, dialect in MODEL_DIALECTS:
        if re.search(pattern, fixture.reference_model):
            prompt = generation_prompt(fixture, family)
            return Setup(dialect, prompt_opens_reasoning(prompt), prompt_opens_response(prompt))
    return None


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

    from canitoolcall.pytest_plugin import family_for

    results = []
    for fixture in load_fixtures(None, families=list(families) if families else None):
        family = family_for(fixture)
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
