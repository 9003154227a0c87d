"""The serving engines' streaming tool parsers (vLLM, SGLang) next to streamparse, per delta.

Run: pytest bench/test_bench_engines.py --benchmark-only      (install: bench/README.md)
A mixed stream per dialect (prose and 40 calls, ~10 KB, 4-character deltas), every parser timed through
``baselines.raw_api`` as `streamparse bench` does: StreamParser.feed itself, each engine's own streaming
call (vLLM's extract_tool_calls_streaming, SGLang's parse_stream_chunk) with what its serving layer
passes. Outside the clock, each parser's calls are checked against streamparse's parse of the whole text.
Each engine's test skips with one line when that engine is not installed.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

from streamparse import parse
from streamparse.harness.baselines import PARSERS, raw_api
from streamparse.harness.engines import engine_comparators
from streamparse.harness.workloads import build_workload, split

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's own, when the engines import it

PARSERS_BY_DIALECT = {
    "hermes": ["streamparse", "vllm:hermes", "sglang:qwen25", "sglang:hermes"],
    "qwen3_coder": ["streamparse", "vllm:qwen3_coder", "sglang:qwen3_coder"],
}


def _factory(parser: str, dialect: str) -> Any:
    if parser in PARSERS:
        return PARSERS[parser]
    engine = parser.split(":")[0]
    if importlib.util.find_spec(engine) is None:
        pytest.skip(f"{engine} not installed (bench/README.md: installing the engine comparators)")
    sessions, notes = engine_comparators(dialect)
    assert parser in sessions, notes
    return sessions[parser]


def _run(factory: Any, tools: Any, deltas: list[str]) -> Any:
    feed, close = raw_api(factory(tools))
    for delta in deltas:
        feed(delta)
    return close()


def _calls(factory: Any, tools: Any, deltas: list[str]) -> list[tuple[str, Any]]:
    session = factory(tools)
    calls = [c for d in deltas for c in session.feed(d)[1]] + session.close()[1]
    return [(name, json.loads(arguments)) for name, arguments in calls]


@pytest.mark.parametrize("dialect,parser", [(d, p) for d, ps in PARSERS_BY_DIALECT.items() for p in ps])
def test_mixed_stream(benchmark, dialect: str, parser: str) -> None:
    factory = _factory(parser, dialect)
    workload = build_workload(f"dialect:{dialect}", calls=40)
    deltas = split(workload.text, 4)
    benchmark(_run, factory, workload.tools, deltas)
    if benchmark.stats:  # None under --benchmark-disable
        mean = benchmark.stats.stats.mean
        benchmark.extra_info.update(chars=len(workload.text), deltas=len(deltas),
                                    us_per_delta=round(mean / len(deltas) * 1e6, 3),
                                    MB_per_s=round(len(workload.text) / mean / 1e6, 2))
    expected = [(c.name, json.loads(c.arguments)) for c in parse(workload.text, workload.tools).tool_calls]
    assert len(expected) == 40
    assert _calls(factory, workload.tools, deltas) == expected
