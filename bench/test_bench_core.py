"""Core throughput: feed generated streams token by token (4-character deltas).

Run: pytest bench/ --benchmark-only   (not part of the test command)
"""

from __future__ import annotations

import pytest

import streamparse as sp
from workloads import PROSE, PROSE_WITH_MARKUP, TOOLS, deltas, hermes_write, qwen3_write, tool_heavy


def _run(pieces: list[str]) -> int:
    parser = sp.StreamParser(TOOLS)
    n = 0
    for piece in pieces:
        n += len(parser.feed(piece))
    return n + len(parser.close())


def _bench(benchmark, text: str) -> None:
    pieces = deltas(text, 4)
    benchmark.extra_info["chars"] = len(text)
    benchmark.extra_info["deltas"] = len(pieces)
    benchmark(_run, pieces)
    mean = benchmark.stats.stats.mean
    benchmark.extra_info["us_per_delta"] = round(mean / len(pieces) * 1e6, 3)
    benchmark.extra_info["MB_per_s"] = round(len(text) / mean / 1e6, 2)


def test_plain_text(benchmark) -> None:
    _bench(benchmark, PROSE)


def test_prose_with_html_and_comparisons(benchmark) -> None:
    _bench(benchmark, PROSE_WITH_MARKUP)


def test_tool_heavy(benchmark) -> None:
    _bench(benchmark, tool_heavy())


@pytest.mark.parametrize("kb", [1, 4, 16, 64, 256])
def test_hermes_argument_scaling(benchmark, kb: int) -> None:
    _bench(benchmark, hermes_write(kb * 1024))


@pytest.mark.parametrize("kb", [1, 4, 16, 64, 256])
def test_qwen3_argument_scaling(benchmark, kb: int) -> None:
    _bench(benchmark, qwen3_write(kb * 1024))
