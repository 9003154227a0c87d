"""pytest-benchmark suite over the harness's workloads (4-character deltas).

Run: pytest bench/ --benchmark-only        (not part of the test command)
The same workloads drive `streamparse bench`, which adds baselines, latency, memory and the
correctness check. Every parser is timed through ``baselines.raw_api`` (StreamParser.feed itself,
the floor's bare search), as `streamparse bench` does, so their figures compare.
"""

from __future__ import annotations

from typing import Any

import pytest

from streamparse.harness.baselines import raw_api
from streamparse.harness.benchmark import NAIVE_MAX_CHARS, PARSERS, RENDERERS, SCALING_KB, build_workload, split


def _run(factory, tools, deltas: list[str]) -> Any:
    feed, close = raw_api(factory(tools))
    for delta in deltas:
        feed(delta)
    return close()


def _calls(factory, tools, deltas: list[str]) -> int:
    session = factory(tools)
    return sum(len(session.feed(d)[1]) for d in deltas) + len(session.close()[1])


def _bench(benchmark, scenario: str, parser: str = "streamparse", factory=None) -> None:
    workload = build_workload(scenario)
    if parser == "naive" and len(workload.text) > NAIVE_MAX_CHARS:
        pytest.skip(f"naive is quadratic: skipped above {NAIVE_MAX_CHARS // 1024} KB")
    factory = factory or PARSERS[parser]
    deltas = split(workload.text, 4)
    if parser in PARSERS:
        benchmark(_run, factory, workload.tools, deltas)
    else:  # an engine: one round (some take tens of seconds on the agent workloads)
        benchmark.pedantic(_run, (factory, workload.tools, deltas), rounds=1, iterations=1, warmup_rounds=0)
    if benchmark.stats:  # None under --benchmark-disable
        mean = benchmark.stats.stats.mean
        benchmark.extra_info.update(chars=len(workload.text), deltas=len(deltas),
                                    us_per_delta=round(mean / len(deltas) * 1e6, 3),
                                    MB_per_s=round(len(workload.text) / mean / 1e6, 2))
    if parser == "streamparse":
        assert _calls(factory, workload.tools, deltas) == len(workload.call_ends)


@pytest.mark.parametrize("parser", ["streamparse", "floor", "identity"])
def test_prose(benchmark, parser: str) -> None:
    _bench(benchmark, "prose", parser)


@pytest.mark.parametrize("parser", ["streamparse", "floor", "naive"])
def test_tool_heavy(benchmark, parser: str) -> None:
    _bench(benchmark, "tool_heavy", parser)


@pytest.mark.parametrize("dialect", sorted(RENDERERS))
def test_dialect(benchmark, dialect: str) -> None:
    _bench(benchmark, f"dialect:{dialect}")


@pytest.mark.parametrize("kb", SCALING_KB)
@pytest.mark.parametrize("dialect", ["hermes", "qwen3_coder"])
def test_argument_scaling(benchmark, dialect: str, kb: int) -> None:
    _bench(benchmark, f"args:{dialect}:{kb}")


def _engines(dialect: str) -> list[str]:
    from streamparse.harness.engines import engine_comparators

    return sorted(engine_comparators(dialect)[0])


@pytest.mark.parametrize("parser", ["streamparse", "floor", *_engines("hermes")])
def test_agent_hermes(benchmark, parser: str) -> None:
    from streamparse.harness.engines import engine_comparators

    _bench(benchmark, "agent:hermes", parser, PARSERS.get(parser) or engine_comparators("hermes")[0][parser])


@pytest.mark.parametrize("parser", ["streamparse", "floor", *_engines("qwen3_coder")])
def test_agent_qwen3_coder(benchmark, parser: str) -> None:
    from streamparse.harness.engines import engine_comparators

    _bench(benchmark, "agent:qwen3_coder", parser,
           PARSERS.get(parser) or engine_comparators("qwen3_coder")[0][parser])
