"""Argument streaming (``stream_arguments=True``): per-delta cost inside a long argument, and how
long an argument character waits between its arrival and its emission.

Run: pytest bench/test_bench_stream_arguments.py --benchmark-only -s
The per-delta figures compare streaming on and off on the same deltas in the same run (the
target: linear in the argument's size, and on ≤ 1.5× off). Latency is measured per delta that
carries argument text: the time from the start of the ``feed`` that brings a character to the
return of the event that emits it (streaming on: that same feed; off: the feed that closes the call).
"""

from __future__ import annotations

import gc
import time
from typing import Any

import pytest

from streamparse import StreamParser, ToolCall, ToolCallDelta
from streamparse.harness.benchmark import build_workload, split

SIZES_KB = (16, 64, 256)
DIALECTS = ("hermes", "qwen3_coder")


def _feed_all(tools: Any, deltas: list[str], stream: bool) -> int:
    parser = StreamParser(tools, stream_arguments=stream)
    feed = parser.feed
    n = 0
    for delta in deltas:
        n += len(feed(delta))
    return n + len(parser.close())


def per_delta_us(dialect: str, kb: int, stream: bool, repeat: int = 3) -> float:
    workload = build_workload(f"args:{dialect}:{kb}")
    deltas = split(workload.text, 4)
    best = float("inf")
    for _ in range(repeat):
        gc.disable()
        try:
            start = time.perf_counter()
            _feed_all(workload.tools, deltas, stream)
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return best / len(deltas) * 1e6


def arrival_to_emission(dialect: str, kb: int, stream: bool) -> tuple[float, float, int]:
    """(median µs, max µs, longest run of characters fed with no fragment out) from a character's arrival to its
    emission, over the deltas once the call has started (whole-call mode: every delta until its call leaves)."""
    workload = build_workload(f"args:{dialect}:{kb}")
    deltas = split(workload.text, 4)
    parser = StreamParser(workload.tools, stream_arguments=stream)
    arrived: list[float] = []  # whole-call mode: when each delta since the last call began its feed
    waits: list[float] = []
    fed_inside = 0
    held_max = 0
    started = False
    for delta in deltas + [None]:
        t0 = time.perf_counter()
        events = parser.feed(delta) if delta is not None else parser.close()
        t1 = time.perf_counter()
        if not stream:
            arrived.append(t0)
        for ev in events:
            if isinstance(ev, ToolCallDelta):
                started = True
            elif isinstance(ev, ToolCall) and not stream:
                waits += [(t1 - a) * 1e6 for a in arrived]
                arrived.clear()
        if stream and started and delta is not None:
            emitting = any(isinstance(ev, ToolCallDelta) for ev in events)
            fed_inside = 0 if emitting else fed_inside + len(delta)
            held_max = max(held_max, fed_inside)
            waits.append((t1 - t0) * 1e6)
    waits.sort()
    return waits[len(waits) // 2], waits[-1], held_max


@pytest.mark.parametrize("kb", SIZES_KB)
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_bench_long_argument(benchmark: Any, dialect: str, kb: int, stream: bool) -> None:
    workload = build_workload(f"args:{dialect}:{kb}")
    deltas = split(workload.text, 4)
    n = benchmark(_feed_all, workload.tools, deltas, stream)
    assert n > 0
    benchmark.extra_info["us_per_delta"] = (benchmark.stats.stats.mean / len(deltas) * 1e6) if benchmark.stats else None


def test_report_streaming_figures(capsys: Any) -> None:
    """One table, one run: µs/delta on/off by size (linearity), and arrival-to-emission latency."""
    lines = [f"{'dialect':<12}{'KB':>5}{'off µs/Δ':>10}{'on µs/Δ':>10}{'on/off':>8}{'lat p50 µs':>12}{'lat max µs':>12}"
             f"{'held chars':>11}{'off lat p50 µs':>16}"]
    for dialect in DIALECTS:
        for kb in SIZES_KB:
            off, on = per_delta_us(dialect, kb, False), per_delta_us(dialect, kb, True)
            p50, pmax, held = arrival_to_emission(dialect, kb, True)
            off_p50, _, _ = arrival_to_emission(dialect, kb, False)
            lines.append(f"{dialect:<12}{kb:>5}{off:>10.3f}{on:>10.3f}{on / off:>8.2f}{p50:>12.1f}{pmax:>12.1f}"
                         f"{held:>11}{off_p50:>16.0f}")
            assert held < 64, "streaming holds only a bounded tail"
    with capsys.disabled():
        print("\n" + "\n".join(lines))
