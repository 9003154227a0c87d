"""Benchmark harness: deterministic workloads, streamparse and baselines on the same deltas.

Every figure is reported next to baselines measured in the same run on the same
machine, so ratios mean something:

- ``identity``: hands every delta back as text (the cost of the loop itself);
- ``floor``: one compiled-regex search per delta for the start markers, nothing else;
- ``naive``: re-parses the whole buffer on every delta, the way the seed converters do
  (regex over everything received, ``json.loads`` per block) - quadratic, so it runs only on
  workloads up to ``NAIVE_MAX_CHARS`` (decided by size, up front) and says so;
- the serving engines' streaming tool parsers (``streamparse.harness.engines``: vLLM, SGLang), when
  installed, on the ``mixed:``, ``args:`` and ``agent:`` workloads of every format they parse (the
  ``engines`` group: one mixed stream per format, cut in 4-character deltas that keep the model's
  special tokens whole, see ``workloads.split_keeping``);
- any ``--compare module:callable`` (a function ``deltas -> (text, calls)``);
- on ``prose`` only, ``prose_floor``: a search for the characters that can begin a marker, the delta collected.

The ``construction`` and ``answers`` groups (``bench_groups``: building a parser for a request's tools, and
parsing complete answers at once) run after the streams, with their own tables; the ``short`` group's
engines get a summary table like the engines group's.

Every parser's output is checked against streamparse's parse of the whole text at once:
the calls (names and parsed arguments) and the text, separately.

Cost of a run: one instrumented run (the output for the check, held text, emission latency), then
each parser is timed up to ``repeat`` times (fewer once ``TIME_BUDGET`` seconds are spent, so slow
parsers and big inputs run once), and one run under tracemalloc (peak memory); then (not with
``--quick``) the cleanly timed parsers of a workload take turns for more timed runs. Every timed
run comes from one loop, ``time_in_turns``.

Fair timing: the timed loop is the same for every parser (one call per delta, result dropped) and
calls the parser itself, not an adapter: ``StreamParser.feed`` for streamparse, a bare regex search
for the floor (``Session.raw``, see baselines).

Invariant: every parser in a run gets the same deltas through the same timed loop, and every
figure is stated next to the baselines measured in that run.
"""

from __future__ import annotations

import bisect
import functools
import gc
import itertools
import math
import time
import tracemalloc
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from .baselines import PARSERS, PROSE_FLOOR, Session, SessionFactory, raw_api
from .bench_groups import GROUPS, is_group_workload, run_groups
from ..dialects.render import RENDERERS
from .check import Expected, check, reference
from .engines import engine_dialects, engine_parsers, whole_tokens
from .report import engines_legend, format_engines, format_table, ratios as stream_ratios, table_legend
from .report_groups import format_answers, format_construction, group_ratios, groups_legend
from .results import Result
from .workloads import (KB, SCALING_DIALECTS, SCALING_KB, Workload, build_workload, split, split_keeping,
                        workload_dialect)

__all__ = [
    "Workload", "Session", "PARSERS", "SCENARIOS", "RENDERERS", "SCALING_KB", "SCALING_DIALECTS", "NAIVE_MAX_CHARS",
    "build_workload", "split", "measure", "run_suite", "format_table", "format_engines", "ratios",
    "skip_reason", "timed_run", "time_in_turns", "Result", "deltas_for",
]



# ----------------------------------------------------------------------------- measuring

def timed_run(factory: SessionFactory, tools: Any, deltas: Sequence[str]) -> float:
    """Seconds for one run, with the same loop for every parser: one call per delta, the result dropped
    (as a consumer would, once read). A session's ``raw()`` is what gets called (see baselines), so an
    adapter that turns a parser's output into ``(text, calls)`` is not timed."""
    feed, close = raw_api(factory(tools))
    return timed_loop(feed, close, deltas)


def timed_loop(feed: Callable[[str], Any], close: Callable[[], Any], deltas: Sequence[str]) -> float:
    """Seconds to feed every delta and close, with the collector off (the loop every figure is timed by)."""
    gc.disable()
    try:
        start = time.perf_counter()
        for delta in deltas:
            feed(delta)
        close()
        return time.perf_counter() - start
    finally:
        gc.enable()


@dataclass
class _Observed:
    """What an instrumented run sees: the output, the most text held back, and when each call left."""

    text: str
    calls: list[tuple[str, str]]
    max_held: int | None
    latency_deltas: list[int]
    latency_us: list[float]
    seconds: float  # the whole instrumented loop
    fed: int  # deltas fed: all of them, unless the run was stopped at its deadline


def _instrumented_run(factory: SessionFactory, tools: Any, deltas: Sequence[str], call_ends: list[int],
                      stop_after: float | None = None) -> _Observed:
    """The output (for the check), the largest held-back count, and for each call: deltas and µs from its
    completing delta to its emission. Past ``stop_after`` seconds the run stops (no close): ``fed`` says where."""
    session = factory(tools)
    offsets = list(itertools.accumulate(len(d) for d in deltas))  # offset after delta i
    completing = [bisect.bisect_left(offsets, call_end) for call_end in call_ends]
    fed_at: list[float] = []
    emitted: list[tuple[int, float]] = []
    text: list[str] = []
    all_calls: list[tuple[str, str]] = []
    max_held: int | None = 0
    deadline = float("inf") if stop_after is None else time.perf_counter() + stop_after
    fed = len(deltas)
    gc.disable()
    try:
        start = now = time.perf_counter()  # now: the time of the last event, whichever it was
        for i, delta in enumerate(deltas):
            fed_at.append(time.perf_counter())
            t, calls = session.feed(delta)
            now = time.perf_counter()
            text.append(t)
            all_calls += calls
            emitted += [(i, now)] * len(calls)
            held = session.held()
            max_held = None if held is None or max_held is None else max(max_held, held)
            if now > deadline and i + 1 < len(deltas):
                fed = i + 1
                break
        else:
            t, calls = session.close()
            now = time.perf_counter()
            text.append(t)
            all_calls += calls
            emitted += [(len(deltas), now)] * len(calls)
    finally:
        gc.enable()
    lat_d, lat_us = [], []
    for (i, stamp), c in zip(emitted, completing):
        lat_d.append(i - c)
        lat_us.append(max(stamp - fed_at[c], 0.0) * 1e6 if c < len(fed_at) else float("nan"))  # 0: before it
    return _Observed("".join(text), all_calls, max_held, lat_d, lat_us, now - start, fed)


def _peak_memory(factory: SessionFactory, tools: Any, deltas: Sequence[str], stop_after: float) -> tuple[float, int]:
    """Peak KiB allocated by one run under tracemalloc, and how many deltas it took in ``stop_after`` seconds."""
    deadline = time.perf_counter() + stop_after
    tracemalloc.start()
    try:
        session = factory(tools)
        for i, d in enumerate(deltas):
            session.feed(d)
            if time.perf_counter() > deadline and i + 1 < len(deltas):
                return tracemalloc.get_traced_memory()[1] / 1024, i + 1
        session.close()
        return tracemalloc.get_traced_memory()[1] / 1024, len(deltas)
    finally:
        tracemalloc.stop()


TIME_BUDGET = 0.25  # seconds of timed runs per parser and workload: repeats stop once spent
INTERLEAVED_ROUNDS = 5  # then every cleanly timed parser of a workload runs again, in turns, this many rounds
PROSE_ROUNDS = 20  # prose (about 10 ms a run): more rounds, for the prose floor's ratio on a loaded machine
SLOW_DELTA_US = 20.0  # a parser slower than this per delta is timed by its instrumented run (see measure)
TRACE_FACTOR = 5.0  # a run under tracemalloc takes about this many times longer (2 to 12 for the engines)
TRACE_MAX_SECONDS = 2.0  # the peak-memory run: left out when it would take longer, stopped when it does
RUN_MAX_SECONDS = 6.0  # a comparator's run stops here (1 s with --quick); the figures are for the part fed
WARM_UP_SECONDS = 0.25  # the warm-up feeds the whole workload, or stops here (a slow parser)


def _warm_up(factory: SessionFactory, tools: Any, deltas: Sequence[str]) -> None:
    """Imports, caches and first calls happen here, before any clock starts: every form the workload holds
    (a grammar compiled at a dialect's first call, its first call's schema read), not only its first
    deltas, or the instrumented run pays them and a fast parser is judged slow (kimi_k2: 26 µs/delta)."""
    session = factory(tools)
    stop = time.perf_counter() + WARM_UP_SECONDS
    for start in range(0, len(deltas), 64):
        for delta in deltas[start : start + 64]:
            session.feed(delta)
        if time.perf_counter() > stop:
            return
    session.close()


def instrumentation_cost(tools: Any, deltas: Sequence[str]) -> float:
    """Seconds per delta that the instrumented loop adds to the timed loop, measured on the identity baseline."""
    identity = PARSERS["identity"]
    timed = min(timed_run(identity, tools, deltas) for _ in range(3))
    instrumented = min(_instrumented_run(identity, tools, deltas, []).seconds for _ in range(3))
    return max(instrumented - timed, 0.0) / max(len(deltas), 1)


def measure(workload: Workload, parser: str, factory: SessionFactory, deltas: Sequence[str], *,
            repeat: int = 3, expected: Expected | None = None, overhead: Callable[[], float] | None = None,
            stop_after: float | None = None) -> Result:
    """Time, output check, held text, latency and peak memory of one parser on one workload.

    Fast parsers get up to ``repeat`` clean timed runs (best kept), after the instrumented run. A parser
    slower than SLOW_DELTA_US per delta (one that re-reads what it has seen) runs once, instrumented, and is
    timed by that run less the instrumentation's own cost per delta (``overhead()``, measured on the
    identity baseline: under 1 µs against 20 or more); its peak memory is traced only if that takes under
    TRACE_MAX_SECONDS; past ``stop_after`` seconds its run stops and every figure is for the part fed (the
    calls checked are those complete in that part, the text is not checked). The note says which applies."""
    _warm_up(factory, workload.tools, deltas)
    seen = _instrumented_run(factory, workload.tools, deltas, workload.call_ends, stop_after)
    notes: list[str] = []
    part = seen.fed < len(deltas)
    chars = sum(map(len, deltas[: seen.fed])) if part else len(workload.text)
    result = Result(workload.name, parser, chars, seen.fed, float("inf"), len(seen.calls), float("nan"),
                    seen.max_held, seen.latency_deltas, seen.latency_us, None, complete=not part)
    if part or (overhead is not None and seen.seconds > SLOW_DELTA_US * 1e-6 * len(deltas)):
        cost = overhead() if overhead is not None else 0.0
        result.seconds = seen.seconds - cost * seen.fed
        notes.append(f"one run, instrumented (its cost taken off: {cost * 1e6:.2f} µs/delta)")
    else:
        time_in_turns([result], {parser: factory}, workload.tools, deltas, rounds=max(repeat, 1))
    best = result.seconds
    if part:
        peak = float("nan")
        notes.insert(0, f"stopped at {stop_after:g} s: figures for the first {seen.fed / len(deltas):.0%} "
                        f"({seen.fed:,} deltas), text not checked")
    elif best * TRACE_FACTOR > TRACE_MAX_SECONDS:
        peak = float("nan")
        notes.append(f"peak memory not traced (~{best * TRACE_FACTOR:,.0f} s)")
    else:
        peak, traced = _peak_memory(factory, workload.tools, deltas, TRACE_MAX_SECONDS)
        if traced < len(deltas):
            notes.append(f"peak memory of the first {traced / len(deltas):.0%} (traced run stopped at "
                         f"{TRACE_MAX_SECONDS:g} s)")
    result.peak_kib, result.note = peak, "; ".join(notes)
    if expected is not None:
        if part:
            expected = ("", expected[1][: bisect.bisect_right(workload.call_ends, chars)])
        result.calls_ok, result.text_ok = check(None if part else seen.text, seen.calls, expected)
        result.calls_expected = len(expected[1])
        result.correct = None if part else (result.calls_ok == result.calls_expected == result.calls
                                            and result.text_ok == "ok")
    return result


# ----------------------------------------------------------------------------- the suite

SCENARIOS: dict[str, Callable[[], list[str]]] = {
    "prose": lambda: ["prose"],
    "tool_heavy": lambda: ["tool_heavy"],
    "dialects": lambda: [f"dialect:{d}" for d in RENDERERS],
    "scaling": lambda: [f"args:{d}:{kb}" for d in SCALING_DIALECTS for kb in SCALING_KB],
    "engines": lambda: [f"mixed:{d}" for d in engine_dialects()],
    "short": lambda: [f"short:{d}" for d in engine_dialects()],
    "construction": lambda: GROUPS["construction"](()),  # construct:* and answer*:*: bench_groups
    "answers": lambda: GROUPS["answers"](engine_dialects()),
}
ENGINE_KINDS = ("mixed", "args", "agent", "short")  # the workloads the engines' parsers run on (not dialect:*, prose, ...)
NAIVE_MAX_CHARS = 20 * KB  # the quadratic baseline runs up to this size (~0.5 s a run); 64 KB would take ~10 s
SLOW_RUN_SECONDS = 3.0  # in a series (args:DIALECT:*), a comparator whose next run would take longer is skipped
_NEVER_SKIPPED = ("streamparse", "identity", "floor", "prose_floor")


def skip_reason(parser: str, chars: int) -> str | None:
    """Decided by size, before running: the quadratic baseline only runs on small inputs. A note, like every
    ``Result.note``, says what happened to the row's parser without naming it (the report puts the name)."""
    if parser == "naive" and chars > NAIVE_MAX_CHARS:
        return f"skipped above {NAIVE_MAX_CHARS // KB} KB (quadratic)"
    return None


def predicted_seconds(points: list[tuple[int, float]], chars: int) -> tuple[float, float]:
    """One run's time at ``chars`` from the parser's earlier runs in the same series, and the exponent used:
    the growth measured between the last two sizes (kept between 1 and 2), 2 when only one is known."""
    c1, t1 = points[-1]
    exponent = 2.0
    if len(points) > 1:
        c0, t0 = points[-2]
        if 0 < t0 < t1 and c0 < c1:
            exponent = min(2.0, max(1.0, math.log(t1 / t0) / math.log(c1 / c0)))
        elif t1 <= t0:
            exponent = 1.0
    return t1 * (chars / c1) ** exponent, exponent


def _too_slow(parser: str, name: str, chars: int, grown: dict[tuple[str, str], list[tuple[int, float, str]]]
              ) -> str | None:
    """A comparator (not streamparse or a baseline) whose run on this args:* size would exceed SLOW_RUN_SECONDS."""
    points = grown.get((name.rsplit(":", 1)[0], parser)) if name.startswith("args:") else None
    if not points or parser in _NEVER_SKIPPED:
        return None
    seconds, exponent = predicted_seconds([(c, t) for c, t, _ in points], chars)
    if seconds <= SLOW_RUN_SECONDS:
        return None
    return (f"skipped above {points[-1][2]} KB (a run would take ~{seconds:,.0f} s; "
            f"time grows as size^{exponent:.1f})")


def run_suite(scenarios: Iterable[str], *, chunk: int | str = 4, parsers: dict[str, SessionFactory] | None = None,
              quick: bool = False, repeat: int = 3, engines: bool = True,
              log: Callable[[str], None] = print) -> list[Result]:
    """Run every workload of ``scenarios`` (groups of SCENARIOS or single workloads) through every parser,
    plus the engines' parsers for that workload's dialect when ``engines``; log one table per workload (the
    first with the columns' legend), then the engines table when engines ran on mixed streams."""
    parsers = dict(parsers or PARSERS)
    names = [name for group in scenarios for name in (SCENARIOS[group]() if group in SCENARIOS else [group])
             if not (quick and name.startswith("args:") and int(name.rsplit(":", 1)[1]) > 4)]
    grouped = [name for name in names if is_group_workload(name)]  # construction and whole answers: run last
    names = [name for name in names if not is_group_workload(name)]
    by_dialect = engine_parsers([workload_dialect(n) for n in names if n.split(":")[0] in ENGINE_KINDS],
                                log) if engines else {}
    grown: dict[tuple[str, str], list[tuple[int, float, str]]] = {}  # (args:DIALECT, parser) -> (chars, s, KB)
    results: list[Result] = []
    for name in names:
        workload = build_workload(name, size_kb=4 if quick else 64, calls=20 if quick else 200)
        deltas = deltas_for(workload, chunk)
        expected = reference(workload)
        overhead = functools.cache(lambda w=workload, d=deltas: instrumentation_cost(w.tools, d))
        table: list[Result] = []
        engine_here = by_dialect.get(workload_dialect(name) or "", {}) if name.split(":")[0] in ENGINE_KINDS else {}
        here = {**parsers, **engine_here}
        if name == "prose" and "floor" in parsers:  # the baselines run: the prose floor joins them on prose
            here["prose_floor"] = PROSE_FLOOR
        for pname, factory in here.items():
            why = skip_reason(pname, len(workload.text)) or _too_slow(pname, name, len(workload.text), grown)
            if why is None:
                try:
                    stop = None if pname in _NEVER_SKIPPED else RUN_MAX_SECONDS / (6 if quick else 1)
                    result = measure(workload, pname, factory, deltas, repeat=1 if quick else repeat,
                                     expected=expected, overhead=overhead, stop_after=stop)
                except Exception as exc:  # noqa: BLE001 - a comparator that breaks is reported, not fatal
                    if pname in _NEVER_SKIPPED:
                        raise
                    why = f"failed ({type(exc).__name__}: {str(exc)[:120]})"
            if why is not None:
                table.append(Result(name, pname, len(workload.text), len(deltas), float("nan"), 0, float("nan"),
                                    None, [], [], None, why, engine=pname in engine_here))
                continue
            result.engine = pname in engine_here
            table.append(result)
            if name.startswith("args:"):
                series, kb = name.rsplit(":", 1)  # a part run counts as if the rest cost as much per delta
                whole = result.seconds * len(deltas) / max(result.deltas, 1)
                grown.setdefault((series, pname), []).append((len(workload.text), whole, kb))
        if not quick:
            timed = [r for r in table if r.runs and r.complete and r.parser in here]
            rounds = PROSE_ROUNDS if name == "prose" else INTERLEAVED_ROUNDS
            time_in_turns(timed, here, workload.tools, deltas, rounds=rounds)
        log(format_table(table) + ("" if results else "\n\n" + table_legend(NAIVE_MAX_CHARS // KB)))
        results += table
    summary = "\n".join(t for t in (format_engines(results), format_engines(results, "short")) if t)
    if summary:
        log(summary + "\n" + engines_legend())
    if grouped:
        found = run_groups(grouped, quick=quick, engines=engines, log=log)
        tables = [t for t in (format_construction(found), format_answers(found)) if t]
        log("\n".join(tables) + "\n" + groups_legend())
        results += found
    return results


def time_in_turns(results: Sequence[Result], factories: dict[str, SessionFactory], tools: Any,
                  deltas: Sequence[str], *, rounds: int) -> None:
    """The one timing loop: up to ``rounds`` rounds in which each result's parser makes one timed run in turn
    (``timed_run``), each result keeping its best ``seconds`` and counting its ``runs``; after a round, it stops
    once TIME_BUDGET seconds per parser are spent. One parser alone is ``measure``'s burst; every cleanly timed
    parser of a workload together are the interleaved rounds, so that a ratio between two parsers compares runs
    made side by side, not a burst of one parser's runs with another's made while the machine was busier (the
    prose ratio moved 3.4-5.5x between back-to-back runs without them)."""
    spent = 0.0
    for _ in range(rounds):
        for result in results:
            elapsed = timed_run(factories[result.parser], tools, deltas)
            result.seconds = min(result.seconds, elapsed)
            result.runs += 1
            spent += elapsed
        if spent >= TIME_BUDGET * max(len(results), 1):
            break


def deltas_for(workload: Workload, chunk: int | str = 4) -> list[str]:
    """The deltas every parser gets: ``chunk`` characters each; a ``mixed:`` or ``short:`` stream keeps its
    model's special tokens whole (``engines.whole_tokens``), as a detokenizer does."""
    if workload.name.startswith(("mixed:", "short:")):
        return split_keeping(workload.text, whole_tokens(workload_dialect(workload.name) or ""), chunk)
    return split(workload.text, chunk)


# ----------------------------------------------------------------------------- reporting (benchreport, benchplot)

def ratios(results: list[Result]) -> dict[str, float]:
    """The headline ratios of a run: the streams' (``report.ratios``) and the groups' (``report_groups``)."""
    return {**stream_ratios(results), **group_ratios(results)}


def plot(results: list[Result], path: str, chunk: int | str = 4) -> None:
    """Per-delta cost against argument size, log-log, one line per parser (see ``benchplot``)."""
    from .plot import plot as _plot

    _plot(results, path, chunk)
