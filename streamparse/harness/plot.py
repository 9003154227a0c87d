"""The benchmark's picture: per-delta cost against argument size, log-log, one panel per dialect.

Each line is one parser on the ``args:DIALECT:KB`` workloads (one ``write_file`` call whose content
is KB kilobytes, streamed in deltas); a line that stops early is a parser skipped above that size.
A flat line costs the same per delta whatever the size (linear overall); a rising one re-reads
what it has already seen.

Invariant: drawing only; reads ``Result`` records and measures nothing.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .results import Result

__all__ = ["plot", "series"]

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
    """Write the PNG (needs matplotlib). Raises RuntimeError without the scaling workloads."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise RuntimeError("--plot needs matplotlib: pip install 'streamparse[plot]'") from exc
    data = series(results)
    skipped = _skipped(results)
    if not data:
        raise RuntimeError("--plot needs the scaling scenario (args:*) in the run")
    dialects = sorted(data, key=lambda d: (d != "hermes", d))
    parsers: list[str] = []
    for d in dialects:
        parsers += [p for p in data[d] if p not in parsers]
    style = _styles(data)
    fig, axes = plt.subplots(1, len(dialects), figsize=(6.2 * len(dialects), 5.6), sharex=True, sharey=True,
                             squeeze=False)
    for ax, dialect in zip(axes[0], dialects):
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
    axes[0][0].set_ylabel("cost per delta (µs, lower is better)")
    deltas = f"{chunk}-character" if chunk != "random" else "1-12-character"
    fig.suptitle(f"Parsing cost per delta against argument size ({deltas} deltas, log-log)", fontsize=13)
    fig.text(0.5, 0.905, "flat: linear overall; rising: the parser re-reads what it has seen. A line that stops: "
             "larger sizes were not run (they would take minutes)", ha="center", fontsize=8.5, color="#444444")
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.06 + 0.035 * ((len(labels) - 1) // 4), 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)
