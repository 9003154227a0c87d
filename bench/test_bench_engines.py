"""The serving engines' streaming tool parsers (vLLM, SGLang) next to streamparse, per delta, on every format
both parse.

Run: pytest bench/test_bench_engines.py --benchmark-only      (install: bench/README.md)
Two streams per format: the engines group's mixed stream (``mixed:NAME``: prose, a call, three calls at once, a
2 KB argument; ~3 KB) and, for hermes and qwen3_coder, a longer one (``dialect:NAME``, prose and 40 calls,
~10 KB). 4-character deltas that keep the model's special tokens whole (``benchmark.deltas_for``). Every parser
is timed through ``baselines.raw_api`` as `streamparse bench` does: StreamParser.feed itself, each engine's own
streaming call (vLLM's extract_tool_calls_streaming, SGLang's parse_stream_chunk) with what its serving layer
passes. Outside the clock, streamparse's calls are checked against its parse of the whole text, and so are an
engine's where it gets them all (``MISSES`` in tests/harness/test_engines_formats.py lists the others).
Each engine's test skips with one line when that engine is not installed.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

from streamparse import parse
from streamparse.harness.baselines import PARSERS, raw_api
from streamparse.harness.benchmark import deltas_for
from streamparse.harness.engines import COMPARATORS, engine_comparators
from streamparse.harness.workloads import build_workload

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's own, when the engines import it

CASES = [(f"mixed:{d}", p) for d, pairs in COMPARATORS.items() for p in ["streamparse", *(f"{e}:{n}" for e, n in pairs)]]
CASES += [(f"dialect:{d}", p) for d in ("hermes", "qwen3_coder")
          for p in ["streamparse", *(f"{e}:{n}" for e, n in COMPARATORS[d])]]


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


def _loads(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments  # not JSON (an engine that missed): compared as written, so it differs


def _calls(factory: Any, tools: Any, deltas: list[str]) -> list[tuple[str, Any]]:
    session = factory(tools)
    calls = [c for d in deltas for c in session.feed(d)[1]] + session.close()[1]
    return [(name, _loads(arguments)) for name, arguments in calls]


@pytest.mark.parametrize("scenario,parser", CASES)
def test_engine_stream(benchmark: Any, scenario: str, parser: str) -> None:
    dialect = scenario.split(":", 1)[1]
    factory = _factory(parser, dialect)
    workload = build_workload(scenario, calls=40)
    deltas = deltas_for(workload)
    expected = [(c.name, json.loads(c.arguments)) for c in parse(workload.text, workload.tools).tool_calls]
    try:
        calls = _calls(factory, workload.tools, deltas)
    except Exception as exc:  # noqa: BLE001 - an engine parser that breaks on this stream is not timed
        pytest.skip(f"{parser} fails on {scenario}: {type(exc).__name__}: {exc}")
    benchmark(_run, factory, workload.tools, deltas)
    if benchmark.stats:  # None under --benchmark-disable
        mean = benchmark.stats.stats.mean
        benchmark.extra_info.update(chars=len(workload.text), deltas=len(deltas),
                                    us_per_delta=round(mean / len(deltas) * 1e6, 3),
                                    MB_per_s=round(len(workload.text) / mean / 1e6, 2),
                                    calls_right=sum(c == e for c, e in zip(calls, expected)),
                                    calls_expected=len(expected))
    assert len(expected) == (5 if scenario.startswith("mixed:") else 40)
    if parser == "streamparse":
        assert calls == expected
