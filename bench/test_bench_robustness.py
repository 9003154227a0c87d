"""pytest-benchmark: the inputs that used to be quadratic are linear now.

Run: python -m pytest bench/test_bench_robustness.py --benchmark-only -q

Each hostile input is measured at two sizes (25k and 100k characters). The
100k run also records ``ratio_big_over_small`` = time(100k) / time(25k) in
``extra_info``, measured in the same process (best of several runs of each):
about 4 means linear, 16 would be quadratic. The prose runs compare the
per-delta cost with 10 tools and with 10,000 tools (``ratio_vs_10_tools``).
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable

import pytest

import streamparse as sp
from streamparse.harness.benchmark import build_workload, split
from streamparse.harness.examples import EXAMPLE_TOOLS

SMALL, BIG = 25_000, 100_000
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'


def _many_tools(n: int) -> list[dict[str, Any]]:
    extra = [{"type": "function", "function": {"name": f"tool_{i}", "parameters": {"type": "object", "properties": {}}}}
             for i in range(max(0, n - len(EXAMPLE_TOOLS)))]
    return EXAMPLE_TOOLS + extra


TOOLS_10K = _many_tools(10_000)


def _call_obj(i: int) -> str:
    return json.dumps({"name": "get_weather", "arguments": {"city": f"C{i}"}})


def _tools_array(n: int) -> str:
    text, i = "<tools>[1, ", 0
    parts = []
    while len(text) + sum(map(len, parts)) + 2 * len(parts) < n:
        parts.append(_call_obj(i))
        i += 1
    return text + ", ".join(parts) + "]</tools>"


def _name_tag_stream(n: int) -> str:
    unit = "Some prose <b>with</b> a < b and <tool_12 lookalikes, then <tool_9999>{\"a\": 1}</function>.\n"
    return (unit * (n // len(unit) + 1))[:n]


# name -> (build text of about n characters, tools, parser options)
INPUTS: dict[str, tuple[Callable[[int], str], Any, dict[str, Any]]] = {
    "opener_then_spaces": (lambda n: "<tool_call>" + " " * n, EXAMPLE_TOOLS, {}),
    "call_then_newlines": (lambda n: CALL + "\n" * n, EXAMPLE_TOOLS, {}),
    "fenced_string_spaces": (lambda n: "```json\n" + json.dumps(
        {"name": "get_weather", "arguments": {"city": "A" + " " * n + "B"}}) + "\n```\n", EXAMPLE_TOOLS, {}),
    "tools_array_non_call_then_calls": (_tools_array, EXAMPLE_TOOLS, {"max_calls": 10**6}),
    "name_tag_10k_tools": (_name_tag_stream, TOOLS_10K, {"max_calls": 10**6}),
    "deep_nesting_hermes": (lambda n: '<tool_call>{"name":"get_weather","arguments":{"a":'
                            + "[" * (n // 2) + "]" * (n // 2) + "}}</tool_call>", EXAMPLE_TOOLS, {}),
}


def _feed_all(parser: sp.StreamParser, deltas: list[str]) -> int:
    n = 0
    for d in deltas:
        n += len(parser.feed(d))
    return n + len(parser.close())


def _parse(tools: Any, options: dict[str, Any], text: str) -> int:
    return len(sp.parse(text, tools, **options).tool_calls)


class Job:
    """One measured run: ``setup()`` (not timed) returns the args of ``run`` (timed).

    Streams are timed from the first feed() to close(): building a parser is a
    per-stream constant (tens of ms for 10,000 tools: schemas are read) and is
    reported apart, so ratios show how the cost grows with the input alone.
    parse() is timed whole (it builds its parser).
    """

    def __init__(self, name: str, mode: str, n: int):
        build, self.tools, self.options = INPUTS[name]
        self.text = build(n)
        self.mode = mode
        self.deltas = split(self.text, 4)
        sp.StreamParser(self.tools, **self.options)  # the marker table is cached per tool set

    def setup(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if self.mode == "parse":
            return (self.tools, self.options, self.text), {}
        return (sp.StreamParser(self.tools, **self.options), self.deltas), {}

    def run(self, *args: Any) -> int:
        return _parse(*args) if self.mode == "parse" else _feed_all(*args)

    def once(self) -> float:
        args, _ = self.setup()
        t = time.perf_counter()
        self.run(*args)
        return time.perf_counter() - t

    def best(self, repeat: int = 7) -> float:
        return min(self.once() for _ in range(repeat))


def _construct_ms(tools: Any, options: dict[str, Any]) -> float:
    sp.StreamParser(tools, **options)
    t = time.perf_counter()
    sp.StreamParser(tools, **options)
    return round((time.perf_counter() - t) * 1e3, 3)


@pytest.mark.parametrize("size", [SMALL, BIG])
@pytest.mark.parametrize("mode", ["stream4", "parse"])
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_formerly_quadratic(benchmark, name: str, mode: str, size: int) -> None:
    job = Job(name, mode, size)
    benchmark.pedantic(job.run, setup=job.setup, rounds=10 if size == BIG else 20)
    info: dict[str, Any] = {"input": name, "mode": mode, "chars": len(job.text),
                            "construct_ms": _construct_ms(job.tools, job.options)}
    if size == BIG:
        small = Job(name, mode, SMALL)
        small.once()  # warm-up
        info["ratio_big_over_small"] = round(job.best() / small.best(), 2)
        info["size_ratio"] = round(len(job.text) / len(small.text), 2)
    benchmark.extra_info.update(info)


# ----------------------------------------------------------------------------- prose: 10 vs 10,000 tools

def _prose_with_lookalikes(n: int) -> str:
    unit = ("The model says a < b and x > y, shows <b>bold</b> and <tool_ids>, "
            "writes [brackets] and {braces}\n[not a call]\n{\"key\": 1}\n")
    return (unit * (n // len(unit) + 1))[:n]


PROSE = {
    "harness_prose": build_workload("prose").text,
    "prose_with_lookalikes": _prose_with_lookalikes(64 * 1024),
}


class ProseJob(Job):
    def __init__(self, prose: str, n_tools: int):
        self.tools, self.options, self.mode = _many_tools(n_tools), {}, "stream4"
        self.text = PROSE[prose]
        self.deltas = split(self.text, 4)
        sp.StreamParser(self.tools)


@pytest.mark.parametrize("n_tools", [10, 10_000])
@pytest.mark.parametrize("prose", sorted(PROSE))
def test_prose_per_delta_cost(benchmark, prose: str, n_tools: int) -> None:
    job = ProseJob(prose, n_tools)
    events = benchmark.pedantic(job.run, setup=job.setup, rounds=30)
    assert events > 0  # text events came out
    n_deltas = len(job.deltas)
    info: dict[str, Any] = {"tools": n_tools, "deltas": n_deltas, "construct_ms": _construct_ms(job.tools, {})}
    if benchmark.stats:  # None under --benchmark-disable
        info["us_per_delta"] = round(benchmark.stats.stats.mean / n_deltas * 1e6, 3)
    if n_tools == 10_000:
        few = ProseJob(prose, 10)
        few.once()
        mine, theirs = job.best(), few.best()
        info["ratio_vs_10_tools"] = round(mine / theirs, 2)
        info["us_per_delta_best"] = round(mine / n_deltas * 1e6, 3)
        info["us_per_delta_best_10_tools"] = round(theirs / n_deltas * 1e6, 3)
    benchmark.extra_info.update(info)
