"""Load tests of ``streamparse serve`` (real processes on loopback), not part of the test command.

Run: pytest bench/test_load_proxy.py --benchmark-only -s
Each scenario checks that every stream arrived complete and identical to its
reference (the load functions raise LoadError otherwise) and records its figures in the
benchmark's extra_info (and prints them). Figures worth comparing are ratios
within one run: this machine is noisy.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest

from streamparse.harness.loadtest import run_fairness, run_workers
from streamparse.harness.proxycost import cost_table, run_costs
from streamparse.harness.proxyload import load_figures


def _record(benchmark: Any, fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    figures: dict[str, Any] = benchmark.pedantic(fn, args=args, rounds=1, iterations=1)
    benchmark.extra_info.update({k: round(v, 2) if isinstance(v, float) else v for k, v in figures.items()})
    print(json.dumps(benchmark.extra_info, indent=1))
    return figures


@pytest.mark.parametrize("concurrency,token_delay", [(1, 0.02), (200, 0.02), (200, 0.0)])
def test_proxy_under_load(benchmark: Any, concurrency: int, token_delay: float) -> None:
    """Latency added, throughput, and CPU per upstream chunk next to the bare pass-through: the load test's
    figures as ``bench --proxy`` gives them (one load of the cost run, without LiteLLM; CPU of the proxy's
    process tree from schedstat). run_costs raises LoadError unless every stream through streamparse is identical
    to its single-request result (calls included) and every bare stream to the direct one."""
    figures = _record(benchmark, _load_test, concurrency, token_delay)
    assert figures["concurrency"] == concurrency and figures["calls_per_stream"] == 3
    assert figures["proxy_cpu_us_per_upstream_chunk"] > 0 and figures["bare_cpu_us_per_upstream_chunk"] > 0


def _load_test(concurrency: int, token_delay: float) -> dict[str, Any]:
    load = (concurrency, token_delay)
    return load_figures(run_costs((load,), rounds=1, litellm=False), *load)


def test_streams_beside_a_one_megabyte_argument(benchmark: Any) -> None:
    """Other streams' inter-chunk p99 while one call writes a ~1 MB argument (decodes run off the loop)."""
    figures = _record(benchmark, run_fairness, 20, 0.02, 1_000_000)
    assert figures["big_argument_chars"] == 1_000_000


def test_one_worker_against_two(benchmark: Any) -> None:
    """Throughput of --workers 1 and --workers 2, both servers up and taking turns, on the lean client and
    upstream (``leanload``: they leave the cores to the proxy); every answer checked."""
    figures = _record(benchmark, run_workers, 200)
    assert figures["workers_2_processes"] >= 3  # the supervisor and its two workers (and any helper process)


def test_proxy_cost_beside_the_bare_pass_through_and_litellm(benchmark: Any) -> None:
    """CPU per upstream chunk, added time to first byte, per-chunk latency and throughput for direct, the bare
    pass-through, streamparse and (when installed) the LiteLLM proxy, on the same upstream and loads, turn by
    turn in one run (``STREAMPARSE_LITELLM`` may name a ``litellm`` installed in another environment)."""
    figures = _record(benchmark, run_costs)
    print("\n".join(cost_table(figures)))
    assert all(v > 0 for k, v in figures.items() if k.endswith("_cpu_us_per_chunk"))
