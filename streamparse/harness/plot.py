"""The benchmark's picture: per-delta cost against argument size, log-log, one panel per dialect; and,
below, every format of the engines group side by side.

Each line is one parser on the ``args:DIALECT:KB`` workloads (one ``write_file`` call whose content
is KB kilobytes, streamed in deltas); a line that stops early is a parser skipped above that size.
A flat line costs the same per delta whatever the size (linear overall); a rising one re-reads
what it has already seen. The bottom panel (``mixed:*`` workloads): per format, streamparse's cost per
delta and each engine parser's, on a log scale; a hatched bar is an engine that missed calls.

Invariant: drawing only; reads ``Result`` records and measures nothing.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .results import Result

__all__ = ["plot", "series", "engine_bars"]

_STYLE: dict[str, dict[str, Any]] = {
    "streamparse": {"color": "#d62728", "lw": 2.6, "marker": "o", "zorder": 5},
    "floor": {"color": "#555555", "lw": 1.4, "ls": "--", "marker": "s"},
    "identity": {"color": "#aaaaaa", "lw": 1.2, "ls": ":", "marker": "."},
    "naive": {"color": "#8c564b", "lw": 1.4, "marker": "x"},
}
_ENGINE_COLORS = {"vllm": "#1f77b4", "sglang": "#2ca02c"}  # one colour per engine, the same in both panels
_OTHERS = ["#9467bd", "#ff7f0e", "#17becf", "#e377c2", "#bcbd22", "#7f7f7f"]
_VARIANTS = [("-", "^"), ("--", "v"), (":", "D")]  # an engine's 1st, 2nd, 3rd parser of the same format


def series(results: list[Result]) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """``{dialect: {parser: [(argument KB, µs per delta), ...]}}`` from the args:* workloads that ran."""
    out: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for r in results:
        if r.scenario.startswith("args:") and not r.skipped and r.complete:
            _, dialect, kb = r.scenario.split(":")
            out.setdefault(dialect, {}).setdefault(r.parser, []).append((float(kb), r.us_per_delta))
    for lines in out.values():
        for points in lines.values():
            points.sort()
    return out


def engine_bars(results: list[Result]) -> dict[str, list[tuple[str, float, bool]]]:
    """``{format: [(parser, µs per delta, all calls right), ...]}`` from the mixed:* workloads: streamparse
    first, then each engine run to the end; formats with no engine left out."""
    out: dict[str, list[tuple[str, float, bool]]] = {}
    for r in results:
        if r.scenario.startswith("mixed:") and not r.skipped and r.complete and (r.engine or r.parser == "streamparse"):
            right = r.calls_ok is not None and r.calls_ok == r.calls_expected == r.calls
            out.setdefault(r.scenario.split(":", 1)[1], []).append((r.parser, r.us_per_delta, right))
    return {f: sorted(bars, key=lambda b: b[0] != "streamparse") for f, bars in out.items()
            if any(p != "streamparse" for p, _, _ in bars)}


def _bars(ax: Any, bars: dict[str, list[tuple[str, float, bool]]], chunk: int | str) -> None:
    """One group of bars per format: streamparse red, vLLM's parsers blue, SGLang's green (log scale)."""
    width = 0.8 / max(len(b) for b in bars.values())
    for x, (fmt, group) in enumerate(bars.items()):
        for i, (parser, us, right) in enumerate(group):
            engine = parser.split(":", 1)[0]
            color = _STYLE["streamparse"]["color"] if parser == "streamparse" else _ENGINE_COLORS.get(engine, "#9467bd")
            ax.bar(x - 0.4 + width * (i + 0.5), us, width * 0.92, color=color, hatch=None if right else "//",
                   edgecolor="white" if right else "black", linewidth=0.4)
    ax.set_yscale("log")
    ax.set_xticks(range(len(bars)), list(bars), rotation=35, ha="right", fontsize=9)
    ax.set_ylabel("cost per delta (µs)")
    ax.set_xlim(-0.6, len(bars) - 0.4)
    ax.grid(True, axis="y", which="major", alpha=0.35)
    deltas = f"{chunk}-character" if chunk != "random" else "1-12-character"
    ax.set_title(f"Every format: one mixed stream each (prose, a call, three at once, a 2 KB argument; {deltas} "
                 "deltas, log scale)\nred: streamparse, blue: vLLM's parsers, green: SGLang's; hatched: an engine "
                 "that missed calls", fontsize=10)


def _skipped(results: list[Result]) -> set[tuple[str, str]]:
    """(dialect, parser) pairs with an args:* workload skipped or stopped: their line ends early on purpose."""
    return {(r.scenario.split(":")[1], r.parser) for r in results
            if r.scenario.startswith("args:") and (r.skipped or not r.complete)}


def _styles(data: dict[str, dict[str, list[tuple[float, float]]]]) -> dict[str, dict[str, Any]]:
    """Fixed styles for streamparse and the baselines; the engines' parsers coloured by engine, told apart
    within one format by line style and marker; anything else (``--compare``) its own colour."""
    out: dict[str, dict[str, Any]] = {}
    others = iter(_OTHERS * 4)
    for lines in data.values():
        seen: dict[str, int] = {}
        for parser in lines:
            if parser in out:
                continue
            engine = parser.split(":", 1)[0]
            if parser in _STYLE:
                out[parser] = _STYLE[parser]
            elif ":" in parser and engine in _ENGINE_COLORS:
                ls, marker = _VARIANTS[min(seen.get(engine, 0), len(_VARIANTS) - 1)]
                seen[engine] = seen.get(engine, 0) + 1
                out[parser] = {"color": _ENGINE_COLORS[engine], "lw": 1.8, "ls": ls, "marker": marker}
            else:
                out[parser] = {"color": next(others), "lw": 1.8, "marker": "^"}
    return out


def _label(parser: str) -> str:
    return {"floor": "floor (one regex search per delta)", "identity": "identity (the loop alone)",
            "naive": "naive (re-parses everything per delta)"}.get(parser, parser)


def plot(results: list[Result], path: str, chunk: int | str = 4) -> None:
    """Write the PNG (needs matplotlib). Raises RuntimeError without the scaling workloads or the engines group."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise RuntimeError("--plot needs matplotlib: pip install 'streamparse-tools[plot]'") from exc
    data = series(results)
    bars = engine_bars(results)
    if not data and not bars:
        raise RuntimeError("--plot needs the scaling scenario (args:*) or the engines group (mixed:*) in the run")
    dialects = sorted(data, key=lambda d: (d != "hermes", d))
    columns = max(len(dialects), 1)
    heights = ([1.0, 0.2] if data else []) + ([1.0] if bars else [])  # lines, their legend, bars
    fig = plt.figure(figsize=(max(6.2 * columns, 13.0), 1.0 + 5.0 * sum(heights)))
    grid = fig.add_gridspec(len(heights), columns, height_ratios=heights, hspace=0.45)
    if data:
        legend = fig.add_subplot(grid[1, :])
        legend.axis("off")
        _lines(fig, [fig.add_subplot(grid[0, i]) for i in range(len(dialects))], legend, dialects, data, results,
               chunk)
    if bars:
        _bars(fig.add_subplot(grid[len(heights) - 1, :]), bars, chunk)
    fig.subplots_adjust(left=0.06, right=0.98, top=1 - 0.9 / fig.get_figheight(), bottom=1.1 / fig.get_figheight())
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _lines(fig: Any, axes: list[Any], legend: Any, dialects: list[str],
           data: dict[str, dict[str, list[tuple[float, float]]]], results: list[Result], chunk: int | str) -> None:
    """The top row: one log-log panel per dialect of the scaling workloads."""
    skipped = _skipped(results)
    parsers: list[str] = []
    for d in dialects:
        parsers += [p for p in data[d] if p not in parsers]
    style = _styles(data)
    for ax, dialect in zip(axes, dialects):
        ends: dict[tuple[float, float], list[str]] = {}  # where lines stop early: one label per place
        for parser in parsers:
            points = data[dialect].get(parser)
            if not points:
                continue
            ax.plot([p[0] for p in points], [p[1] for p in points], label=_label(parser), ms=5, **style[parser])
            if (dialect, parser) in skipped:
                place = (points[-1][0], round(math.log10(points[-1][1]) * 5) / 5)
                ends.setdefault(place, []).append(parser)
        for (kb, _), names in ends.items():
            y = max(v for n in names for x, v in data[dialect][n] if x == kb)
            ax.annotate("larger sizes not run", (kb, y), xytext=(6, -3), textcoords="offset points", fontsize=8,
                        color=style[names[0]]["color"])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{dialect} markup", fontsize=11)
        ax.set_xlabel("argument size (KB, one write_file call)")
        ax.grid(True, which="major", alpha=0.35)
        ax.grid(True, which="minor", alpha=0.12)
        kbs = sorted({p[0] for points in data[dialect].values() for p in points})
        ax.set_xticks(kbs, [f"{k:g}" for k in kbs])
    axes[0].set_ylabel("cost per delta (µs, lower is better)")
    deltas = f"{chunk}-character" if chunk != "random" else "1-12-character"
    fig.suptitle(f"Parsing cost per delta against argument size ({deltas} deltas, log-log)\n"
                 "flat: linear overall; rising: the parser re-reads what it has seen; a line that stops: larger "
                 "sizes were not run (they would take minutes)", fontsize=11)
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    legend.legend(handles, labels, loc="center", ncol=min(len(labels), 4), fontsize=9, frameon=False)
