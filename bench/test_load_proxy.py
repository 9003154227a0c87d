"""Load test of ``streamparse serve`` (real processes on loopback), not part of the test command.

Run: pytest bench/test_load_proxy.py --benchmark-only -s
Each scenario asserts that every stream arrived complete and identical to the
single-request result (run_load raises otherwise) and records its figures in
the benchmark's extra_info (and prints them).
"""

from __future__ import annotations

import json

import pytest

from streamparse.loadtest import run_load


@pytest.mark.parametrize("concurrency,token_delay", [(1, 0.02), (200, 0.02), (200, 0.0)])
def test_proxy_under_load(benchmark, concurrency: int, token_delay: float) -> None:
    figures = benchmark.pedantic(run_load, args=(concurrency, token_delay), rounds=1, iterations=1)
    benchmark.extra_info.update({k: round(v, 2) if isinstance(v, float) else v for k, v in figures.items()})
    print(json.dumps(benchmark.extra_info, indent=1))
    assert figures["calls_per_stream"] == 3
