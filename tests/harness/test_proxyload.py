"""The proxy load test's table is one load of the proxy cost run (``bench --proxy`` starts the servers once):
every figure it printed as a run of its own is read from that load's cost figures, under the same name."""

from __future__ import annotations

from typing import Any

from streamparse.harness.proxycost import LOADS, PACE, cost_legend, cost_table, load_label, run_costs
from streamparse.harness.proxyload import FIGURES, load_figures, load_table

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


def test_one_cost_run_feeds_the_load_test_and_the_cost_table() -> None:
    lines: list[str] = []
    costs = run_costs(((1, 0.0),), rounds=1, litellm=False, without_litellm=((3, 0.001),), log=lines.append)
    figures = load_figures(costs, 3, 0.001)
    assert figures["concurrency"] == 3 and figures["calls_per_stream"] > 0
    assert figures["chunks_per_stream_upstream"] > 0 and figures["proxy_peak_rss_mib"] > 0
    assert figures["proxy_cpu_us_per_upstream_chunk"] > 0 and figures["bare_cpu_us_per_upstream_chunk"] > 0
    assert len(lines) == 2  # one log line per load, the load test's last
    rows = [line.split()[:2] for line in cost_table(costs)]
    assert ["c3_paced1ms", "streamparse"] in rows and ["c1_unpaced", "streamparse"] in rows
