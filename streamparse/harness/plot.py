"""The benchmark's picture: per-delta cost against argument size, log-log, one panel per dialect; and,
below, every format of the engines group side by side.

Each line is one parser on the ``args:DIALECT:KB`` workloads (one ``write_file`` call whose content
is KB kilobytes, streamed in deltas); a line that stops early is a parser skipped above that size.
A flat line costs the same per delta whatever the size (linear overall); a rising one re-reads
what it has already seen. The bottom panel (``mixed:*`` workloads): per format, streamparse's cost per
delta and each engine parser's, on a log scale; a hatched bar is an engine that missed calls. ``plot_proxy``:
the proxy's CPU per upstream chunk at each load of ``streamparse bench --proxy`` (read from its ``--json``).

Invariant: drawing only; reads ``Result`` records (or a run's figures) and measures nothing.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .results import Result

__all__ = ["plot", "plot_proxy", "proxy_costs", "series", "engine_bars"]

_STYLE: dict[str, dict[str, Any]] = {
    "streamparse": {"color": "#d62728", "lw": 2.6, "marker": "o", "zorder": 5},
    "floor": {"color": "#555555", "lw": 1.4, "ls": "--", "marker": "s"},
    "identity": {"color": "#aaaaaa", "lw": 1.2, "ls": ":", "marker": "."},
    "naive": {"color": "#8c564b", "lw": 1.4, "marker": "x"},
}
# One hue per engine, the same in every panel; its parsers told apart by shade (and, as lines, by style and
# marker): an engine's 1st, 2nd, 3rd parser in a panel of lines, or of one format among the bars.
_SHADES = {"vllm": ("#1f77b4", "#62a8dc", "#0d3b70"), "sglang": ("#2ca02c", "#8cc152", "#116d3a")}
_ENGINES = {"vllm": "vLLM", "sglang": "SGLang"}
_OTHERS = ["#9467bd", "#ff7f0e", "#17becf", "#e377c2", "#bcbd22", "#7f7f7f"]
_VARIANTS = [("-", "^"), ("--", "v"), (":", "D")]
_ORDINALS = ("", "2nd ", "3rd ")


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
    """One group of bars per format: streamparse red, each engine's parsers in shades of its hue (log scale),
    and a legend box naming them."""
    from matplotlib.patches import Patch

    width = 0.8 / max(len(b) for b in bars.values())
    kinds: dict[tuple[str, int], list[str]] = {}  # (engine, rank within its format) -> "format: parser" for the legend
    for x, (fmt, group) in enumerate(bars.items()):
        ranks: dict[str, int] = {}
        for i, (parser, us, right) in enumerate(group):
            engine, _, name = parser.partition(":")
            if parser == "streamparse":
                color = _STYLE["streamparse"]["color"]
            else:
                rank = ranks[engine] = ranks.get(engine, -1) + 1
                color = _SHADES[engine][rank % 3] if engine in _SHADES else _OTHERS[0]
                kinds.setdefault((engine, rank), []).append(f"{fmt}: {name}")
            ax.bar(x - 0.4 + width * (i + 0.5), us, width * 0.92, color=color, hatch=None if right else "//",
                   edgecolor="white" if right else "black", linewidth=0.4)
    ax.set_yscale("log")
    ax.set_xticks(range(len(bars)), list(bars), rotation=35, ha="right", fontsize=9)
    ax.set_ylabel("cost per delta (µs, lower is better)")
    ax.set_xlim(-0.6, len(bars) - 0.4)
    ax.grid(True, axis="y", which="major", alpha=0.35)
    deltas = f"{chunk}-character" if chunk != "random" else "1-12-character"
    ax.set_title(f"Every format: one mixed stream each (prose, a call, three at once, a 2 KB argument; {deltas} "
                 "deltas, log scale)", fontsize=10)
    handles = [Patch(color=_STYLE["streamparse"]["color"], label="streamparse")]
    for (engine, rank), where in sorted(kinds.items(), key=lambda k: (list(_SHADES).index(k[0][0])
                                                                      if k[0][0] in _SHADES else 9, k[0][1])):
        shades = _SHADES.get(engine, (_OTHERS[0],) * 3)
        label = f"{_ENGINES.get(engine, engine)}'s {_ORDINALS[min(rank, 2)]}parser"
        handles.append(Patch(color=shades[rank % 3], label=label + (f" ({', '.join(where)})" if rank else "")))
    handles.append(Patch(facecolor="white", edgecolor="black", hatch="//", linewidth=0.4,
                         label="hatched: an engine's parser that missed calls"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.24), ncol=3, fontsize=9, frameon=True)


def _skipped(results: list[Result]) -> set[tuple[str, str]]:
    """(dialect, parser) pairs with an args:* workload skipped or stopped: their line ends early on purpose."""
    return {(r.scenario.split(":")[1], r.parser) for r in results
            if r.scenario.startswith("args:") and (r.skipped or not r.complete)}


def _styles(data: dict[str, dict[str, list[tuple[float, float]]]]) -> dict[str, dict[str, Any]]:
    """Fixed styles for streamparse and the baselines; each engine parser in a shade of its engine's hue with
    its own line style and marker (the n-th parser of an engine over all panels: no two look alike in the
    legend); anything else (``--compare``) its own colour."""
    out: dict[str, dict[str, Any]] = {}
    others = iter(_OTHERS * 4)
    seen: dict[str, int] = {}
    for lines in data.values():
        for parser in lines:
            if parser in out:
                continue
            engine = parser.split(":", 1)[0]
            if parser in _STYLE:
                out[parser] = _STYLE[parser]
            elif ":" in parser and engine in _SHADES:
                rank = seen[engine] = seen.get(engine, -1) + 1
                ls, marker = _VARIANTS[rank % len(_VARIANTS)]
                out[parser] = {"color": _SHADES[engine][rank % 3], "lw": 1.8, "ls": ls, "marker": marker}
            else:
                out[parser] = {"color": next(others), "lw": 1.8, "marker": "^"}
    return out


def _label(parser: str) -> str:
    return {"floor": "floor (one regex search per delta)", "identity": "identity (the loop alone)",
            "naive": "naive (re-parses everything per delta)"}.get(parser, parser)


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise RuntimeError("--plot needs matplotlib: pip install 'streamparse-tools[plot]'") from exc
    return plt


def _save(fig: Any, path: str) -> None:
    """PNG, or SVG/PDF by the extension; an SVG keeps its text as text (small, crisp) and is the same bytes for
    the same figures (no date, fixed ids)."""
    import matplotlib

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "streamparse"}):
        fig.savefig(path, dpi=110, metadata={"Date": None} if path.lower().endswith(".svg") else None)


def plot(results: list[Result], path: str, chunk: int | str = 4) -> None:
    """Write the picture (PNG, SVG or PDF by the extension; needs matplotlib). Raises RuntimeError without the
    scaling workloads or the engines group."""
    plt = _pyplot()
    data = series(results)
    bars = engine_bars(results)
    if not data and not bars:
        raise RuntimeError("--plot needs the scaling scenario (args:*) or the engines group (mixed:*) in the run")
    dialects = sorted(data, key=lambda d: (d != "hermes", d))
    columns = max(len(dialects), 1)
    heights = ([1.0, 0.2] if data else []) + ([1.0] if bars else [])  # lines, their legend, bars
    fig = plt.figure(figsize=(max(6.2 * columns, 13.0), 1.0 + 5.0 * sum(heights) + (1.3 if bars else 0.0)))
    grid = fig.add_gridspec(len(heights), columns, height_ratios=heights, hspace=0.45)
    if data:
        legend = fig.add_subplot(grid[1, :])
        legend.axis("off")
        _lines(fig, [fig.add_subplot(grid[0, i]) for i in range(len(dialects))], legend, dialects, data, results,
               chunk)
    if bars:
        _bars(fig.add_subplot(grid[len(heights) - 1, :]), bars, chunk)
    bottom = 2.4 if bars else 1.1  # inches: the bars' format names and their legend box
    fig.subplots_adjust(left=0.06, right=0.98, top=1 - 0.9 / fig.get_figheight(), bottom=bottom / fig.get_figheight())
    _save(fig, path)
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


_TARGETS = {"bare": ("#7f7f7f", "bare pass-through (streamparse serve, no tools)"),
            "streamparse": (_STYLE["streamparse"]["color"], "streamparse serve, parsing tool calls"),
            "litellm": ("#9467bd", "LiteLLM proxy")}
_COST = re.compile(r"(?:proxy_cost_)?(c(\d+)_([a-z]+)([\d.]*)(?:ms)?)_(.+)_cpu_us_per_chunk")


def proxy_costs(run: dict[str, Any]) -> dict[str, dict[str, float]]:
    """``{load: {target: CPU µs per upstream chunk}}`` from a ``streamparse bench --proxy --json`` document (its
    ``ratios`` hold the cost run's figures as ``proxy_cost_<load>_<target>_cpu_us_per_chunk``) or from
    ``run_costs``' own figures, loads in the run's order."""
    out: dict[str, dict[str, float]] = {}
    for key, value in run.get("ratios", run).items():
        match = _COST.fullmatch(key)
        if match and "_ratio_" not in key:
            out.setdefault(match.group(1), {})[match.group(5)] = float(value)
    return out


def _load_name(load: str) -> str:
    """``c20_paced`` -> ``20 streams, paced 2 ms``: the load's streams at once and the upstream's pace per token."""
    from .proxycost import PACE

    match = _COST.fullmatch(f"{load}_x_cpu_us_per_chunk")
    assert match, load
    streams, pace, ms = int(match.group(2)), match.group(3), match.group(4) or f"{PACE * 1000:g}"
    return f"{streams} stream{'s' * (streams > 1)},\n" + (f"paced {ms} ms" if pace == "paced" else "unpaced")


def plot_proxy(run: dict[str, Any], path: str) -> None:
    """The proxy's CPU per upstream chunk at each load of a ``bench --proxy`` run, one bar per target (log
    scale), each labelled with its value, and streamparse's cost over the bare pass-through's."""
    costs, figures = proxy_costs(run), run.get("ratios", run)
    if not costs:
        raise RuntimeError("no proxy cost figures (proxy_cost_*_cpu_us_per_chunk): run streamparse bench --proxy "
                           "--json FILE")
    plt = _pyplot()
    targets = [t for t in _TARGETS if any(t in c for c in costs.values())]
    targets += [t for c in costs.values() for t in c if t not in targets]
    fig, ax = plt.subplots(figsize=(9.0, 4.6))
    width = 0.8 / len(targets)
    for x, (load, cost) in enumerate(costs.items()):
        for i, target in enumerate(targets):
            if target not in cost:
                continue
            color = _TARGETS[target][0] if target in _TARGETS else _OTHERS[i % len(_OTHERS)]
            bar = ax.bar(x - 0.4 + width * (i + 0.5), cost[target], width * 0.92, color=color)
            ax.bar_label(bar, [f"{cost[target]:.0f}"], fontsize=8, padding=2)
        if "streamparse" in cost and "bare" in cost:
            ratio = next((figures[k] for k in (f"proxy_cost_{load}_cpu_ratio_streamparse_to_bare",
                                               f"{load}_cpu_ratio_streamparse_to_bare") if k in figures),
                         cost["streamparse"] / cost["bare"])  # the run's own ratio: its figures unrounded
            ax.annotate(f"streamparse ÷ bare {ratio:.2f}×", (x, 1.0),
                        xycoords=("data", "axes fraction"), xytext=(0, -4), textcoords="offset points",
                        ha="center", va="top", fontsize=8)
    ax.set_yscale("log")
    top = max(v for c in costs.values() for v in c.values())
    ax.set_ylim(top=top * 6)  # room for the value labels and the ratios
    ax.set_xlim(-0.6, len(costs) - 0.4)
    ax.set_xticks(range(len(costs)), [_load_name(load) for load in costs], fontsize=9)
    ax.set_ylabel("proxy CPU per upstream chunk (µs, log)")
    ax.grid(True, axis="y", which="major", alpha=0.35)
    ax.set_title("The proxy's own cost against load: CPU time of the proxy process per upstream chunk",
                 fontsize=10)
    ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=_TARGETS[t][0] if t in _TARGETS else _OTHERS[i],
                                     label=_TARGETS[t][1] if t in _TARGETS else t) for i, t in enumerate(targets)],
              loc="upper right", bbox_to_anchor=(1.0, 0.9), fontsize=8, frameon=True)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


if __name__ == "__main__":  # python -m streamparse.harness.plot proxy RUN.json OUT.svg
    if len(sys.argv) != 4 or sys.argv[1] != "proxy":
        sys.exit("usage: python -m streamparse.harness.plot proxy RUN.json OUT.svg|png  (RUN.json: bench --proxy --json)")
    with open(sys.argv[2], encoding="utf-8") as fh:
        plot_proxy(json.load(fh), sys.argv[3])
