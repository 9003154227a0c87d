"""The benchmark's tables and headline ratios (``streamparse bench``); the picture is in ``plot``.

Invariant: formatting only; reads ``Result`` records and measures nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .workloads import SCALING_DIALECTS

if TYPE_CHECKING:
    from .results import Result

__all__ = ["format_table", "format_engines", "ratios", "best_engine"]

def _fmt(value: float | None, digits: int = 2) -> str:
    if value is None or value != value:  # None or NaN
        return "-"
    return f"{value:,.{digits}f}"


def _check_cell(r: Result) -> str:
    if r.calls_ok is None:
        return "-"
    calls = "ok" if r.calls_ok == r.calls_expected == r.calls else f"{r.calls_ok}/{r.calls_expected}"
    return f"{calls} / {r.text_ok or '-'}"


def _lat(value: float | None) -> str:
    return _fmt(value, 1 if value is not None and value < 1000 else 0)


def format_table(results: list[Result]) -> str:
    """One workload's table. ``calls / text``: calls equal to streamparse's whole-text parse (ok, or how
    many of how many) and the text (ok, ``ws``: differs only in whitespace, or differs)."""
    if not results:
        return ""
    floor = next((r for r in results if r.parser == "floor" and not r.skipped), None)
    widths = (("parser", -20), ("MB/s", 7), ("µs/delta", 9), ("×floor", 7), ("calls", 5), ("calls/s", 8),
              ("peak KiB", 8), ("max held", 8), ("lat Δ max", 9), ("lat µs p50", 10), ("lat µs max", 10),
              ("calls / text", -15), ("note", 0))

    def row(cells: list[str]) -> str:
        return " ".join(f"{c:<{-w}}" if w < 0 else f"{c:>{w}}" if w else c for c, (_, w) in zip(cells, widths))

    lines = [f"\n== {results[0].scenario}  ({results[0].chars:,} chars, {results[0].deltas:,} deltas)",
             row([name for name, _ in widths])]
    for r in results:
        lat = sorted(x for x in r.latency_us if x == x)
        over = r.us_per_delta / floor.us_per_delta if floor and floor.seconds and not r.skipped else None
        lines.append(row([
            r.parser, _fmt(r.mb_per_s), _fmt(r.us_per_delta, 3), _fmt(over, 1), "-" if r.skipped else str(r.calls),
            _fmt(r.calls / r.seconds if r.calls and not r.skipped else None, 0), _fmt(r.peak_kib, 0),
            "-" if r.max_held is None else str(r.max_held), str(max(r.latency_deltas)) if r.latency_deltas else "-",
            _lat(lat[len(lat) // 2] if lat else None), _lat(lat[-1] if lat else None), _check_cell(r), r.note,
        ]).rstrip())
    return "\n".join(lines)


def _engine_rows(results: list[Result], scenario: str) -> list[Result]:
    return [r for r in results if r.scenario == scenario and r.engine and not r.skipped and r.complete]


def _all_right(r: Result) -> bool:
    return r.calls_ok is not None and r.calls_ok == r.calls_expected == r.calls


def best_engine(results: list[Result], scenario: str) -> Result | None:
    """The engine row with the lowest per-delta cost among those run to the end on ``scenario`` whose calls were
    all right; None when no engine got every call right (a parser that misses calls is no yardstick)."""
    right = [r for r in _engine_rows(results, scenario) if _all_right(r)]
    return min(right, key=lambda r: r.us_per_delta, default=None)


def _engine_cell(r: Result) -> str:
    if r.skipped:
        return f"{r.parser} -"
    stopped = "" if r.complete else " (stopped)"
    return f"{r.parser} {r.us_per_delta:,.1f}{stopped} [{_check_cell(r)}]"


def format_engines(results: list[Result]) -> str:
    """One table for every format of the engines group (``mixed:*``): streamparse's µs per delta, the best
    engine's, their ratio, and each engine's µs per delta with its check against streamparse's whole-text
    parse (``calls / text`` as in ``format_table``). Empty when the run had no engine on a mixed stream."""
    scenarios = [r.scenario for r in results if r.scenario.startswith("mixed:") and r.parser == "streamparse"]
    rows = []
    for scenario in scenarios:
        mine = next(r for r in results if r.scenario == scenario and r.parser == "streamparse")
        engines = [r for r in results if r.scenario == scenario and r.engine]
        if not engines:
            continue
        best = best_engine(results, scenario)
        ratio = mine.us_per_delta / best.us_per_delta if best and best.us_per_delta else None
        rows.append((scenario.split(":", 1)[1], _fmt(mine.us_per_delta, 2), _check_cell(mine),
                     best.parser if best else "none right", _fmt(best.us_per_delta if best else None, 1),
                     "-" if ratio is None else f"{ratio:.3f}×", "; ".join(_engine_cell(r) for r in engines)))
    if not rows:
        return ""
    head = ("format", "streamparse µs/Δ", "check", "best engine", "µs/Δ", "ratio", "engines: µs/Δ [calls / text]")
    widths = [max(len(str(row[i])) for row in [head, *rows]) for i in range(len(head) - 1)]
    lines = ["\n== engines: streamparse vs the engines' own parsers, one mixed stream per format "
             "(same run; ratio = streamparse / best engine whose calls were all right)"]
    for row in [head, *rows]:
        lines.append(" ".join(f"{c:<{w}}" for c, w in zip(row, widths)) + " " + row[-1])
    return "\n".join(lines)


def ratios(results: list[Result]) -> dict[str, float]:
    """The headline ratios: same run, same machine.

    ``<dialect>_streamparse_over_best_engine``: streamparse's per-delta cost on the mixed stream of that
    dialect (the engines group; the agent workload when only that ran) over the best engine's there
    (``best_engine``)."""
    by = {(r.scenario, r.parser): r for r in results if not r.skipped}
    out: dict[str, float] = {}
    if ("prose", "streamparse") in by and ("prose", "floor") in by:
        out["prose_streamparse_over_floor"] = by["prose", "streamparse"].seconds / by["prose", "floor"].seconds
    if ("tool_heavy", "streamparse") in by:
        out["tool_heavy_mb_per_s"] = by["tool_heavy", "streamparse"].mb_per_s
        naive = by.get(("tool_heavy", "naive"))
        if naive:
            out["tool_heavy_naive_over_streamparse"] = naive.seconds / by["tool_heavy", "streamparse"].seconds
    for dialect in SCALING_DIALECTS:
        big, small = by.get((f"args:{dialect}:256", "streamparse")), by.get((f"args:{dialect}:16", "streamparse"))
        if big and small:
            out[f"scaling_{dialect}_256kb_over_16kb"] = big.seconds / small.seconds
        naive, ours = by.get((f"args:{dialect}:16", "naive")), by.get((f"args:{dialect}:16", "streamparse"))
        if naive and ours:
            out[f"scaling_{dialect}_16kb_naive_over_streamparse"] = naive.seconds / ours.seconds
    dialects = dict.fromkeys(r.scenario.split(":")[1] for r in results
                             if r.scenario.startswith(("mixed:", "agent:")) and r.parser == "streamparse")
    for dialect in dialects:
        agent = f"agent:{dialect}"
        mine, floor = by.get((agent, "streamparse")), by.get((agent, "floor"))
        if mine and floor:
            out[f"agent_{dialect}_streamparse_over_floor"] = mine.seconds / floor.seconds
        scenario = f"mixed:{dialect}" if (f"mixed:{dialect}", "streamparse") in by else agent
        mine, best = by.get((scenario, "streamparse")), best_engine(results, scenario)
        if mine and best:
            out[f"{dialect}_streamparse_over_best_engine"] = mine.us_per_delta / best.us_per_delta
    return out
