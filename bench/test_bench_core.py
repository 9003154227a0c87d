"""pytest-benchmark suite over the harness's workloads (4-character deltas).

Run: pytest bench/ --benchmark-only        (not part of the test command)
The same workloads drive `streamparse bench`, which adds baselines, latency and memory.
"""

from __future__ import annotations

import pytest

from streamparse.benchmark import PARSERS, RENDERERS, SCALING_KB, build_workload, split


def _run(factory, tools, deltas: list[str]) -> int:
    session = factory(tools)
    n = 0
    for delta in deltas:
        n += len(session.feed(delta)[1])
    return n + len(session.close()[1])


def _bench(benchmark, scenario: str, parser: str = "streamparse") -> None:
    workload = build_workload(scenario)
    deltas = split(workload.text, 4)
    calls = benchmark(_run, PARSERS[parser], workload.tools, deltas)
    if benchmark.stats:  # None under --benchmark-disable
        mean = benchmark.stats.stats.mean
        benchmark.extra_info.update(chars=len(workload.text), deltas=len(deltas), calls=calls,
                                    us_per_delta=round(mean / len(deltas) * 1e6, 3),
                                    MB_per_s=round(len(workload.text) / mean / 1e6, 2))
    if parser == "streamparse":
        assert calls == len(workload.call_ends)


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
