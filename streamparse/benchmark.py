"""Benchmark harness: deterministic workloads, streamparse and baselines on the same deltas.

Every figure is reported next to baselines measured in the same run on the same
machine, so ratios mean something:

- ``identity``: hands every delta back as text (the cost of the loop itself);
- ``floor``: one compiled-regex search per delta for the start markers, nothing else;
- ``naive``: re-parses the whole buffer on every delta, the way the seed converters do
  (regex over everything received, ``json.loads`` per block) - quadratic;
- any ``--compare module:callable`` (a function ``deltas -> (text, calls)``), and the
  streaming tool parsers of sglang / vllm when those packages are importable.
"""

from __future__ import annotations

import bisect
import gc
import itertools
import json
import time
import tracemalloc
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from .baselines import PARSERS, Session, SessionFactory, load_compare, optional_comparators
from .events import TextDelta, ToolCall
from .parser import StreamParser
from .render import RENDERERS
from .workloads import KB, SCALING_KB, Workload, build_workload, split

__all__ = [
    "Workload", "Session", "PARSERS", "SCENARIOS", "RENDERERS", "SCALING_KB", "build_workload", "split", "measure",
    "run_suite", "format_table", "load_compare", "optional_comparators",
]



# ----------------------------------------------------------------------------- measuring

@dataclass
class Result:
    scenario: str
    parser: str
    chars: int
    deltas: int
    seconds: float
    calls: int
    peak_kib: float
    max_held: int | None
    latency_deltas: list[int]
    latency_us: list[float]
    correct: bool | None
    note: str = ""

    @property
    def mb_per_s(self) -> float:
        return self.chars / self.seconds / 1e6 if self.seconds else float("inf")

    @property
    def us_per_delta(self) -> float:
        return self.seconds / self.deltas * 1e6 if self.deltas else 0.0

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d.update(mb_per_s=self.mb_per_s, us_per_delta=self.us_per_delta,
                 deltas_per_s=self.deltas / self.seconds if self.seconds else None,
                 calls_per_s=self.calls / self.seconds if self.seconds else None)
        return d


def _timed_run(factory: SessionFactory, tools: Any, deltas: Sequence[str]) -> tuple[float, str, list[tuple[str, str]]]:
    session = factory(tools)
    feed = session.feed
    text: list[str] = []
    calls: list[tuple[str, str]] = []
    gc.disable()
    try:
        start = time.perf_counter()
        for delta in deltas:
            t, c = feed(delta)
            if t:
                text.append(t)
            if c:
                calls += c
        t, c = session.close()
        elapsed = time.perf_counter() - start
    finally:
        gc.enable()
    text.append(t)
    calls += c
    return elapsed, "".join(text), calls


def _instrumented_run(factory: SessionFactory, tools: Any, deltas: Sequence[str], call_ends: list[int]
                      ) -> tuple[int | None, list[int], list[float]]:
    """Largest held-back count, and for each call: deltas and µs from its completing delta to its emission."""
    session = factory(tools)
    offsets = list(itertools.accumulate(len(d) for d in deltas))  # offset after delta i
    completing = [bisect.bisect_left(offsets, call_end) for call_end in call_ends]
    fed_at: list[float] = []
    emitted: list[tuple[int, float]] = []
    max_held: int | None = 0
    for i, delta in enumerate(deltas):
        fed_at.append(time.perf_counter())
        _, calls = session.feed(delta)
        now = time.perf_counter()
        emitted += [(i, now)] * len(calls)
        held = session.held()
        max_held = None if held is None or max_held is None else max(max_held, held)
    _, calls = session.close()
    now = time.perf_counter()
    emitted += [(len(deltas), now)] * len(calls)
    lat_d, lat_us = [], []
    for (i, t), c in zip(emitted, completing):
        lat_d.append(i - c)
        lat_us.append((t - fed_at[c]) * 1e6 if c < len(fed_at) else float("nan"))
    return max_held, lat_d, lat_us


def _peak_memory(factory: SessionFactory, tools: Any, deltas: Sequence[str]) -> float:
    tracemalloc.start()
    try:
        session = factory(tools)
        for d in deltas:
            session.feed(d)
        session.close()
        return tracemalloc.get_traced_memory()[1] / 1024
    finally:
        tracemalloc.stop()


def measure(workload: Workload, parser: str, factory: SessionFactory, deltas: Sequence[str], *,
            repeat: int = 3, expected: tuple[str, list[tuple[str, Any]]] | None = None) -> Result:
    best = float("inf")
    text: str = ""
    calls: list[tuple[str, str]] = []
    for _ in range(repeat):
        elapsed, text, calls = _timed_run(factory, workload.tools, deltas)
        best = min(best, elapsed)
    max_held, lat_d, lat_us = _instrumented_run(factory, workload.tools, deltas, workload.call_ends)
    correct = None
    if expected is not None:
        correct = (text, [(n, json.loads(a)) for n, a in calls]) == expected
    return Result(workload.name, parser, len(workload.text), len(deltas), best, len(calls),
                  _peak_memory(factory, workload.tools, deltas), max_held, lat_d, lat_us, correct)


# ----------------------------------------------------------------------------- the suite

SCENARIOS: dict[str, Callable[[], list[str]]] = {
    "prose": lambda: ["prose"],
    "tool_heavy": lambda: ["tool_heavy"],
    "dialects": lambda: [f"dialect:{d}" for d in RENDERERS],
    "scaling": lambda: [f"args:{d}:{kb}" for d in ("hermes", "qwen3_coder") for kb in SCALING_KB],
}
NAIVE_MAX_CHARS = 80 * KB  # beyond this the quadratic baseline takes minutes: skipped, and said so


def run_suite(scenarios: Iterable[str], *, chunk: int | str = 4, parsers: dict[str, SessionFactory] | None = None,
              quick: bool = False, repeat: int = 3, log: Callable[[str], None] = print) -> list[Result]:
    parsers = dict(parsers or PARSERS)
    results: list[Result] = []
    for group in scenarios:
        names = SCENARIOS[group]() if group in SCENARIOS else [group]
        for name in names:
            if quick and name.startswith("args:") and int(name.rsplit(":", 1)[1]) > 4:
                continue
            workload = build_workload(name, size_kb=4 if quick else 64, calls=20 if quick else 200)
            deltas = split(workload.text, chunk)
            reference = StreamParser(workload.tools)
            ref_events = reference.feed(workload.text) + reference.close()
            expected = ("".join(e.text for e in ref_events if isinstance(e, TextDelta)),
                        [(e.name, json.loads(e.arguments)) for e in ref_events if isinstance(e, ToolCall)])
            for pname, factory in parsers.items():
                if pname == "naive" and len(workload.text) > NAIVE_MAX_CHARS:
                    results.append(Result(name, pname, len(workload.text), len(deltas), float("nan"), 0, float("nan"),
                                          None, [], [], None, f"skipped: quadratic, input over {NAIVE_MAX_CHARS // KB} KB"))
                    continue
                check = expected if pname == "streamparse" else None
                results.append(measure(workload, pname, factory, deltas, repeat=1 if quick else repeat, expected=check))
            log(format_table([r for r in results if r.scenario == name]))
    return results


def _fmt(value: float | None, digits: int = 2) -> str:
    if value is None or value != value:  # None or NaN
        return "-"
    return f"{value:,.{digits}f}"


def format_table(results: list[Result]) -> str:
    if not results:
        return ""
    head = f"\n== {results[0].scenario}  ({results[0].chars:,} chars, {results[0].deltas:,} deltas)"
    cols = f"{'parser':<22}{'MB/s':>9}{'µs/delta':>10}{'deltas/s':>12}{'calls':>7}{'calls/s':>11}{'peak KiB':>10}" \
           f"{'max held':>9}{'lat Δ max':>10}{'lat µs p50':>11}{'lat µs max':>11}  note"
    lines = [head, cols]
    for r in results:
        lat = sorted(x for x in r.latency_us if x == x)
        lines.append(
            f"{r.parser:<22}{_fmt(r.mb_per_s):>9}{_fmt(r.us_per_delta, 3):>10}"
            f"{_fmt(r.deltas / r.seconds if r.seconds == r.seconds and r.seconds else None, 0):>12}"
            f"{r.calls:>7}{_fmt(r.calls / r.seconds if r.calls and r.seconds == r.seconds else None, 0):>11}"
            f"{_fmt(r.peak_kib, 0):>10}{'-' if r.max_held is None else r.max_held:>9}"
            f"{max(r.latency_deltas) if r.latency_deltas else '-':>10}"
            f"{_fmt(lat[len(lat) // 2] if lat else None, 1):>11}{_fmt(lat[-1] if lat else None, 1):>11}"
            f"  {r.note}{'' if r.correct is not False else 'WRONG OUTPUT'}"
        )
    return "\n".join(lines)


def ratios(results: list[Result]) -> dict[str, float]:
    """The headline ratios: same run, same machine."""
    by = {(r.scenario, r.parser): r for r in results}
    out: dict[str, float] = {}
    if ("prose", "streamparse") in by and ("prose", "floor") in by:
        out["prose_streamparse_over_floor"] = by["prose", "streamparse"].seconds / by["prose", "floor"].seconds
    if ("tool_heavy", "streamparse") in by:
        out["tool_heavy_mb_per_s"] = by["tool_heavy", "streamparse"].mb_per_s
        naive = by.get(("tool_heavy", "naive"))
        if naive and naive.seconds == naive.seconds:
            out["tool_heavy_naive_over_streamparse"] = naive.seconds / by["tool_heavy", "streamparse"].seconds
    for dialect in ("hermes", "qwen3_coder"):
        big, small = by.get((f"args:{dialect}:256", "streamparse")), by.get((f"args:{dialect}:16", "streamparse"))
        if big and small:
            out[f"scaling_{dialect}_256kb_over_16kb"] = big.seconds / small.seconds
    return out


def plot(results: list[Result], path: str) -> None:
    """Time against argument size, log-log, one line per parser (needs matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise RuntimeError("--plot needs matplotlib: pip install 'streamparse[plot]'") from exc
    fig, ax = plt.subplots(figsize=(7, 5))
    series: dict[str, list[tuple[float, float]]] = {}
    for r in results:
        if r.scenario.startswith("args:") and r.seconds == r.seconds:
            dialect, kb = r.scenario.split(":")[1:]
            series.setdefault(f"{r.parser} ({dialect})", []).append((float(kb), r.seconds * 1e3))
    if not series:
        raise RuntimeError("--plot needs the scaling scenario (args:*) in the run")
    for label, points in sorted(series.items()):
        points.sort()
        ax.loglog([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
    ax.set_xlabel("argument size (KB)")
    ax.set_ylabel("time for the whole stream (ms)")
    ax.set_title("streamparse: time against argument size (4-character deltas)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
