"""The proxy load test's table (``streamparse bench --proxy``, ``bench/test_load_proxy.py``): many streams through
``streamparse serve`` against the upstream read directly, as figures of one load measured by the proxy cost run
(``proxycost.run_costs``, without LiteLLM), the same way as the cost table's (CPU of the proxy's process tree from
schedstat); its rows also stand in the cost table.

Invariant: each figure's name, unit, meaning and the cost figure it is read from stand in one row of
``FIGURES`` (the one source of all four); ``load_figures`` gives every row, in that order, and ``load_table``
prints each with its unit and meaning, counts as integers. Formatting and arithmetic only: nothing is measured here.
"""

from __future__ import annotations

from typing import Any, Callable

from .proxycost import load_label
from .table import fmt, lay_out

__all__ = ["FIGURES", "load_figures", "load_table", "workers_table"]

Read = Callable[[str], Any]  # a figure of the load by its name in the cost run, less the load's label

# (name, unit, a few words, how it is read from the load's figures); every figure is for the whole load
FIGURES: tuple[tuple[str, str, str, Callable[[Read], Any]], ...] = (
    ("concurrency", "streams", "requests in flight at once", lambda f: f("streams")),
    ("token_delay_s", "s", "upstream pace: seconds between tokens", lambda f: f("delay")),
    ("calls_per_stream", "calls", "tool calls in each answer", lambda f: f("streamparse_calls_per_stream")),
    ("chunks_per_stream_upstream", "chunks", "SSE chunks per answer, from the upstream",
     lambda f: f("direct_chunks_per_stream")),
    ("chunks_per_stream_proxy", "chunks", "SSE chunks per answer, through the proxy",
     lambda f: f("streamparse_chunks_per_stream")),
    ("proxy_requests_per_s", "req/s", "answers completed per second, through the proxy",
     lambda f: f("streamparse_requests_per_s")),
    ("proxy_chunks_per_s", "chunks/s", "SSE chunks per second, through the proxy",
     lambda f: f("streamparse_chunks_per_s")),
    ("direct_requests_per_s", "req/s", "answers per second, upstream read directly",
     lambda f: f("direct_requests_per_s")),
    ("direct_chunks_per_s", "chunks/s", "SSE chunks per second, upstream directly", lambda f: f("direct_chunks_per_s")),
    ("bare_requests_per_s", "req/s", "answers per second, proxy without tools", lambda f: f("bare_requests_per_s")),
    ("latency_ms_direct_p50", "ms", "chunk sent upstream to received: direct, median",
     lambda f: f("direct_latency_ms_p50")),
    ("latency_ms_direct_p99", "ms", "the same, direct, 99th percentile", lambda f: f("direct_latency_ms_p99")),
    ("latency_ms_proxy_p50", "ms", "the same, through the proxy, median", lambda f: f("streamparse_latency_ms_p50")),
    ("latency_ms_proxy_p99", "ms", "the same, through the proxy, 99th percentile",
     lambda f: f("streamparse_latency_ms_p99")),
    ("added_latency_ms_p50", "ms", "proxy median chunk latency less direct's",
     lambda f: f("streamparse_latency_ms_p50") - f("direct_latency_ms_p50")),
    ("added_latency_ms_p99", "ms", "proxy p99 chunk latency less direct's",
     lambda f: f("streamparse_latency_ms_p99") - f("direct_latency_ms_p99")),
    ("proxy_peak_rss_mib", "MiB", "proxy process's peak resident memory", lambda f: f("streamparse_peak_rss_mib")),
    ("proxy_cpu_us_per_upstream_chunk", "µs", "proxy CPU per upstream chunk, parsing",
     lambda f: f("streamparse_cpu_us_per_chunk")),
    ("bare_cpu_us_per_upstream_chunk", "µs", "proxy CPU per upstream chunk, no tools",
     lambda f: f("bare_cpu_us_per_chunk")),
    ("cpu_per_chunk_ratio_to_bare", "×", "the two lines above, divided", lambda f: f("cpu_ratio_streamparse_to_bare")),
    ("mean_latency_ms_proxy", "ms", "per-chunk latency through the proxy, mean",
     lambda f: f("streamparse_latency_ms_mean")),
)


def load_figures(costs: dict[str, Any], streams: int, delay: float) -> dict[str, Any]:
    """The load test's figures, read from the cost run's figures of the load ``(streams, delay)``."""
    label = load_label(streams, delay)
    own = {"streams": streams, "delay": delay}

    def read(name: str) -> Any:
        return own[name] if name in own else costs[f"{label}_{name}"]

    return {name: how(read) for name, _, _, how in FIGURES}


def load_table(figures: dict[str, Any]) -> list[str]:
    """The load test's figures, one line each: name, value (counts as integers), unit, and what it is."""
    labels = {name: (unit, meaning) for name, unit, meaning, _ in FIGURES}
    rows = []
    for key, value in figures.items():
        unit, meaning = labels.get(key, ("", ""))
        shown = f"{value:,}" if isinstance(value, int) else fmt(value, 3 if unit == "s" else 2) \
            if isinstance(value, float) else str(value)
        rows.append((key, shown, unit, meaning))
    return lay_out(rows, "lrll", least=(0, 10, 8))


def workers_table(figures: dict[str, Any]) -> list[str]:
    """``loadtest.run_workers``' figures as one row per worker count: requests/s, the proxy's cores, CPU per
    request (the proxy's, and the lean client's and upstream's beside it), then the throughput ratio."""
    counts = sorted({int(k.split("_")[1]) for k in figures
                     if k.startswith("workers_") and k.endswith("_requests_per_s")})
    rows = [("workers", "req/s", "proxy cores", "proxy ms/req", "client+upstream ms/req")]
    for n in counts:
        def f(name: str) -> Any:
            return figures[f"workers_{n}_{name}"]

        rows.append((str(n), fmt(f("requests_per_s"), 1), fmt(f("proxy_cores"), 2),
                     fmt(f("proxy_cpu_ms_per_request"), 2),
                     fmt(f("client_cpu_ms_per_request") + f("upstream_cpu_ms_per_request"), 2)))
    lines = lay_out(rows, "rrrrr")
    lines += [f"{key.replace('_', ' ')}: {value:.2f}x" for key, value in figures.items()
              if key.startswith("throughput_ratio")]
    return lines
