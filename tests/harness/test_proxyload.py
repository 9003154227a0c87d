"""The proxy load test's table is one load measured by the proxy cost run: every figure it printed as a run of
its own is read from that load's cost figures, under the same name; ``bench --proxy`` runs that load first,
without LiteLLM, and prints its table before the cost loads start."""

from __future__ import annotations

import argparse
import io
from typing import Any

import pytest

from streamparse.cli import _bench_proxy
from streamparse.harness import loadtest, proxycost
from streamparse.harness.proxycost import LOADS, PACE, cost_legend, cost_table, load_label, run_costs
from streamparse.harness.proxyload import FIGURES, load_figures, load_table, workers_table

PRINTED = [  # the load test's lines, in order, as bench --proxy printed them when it was a run of its own
    "concurrency", "token_delay_s", "calls_per_stream", "chunks_per_stream_upstream", "chunks_per_stream_proxy",
    "proxy_requests_per_s", "proxy_chunks_per_s", "direct_requests_per_s", "direct_chunks_per_s",
    "bare_requests_per_s", "latency_ms_direct_p50", "latency_ms_direct_p99", "latency_ms_proxy_p50",
    "latency_ms_proxy_p99", "added_latency_ms_p50", "added_latency_ms_p99", "proxy_peak_rss_mib",
    "proxy_cpu_us_per_upstream_chunk", "bare_cpu_us_per_upstream_chunk", "cpu_per_chunk_ratio_to_bare",
    "mean_latency_ms_proxy"]


def _costs(label: str) -> dict[str, Any]:
    """Cost figures of one load, each target's value telling which figure it is."""
    figures: dict[str, Any] = {}
    for n, target in enumerate(("direct", "bare", "streamparse")):
        name = f"{label}_{target}"
        figures.update({f"{name}_chunks_per_stream": 100 + n, f"{name}_chunks_per_s": 1000.0 + n,
                        f"{name}_calls_per_stream": 3, f"{name}_requests_per_s": 10.0 + n,
                        f"{name}_latency_ms_p50": 20.0 + n, f"{name}_latency_ms_p99": 40.0 + 2 * n,
                        f"{name}_latency_ms_mean": 25.0 + n})
        if target != "direct":
            figures.update({f"{name}_cpu_us_per_chunk": 30.0 * n, f"{name}_peak_rss_mib": 80.0 + n})
    figures[f"{label}_cpu_ratio_streamparse_to_bare"] = 2.0
    return figures


def test_every_printed_figure_is_read_from_its_load_under_its_old_name() -> None:
    assert [name for name, *_ in FIGURES] == PRINTED
    label = load_label(200, 0.02)
    figures = load_figures({**_costs(label), **_costs("c20_paced")}, 200, 0.02)
    assert list(figures) == PRINTED
    assert (figures["concurrency"], figures["token_delay_s"], figures["calls_per_stream"]) == (200, 0.02, 3)
    assert (figures["chunks_per_stream_upstream"], figures["chunks_per_stream_proxy"]) == (100, 102)
    assert figures["proxy_requests_per_s"] == 12.0 and figures["bare_requests_per_s"] == 11.0
    assert figures["added_latency_ms_p50"] == 2.0 and figures["added_latency_ms_p99"] == 4.0
    assert figures["proxy_cpu_us_per_upstream_chunk"] == 60.0 and figures["bare_cpu_us_per_upstream_chunk"] == 30.0
    assert figures["cpu_per_chunk_ratio_to_bare"] == 2.0 and figures["proxy_peak_rss_mib"] == 82.0
    assert figures["mean_latency_ms_proxy"] == 27.0
    lines = load_table(figures)
    assert [line.split()[0] for line in lines] == PRINTED
    assert lines[0].split()[1:3] == ["200", "streams"] and lines[2].split()[1:3] == ["3", "calls"]


def test_a_load_is_named_by_its_pace_and_the_legend_says_each() -> None:
    assert [load_label(s, d) for s, d in LOADS] == ["c1_paced", "c20_paced", "c20_unpaced"]
    assert load_label(20, 0.02) == "c20_paced20ms" != load_label(20, PACE)
    legend = cost_legend(LOADS + ((200, 0.02),))
    assert "  c200_paced20ms: 200 streams at once, upstream paced at 20 ms per token" in legend


def test_a_load_run_without_litellm_feeds_the_load_test_and_the_cost_table() -> None:
    lines: list[str] = []
    costs = run_costs(((3, 0.001),), rounds=1, litellm=False, log=lines.append)
    figures = load_figures(costs, 3, 0.001)
    assert figures["concurrency"] == 3 and figures["calls_per_stream"] > 0
    assert figures["chunks_per_stream_upstream"] > 0 and figures["proxy_peak_rss_mib"] > 0
    assert figures["proxy_cpu_us_per_upstream_chunk"] > 0 and figures["bare_cpu_us_per_upstream_chunk"] > 0
    assert len(lines) == 1 and "litellm" not in lines[0]  # its one load's line; LiteLLM not even looked for
    assert not any("litellm" in key for key in costs)
    rows = [line.split()[:2] for line in cost_table(costs)]
    assert rows[1:4] == [["c3_paced1ms", "direct"], ["c3_paced1ms", "bare"], ["c3_paced1ms", "streamparse"]]


def test_bench_proxy_prints_the_load_test_before_the_cost_loads_start_and_leaves_litellm_out_of_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    runs: list[tuple[tuple[tuple[int, float], ...], int, bool, str]] = []

    def fake_run_costs(loads: tuple[tuple[int, float], ...], rounds: int = 2, litellm: bool = True,
                       log: Any = print) -> dict[str, Any]:
        runs.append((loads, rounds, litellm, out.getvalue()))  # what was printed when this run began
        figures: dict[str, Any] = {}
        for streams, delay in loads:
            figures.update(_costs(load_label(streams, delay)))
        return figures

    def fake_run_workers(concurrency: int, rounds: int = 3) -> dict[str, Any]:
        assert (concurrency, rounds) == (200, 4)
        return WORKERS

    monkeypatch.setattr(proxycost, "run_costs", fake_run_costs)
    monkeypatch.setattr(loadtest, "run_workers", fake_run_workers)
    headline: dict[str, float] = {}
    _bench_proxy(argparse.Namespace(proxy_concurrency=200, proxy_delay=0.02, proxy_rounds=3), headline, out)
    assert [run[:3] for run in runs] == [(((200, 0.02),), 3, False), (LOADS, 3, True)]
    assert runs[0][3] == ""
    assert "== proxy load test" in runs[1][3] and "proxy_cpu_us_per_upstream_chunk" in runs[1][3]
    assert "== proxy workers" in runs[1][3] and "throughput ratio 2 to 1 workers: 1.83x" in runs[1][3]
    assert headline["proxy_throughput_ratio_2_to_1_workers"] == 1.83
    assert headline["proxy_concurrency"] == 200 and headline["proxy_cost_c200_paced20ms_bare_requests_per_s"] == 11.0
    cost = out.getvalue().split("== proxy cost")[1].splitlines()
    loads = [line.split()[0] for line in cost if line.startswith("c") and line.split()[1:2] == ["streamparse"]]
    assert loads == ["c1_paced", "c20_paced", "c20_unpaced", "c200_paced20ms"]  # the load test's load last


WORKERS = {"concurrency": 200, "rounds": 4, "requests_per_client": 5, "workers_1_processes": 1,
           "workers_2_processes": 4, "workers_1_requests_per_s": 182.64, "workers_1_proxy_cpu_ms_per_request": 5.46,
           "workers_1_upstream_cpu_ms_per_request": 0.13, "workers_1_client_cpu_ms_per_request": 0.26,
           "workers_1_proxy_cores": 1.0, "workers_2_requests_per_s": 334.82, "workers_2_proxy_cpu_ms_per_request": 5.24,
           "workers_2_upstream_cpu_ms_per_request": 0.14, "workers_2_client_cpu_ms_per_request": 0.3,
           "workers_2_proxy_cores": 1.75, "throughput_ratio_2_to_1_workers": 1.83}


def test_the_workers_table_has_a_row_per_worker_count_and_the_ratio() -> None:
    lines = workers_table(WORKERS)
    assert lines[0].split() == ["workers", "req/s", "proxy", "cores", "proxy", "ms/req", "client+upstream", "ms/req"]
    assert lines[1].split() == ["1", "182.6", "1.00", "5.46", "0.39"]
    assert lines[2].split() == ["2", "334.8", "1.75", "5.24", "0.44"]
    assert lines[3] == "throughput ratio 2 to 1 workers: 1.83x"
