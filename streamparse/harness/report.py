"""The benchmark's tables and headline ratios (``streamparse bench``); the picture is in ``plot``.

Invariant: formatting only; reads ``Result`` records and measures nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .workloads import ENGINE_DIALECTS

if TYPE_CHECKING:
    from .results import Result

__all__ = ["format_table", "ratios"]

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


def ratios(results: list[Result]) -> dict[str, float]:
    """The headline ratios: same run, same machine.

    ``<dialect>_streamparse_over_best_engine``: streamparse's per-delta cost on the agent workload of that
    dialect over the lowest per-delta cost among the engines run to the end there whose calls were all right
    (among all engines run to the end there if none was)."""
    by = {(r.scenario, r.parser): r for r in results if not r.skipped}
    out: dict[str, float] = {}
    if ("prose", "streamparse") in by and ("prose", "floor") in by:
        out["prose_streamparse_over_floor"] = by["prose", "streamparse"].seconds / by["prose", "floor"].seconds
    if ("tool_heavy", "streamparse") in by:
        out["tool_heavy_mb_per_s"] = by["tool_heavy", "streamparse"].mb_per_s
        naive = by.get(("tool_heavy", "naive"))
        if naive:
            out["tool_heavy_naive_over_streamparse"] = naive.seconds / by["tool_heavy", "streamparse"].seconds
    for dialect in ENGINE_DIALECTS:
        big, small = by.get((f"args:{dialect}:256", "streamparse")), by.get((f"args:{dialect}:16", "streamparse"))
        if big and small:
            out[f"scaling_{dialect}_256kb_over_16kb"] = big.seconds / small.seconds
        naive, ours = by.get((f"args:{dialect}:16", "naive")), by.get((f"args:{dialect}:16", "streamparse"))
        if naive and ours:
            out[f"scaling_{dialect}_16kb_naive_over_streamparse"] = naive.seconds / ours.seconds
        agent = f"agent:{dialect}"
        mine, floor = by.get((agent, "streamparse")), by.get((agent, "floor"))
        if mine and floor:
            out[f"agent_{dialect}_streamparse_over_floor"] = mine.seconds / floor.seconds
        engines = _engine_rows(results, agent)
        right = [r for r in engines if r.calls_ok is not None and r.calls_ok == r.calls_expected == r.calls]
        if mine and engines:
            best = min(right or engines, key=lambda r: r.seconds)
            out[f"{dialect}_streamparse_over_best_engine"] = mine.us_per_delta / best.us_per_delta
    return out
