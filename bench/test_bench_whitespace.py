"""A long run of spaces inside a string argument: the cost must grow linearly with the run.

Run: python -m pytest bench/test_bench_whitespace.py --benchmark-only -p no:cacheprovider -s

Each shape is timed at two run lengths, N and 2N; the printed ratio (time at 2N / time at N) should
stay near 2 (linear). The shapes cover every path a long string takes: strict JSON, JSON that needs
repair (single quotes, a trailing comma: the relaxed grammar and ``close_open_brackets``), an XML-style
value streamed with ``stream_arguments=True`` in 7-character deltas (``stream_tags._LayoutValue``
holds trailing whitespace), and a streamed JSON string.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import pytest

from streamparse import StreamParser
from streamparse.harness.examples import EXAMPLE_TOOLS

RUN = 100_000
STEP = 7

SHAPES: dict[str, tuple[str, bool, int]] = {  # name: (template with @ for the run, stream_arguments, delta size)
    "json_strict": ('<tool_call>{"name": "write_file", "arguments": {"path": "a", "content": "a@b"}}</tool_call>',
                    False, 0),
    "json_single_quotes": ("<tool_call>{'name': 'write_file', 'arguments': {'path': 'a', 'content': 'a@b'}}</tool_call>",
                           False, 0),
    "json_trailing_comma": ('<tool_call>{"name": "write_file", "arguments": {"path": "a", "content": "a@b",}}'
                            "</tool_call>", False, 0),
    "json_streamed": ('<tool_call>{"name": "write_file", "arguments": {"path": "a", "content": "a@b"}}</tool_call>',
                      True, STEP),
    "qwen3_streamed": ("<tool_call>\n<function=write_file>\n<parameter=path>\na\n</parameter>\n<parameter=content>\na@b\n"
                       "</parameter>\n</function>\n</tool_call>", True, STEP),
    "glm45_streamed": ("<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>a</arg_value>\n<arg_key>content"
                       "</arg_key>\n<arg_value>a@b</arg_value>\n</tool_call>", True, STEP),
}


def _run(text: str, stream: bool, step: int) -> Callable[[], int]:
    deltas = [text[i : i + step] for i in range(0, len(text), step)] if step else [text]

    def go() -> int:
        parser = StreamParser(EXAMPLE_TOOLS, stream_arguments=stream)
        n = sum(len(parser.feed(d)) for d in deltas)
        return n + len(parser.close())

    return go


def _best(fn: Callable[[], Any], repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_long_space_run_in_a_string(benchmark: Any, shape: str) -> None:
    template, stream, step = SHAPES[shape]
    single = _run(template.replace("@", " " * RUN), stream, step)
    double = _run(template.replace("@", " " * (2 * RUN)), stream, step)
    ratio = _best(double) / _best(single)
    benchmark.extra_info["ratio_2n_over_n"] = round(ratio, 2)
    print(f"\n{shape}: time(2N)/time(N) = {ratio:.2f} (N = {RUN} spaces)")
    benchmark(double)
