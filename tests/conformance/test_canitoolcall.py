"""canitoolcall (issue 30): the third-party conformance suite the engines are measured by, run through streamparse.

Every fixture is parsed as an operator would configure its model (``harness.conformance.MODELS``): through the
library and through the OpenAI chunk layer the proxy runs, whole and streamed at the suite's chunkings plus
character-level ones, and judged by the suite's own ``assert_conforms`` (soft: whitespace around text may differ).
Every stream must equal the whole parse exactly. The fixtures whose prompt opens reasoning or a response channel,
and a sample of every family, also go through ``streamparse``'s proxy over HTTP with the openai client.

The fixtures listed in ``POLICY`` are read otherwise than the suite wants, on purpose: docs/dialects.md argues each.
They are checked to still fail the suite's reading (so a change of behaviour is seen) and to still stream exactly.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Iterator

import pytest
from canitoolcall.chunking import DEFAULT_STRATEGIES, ChunkStrategy
from canitoolcall.fixtures import Fixture, load_fixtures
from canitoolcall.pytest_plugin import assert_conforms, assert_equivalent, family_for
from canitoolcall.results import ParsedToolCall, ParseResult
from openai import OpenAI

from streamparse.harness.conformance import LAYERS, MODELS, model_for, prompt_setup, replay, request_for, run, setup_for
from streamparse.harness.replay import Answer, create_replay_app
from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ProxyConfig
from streamparse.proxy.runner import ServerThread

# Character-level cuts too: they split special tokens, which no engine does, so the suite does not count them;
# streamparse promises the same result for any chunking, so they are checked here.
STRATEGIES = (*DEFAULT_STRATEGIES, *(ChunkStrategy("char", seed=s) for s in range(3)))

POLICY = {
    "deepseek/vllm-v3-malformed-missing-brace": "a call whose JSON lacks only its final brace, inside a call the "
                                                "model closed, is repaired and reported",
    "gpt-oss/llamacpp-builtin-python-recipient": "a message to a built-in tool (python) that was not offered stays "
                                                 "text, reported, like any unknown tool",
    "kimi/k2i-vllm-noise-between-markers": "text inside a tool section that is not a call is kept as text, reported",
}


def _check(fixture: Fixture, layer: str) -> None:
    family = family_for(fixture)
    setup = setup_for(fixture, family)
    assert setup is not None, f"no model row for {fixture.reference_model}"
    got = replay(fixture, family, setup, layer, STRATEGIES)
    for strategy, stream in got.streams.items():
        try:
            assert_equivalent(got.nonstream, stream)
        except AssertionError as exc:
            raise AssertionError(f"{fixture.id}: stream {strategy} differs from the whole parse\n{exc}") from None
    if fixture.id in POLICY:
        with pytest.raises(AssertionError):
            assert_conforms(fixture, got.nonstream, soft=True)
        return
    assert_conforms(fixture, got.nonstream, soft=True)


def test_the_library_conforms(canitoolcall_fixture: Fixture) -> None:
    _check(canitoolcall_fixture, "library")


def test_the_openai_layer_conforms(canitoolcall_fixture: Fixture) -> None:
    _check(canitoolcall_fixture, "openai")


@pytest.mark.parametrize("layer", LAYERS)
def test_totals_as_the_suite_counts_them(layer: str) -> None:
    """At least 460 of 469 pass or soft-pass, the suite's own count (its realistic strategies, its checks), and
    what fails is exactly the argued policy."""
    results = run(layer)
    statuses = Counter(r.status.value for r in results)
    assert len(results) == 469
    assert statuses["pass"] + statuses["soft_pass"] >= 460, statuses
    assert {r.fixture_id for r in results if r.status.value not in ("pass", "soft_pass")} == set(POLICY)


def test_the_operators_table_opens_what_each_fixtures_prompt_opens() -> None:
    """``reasoning_start`` / ``response_start`` per model, applied to the request's ask as the proxy applies them,
    start each answer where the fixture's own generation prompt left it."""
    for fixture in load_fixtures(None):
        setup = setup_for(fixture)
        assert setup is not None
        assert (setup.start_in_reasoning, setup.start_in_response) == prompt_setup(fixture, family_for(fixture)), \
            fixture.id


# ---------------------------------------------------------------- through the proxy, over HTTP

def _over_http() -> list[Fixture]:
    """Every fixture whose prompt opens a span, and the first four of every family (policy ones left out)."""
    fixtures = [f for f in load_fixtures(None) if f.id not in POLICY]
    first: Counter[str] = Counter()
    chosen = []
    for f in fixtures:
        setup = setup_for(f)
        assert setup is not None
        if setup.start_in_reasoning or setup.start_in_response or first[f.family] < 4:
            chosen.append(f)
            first[f.family] += 1
    return chosen


HTTP_FIXTURES = _over_http()


@pytest.fixture(scope="module")
def proxy() -> Iterator[str]:
    """One proxy with a backend per model row, in front of a replay upstream that answers each request with the
    fixture its user message names (cut off by max tokens when the fixture was)."""
    by_id = {f.id: f for f in HTTP_FIXTURES}

    def script(body: dict[str, Any], _choice: int) -> str:
        fixture = by_id[body["messages"][-1]["content"]]
        return Answer(fixture.raw_output, "length" if fixture.truncated else "stop")

    with ServerThread(create_replay_app(script)) as upstream:
        backends = [Backend(name=f"row{i}", upstream=upstream.url + "/v1", dialects=[m.dialect],
                            reasoning_start=m.reasoning_start, response_start=m.response_start,
                            models=sorted({f.reference_model for f in HTTP_FIXTURES if model_for(f) is m}), default=i == 0)
                    for i, m in enumerate(MODELS)]
        with ServerThread(create_app(ProxyConfig(backends=[b for b in backends if b.models or b.default]))) as server:
            yield server.url


def _through(base: str, fixture: Fixture, stream: bool) -> ParseResult:
    client = OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0, timeout=30)
    request: dict[str, Any] = {"model": fixture.reference_model, "tools": list(fixture.tools),
                               "messages": [{"role": "user", "content": fixture.id}]}
    extra = request_for(fixture)
    if not stream:
        message = client.chat.completions.create(**request, extra_body=extra).choices[0].message
        calls = tuple(ParsedToolCall(c.function.name, c.function.arguments)  # type: ignore[union-attr]
                      for c in message.tool_calls or [])
        return ParseResult(message.content or None, getattr(message, "reasoning_content", None) or None, calls)
    text, reasoning, pieces = [], [], {}  # type: ignore[var-annotated]
    for chunk in client.chat.completions.create(**request, extra_body=extra, stream=True):
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            reasoning.append(getattr(choice.delta, "reasoning_content", None) or "")
            for piece in choice.delta.tool_calls or []:
                name, args = pieces.get(piece.index, ("", ""))
                pieces[piece.index] = (name + (piece.function.name or ""),  # type: ignore[union-attr]
                                       args + (piece.function.arguments or ""))  # type: ignore[union-attr]
    calls = tuple(ParsedToolCall(n, a) for n, a in pieces.values())
    return ParseResult("".join(text) or None, "".join(reasoning) or None, calls)


@pytest.mark.parametrize("fixture", HTTP_FIXTURES, ids=[f.id for f in HTTP_FIXTURES])
def test_through_the_proxy_over_http(proxy: str, fixture: Fixture) -> None:
    streamed, whole = _through(proxy, fixture, True), _through(proxy, fixture, False)
    assert_conforms(fixture, streamed, soft=True)
    assert_conforms(fixture, whole, soft=True)
    for result in (streamed, whole):
        for call in result.tool_calls:
            json.loads(call.arguments_raw or "")  # what a client parses


def test_the_docs_show_the_operators_table() -> None:
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "dialects.md").read_text(encoding="utf-8")
    for m in MODELS:
        row = f"| {m.name} | `{m.dialect}` | `{m.reasoning_start}` | {'true' if m.response_start else 'false'} |"
        assert row in doc, row


def test_the_conformance_command_counts_as_the_suite_does(capsys: pytest.CaptureFixture[str]) -> None:
    from streamparse.cli import main

    assert main(["conformance", "--family", "kimi", "--failures"]) == 0
    out = capsys.readouterr().out
    assert "pass or soft pass: 48 of 49" in out and "kimi/k2i-vllm-noise-between-markers" in out
    assert main(["conformance", "--family", "qwen3-xm"]) == 2
    assert "did you mean 'qwen3-xml'?" in capsys.readouterr().err
