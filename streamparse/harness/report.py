"""The benchmark's tables, their legends and the headline ratios (``streamparse bench``); the picture is in ``plot``.

Invariant: formatting only; reads ``Result`` records and measures nothing. Every
line it returns fits in ``WIDTH`` columns, legends included; a baseline that reads no calls of a format is shown
as ``n/a``, never as a mismatch.
"""

from __future__ import annotations

import re
import textwrap
from typing import TYPE_CHECKING, Any, Iterable

from .table import fmt, lay_out
from .workloads import SCALING_DIALECTS

if TYPE_CHECKING:
    from .results import Result

__all__ = ["WIDTH", "BASELINES", "format_table", "table_legend", "format_engines", "engines_legend", "ratios",
           "format_ratios", "best_engine", "not_applicable"]

WIDTH = 100  # every line printed fits in this many columns
BASELINES = ("identity", "floor", "naive", "prose_floor")  # parse nothing, or only the formats a regex reads
NOT_READ = "reads no calls of this format (n/a: not a mismatch)"


def _sig(value: float | None) -> str:
    """About four significant figures in at most 7 characters: 0.281, 3.036, 36.17, 610.4, 6,485."""
    if value is None or value != value:
        return "-"
    size = abs(value)
    return fmt(value, 3 if size < 10 else 2 if size < 100 else 1 if size < 1000 else 0)


def not_applicable(r: Result) -> bool:
    """A baseline that found no call where calls were expected: it cannot read this format (or any), which is
    not a wrong answer. (A baseline that finds some calls and misses others is a real mismatch.)"""
    return r.parser in BASELINES and not r.skipped and r.calls == 0 and bool(r.calls_expected)


def _calls_cell(r: Result) -> str:
    if r.calls_ok is None:
        return "-"
    if r.calls_ok == r.calls_expected == r.calls:
        return "ok"
    extra = r.calls - r.calls_ok if r.calls > r.calls_ok == r.calls_expected else 0
    return f"{r.calls_ok}/{r.calls_expected}" + (f"+{extra}" if extra else "")


def _check_cell(r: Result) -> str:
    """``calls / text`` in one cell (the engines table)."""
    return "n/a" if not_applicable(r) else "-" if r.calls_ok is None else f"{_calls_cell(r)} / {r.text_ok or '-'}"


_COLUMNS = ("MB/s", "µs/Δ", "×floor", "KiB", "held", "lat Δ", "p50 µs", "max µs", "calls", "text")
_MIN_WIDTHS = (6, 7, 6, 6, 7, 5, 7, 7, 7, 7)  # so that tables of one run line up when their figures allow


def _lay_out(names: list[str], rows: list[list[str]]) -> list[str]:
    """Right-aligned figure columns as wide as their widest cell; the parser column takes what is left of
    WIDTH (a longer name is clipped with …)."""
    return lay_out([[name, *row] for name, row in zip(names, rows)], "l" + "r" * len(_COLUMNS),
                   least=(0, *_MIN_WIDTHS), fit=0, width=WIDTH)


def format_table(results: list[Result]) -> str:
    """One workload's table (columns: ``table_legend``), then one line per note (why a parser was skipped,
    stopped or timed otherwise), wrapped to ``WIDTH``."""
    if not results:
        return ""
    floor = next((r for r in results if r.parser == "floor" and not r.skipped), None)
    names, rows = ["parser"], [list(_COLUMNS)]
    notes: dict[str, list[str]] = {}  # note -> the parsers it is about (one line for several alike)
    for r in results:
        lat = sorted(x for x in r.latency_us if x == x)
        over = r.us_per_delta / floor.us_per_delta if floor and floor.seconds and not r.skipped else None
        na = not_applicable(r)
        names.append(r.parser)
        rows.append([
            fmt(r.mb_per_s), _sig(r.us_per_delta), _sig(over), fmt(r.peak_kib, 0),
            "-" if r.max_held is None else f"{r.max_held:,}",
            str(max(r.latency_deltas)) if r.latency_deltas else "-",
            _sig(lat[len(lat) // 2] if lat else None), _sig(lat[-1] if lat else None),
            "n/a" if na else _calls_cell(r), "n/a" if na else r.text_ok or "-"])
        for note in (r.note, NOT_READ if na and r.parser == "naive" else ""):  # identity, floor: the legend says
            if note:
                notes.setdefault(note, []).append(r.parser)
    lines = [f"\n== {results[0].scenario}  ({results[0].chars:,} chars, {results[0].deltas:,} deltas)",
             *_lay_out(names, rows)]
    for note, who in notes.items():
        lines += textwrap.wrap(f"{', '.join(who)}: {note}", WIDTH - 2, initial_indent="  ", subsequent_indent="    ")
    return "\n".join(lines)


def table_legend(naive_kb: int) -> str:
    """One line per column of ``format_table`` (and per baseline): printed once, under the first table.
    ``naive_kb``: the size up to which the naive baseline runs (``benchmark.NAIVE_MAX_CHARS``)."""
    return "\n".join((
        "  columns of every workload table:",
        "  parser    streamparse, the baselines below, engines' own parsers (vllm:*, sglang:*), --compare",
        "  identity  baseline: hands each delta back as text, parses nothing (the cost of the loop alone)",
        "  floor     baseline: one regex search per delta for start markers, parses nothing",
        f"  naive     baseline: re-parses the whole buffer per delta; runs up to {naive_kb} KB (quadratic)",
        "  prose_floor  baseline, prose only: one search for a character that can begin a marker (<[{`, a",
        "            line break), the delta collected in a list: the least a parser's prose path can cost",
        "  MB/s      millions of characters parsed per second (best timed run)",
        "  µs/Δ      microseconds per delta, i.e. per feed() call (best timed run)",
        "  ×floor    this parser's µs/Δ divided by the floor's µs/Δ in the same table",
        "  KiB       peak memory allocated during one run (tracemalloc), KiB; - when not traced",
        "  held      most characters held back at once (fed, not yet emitted); - when unknown",
        "  lat Δ     most deltas between the one that completes a call and the one that emits it",
        "  p50 µs    median µs from feeding a call's last delta to the call leaving the parser",
        "  max µs    the same, slowest call",
        "  calls     calls equal to streamparse's whole-text parse: ok (all, none extra), or right/expected",
        "  text      text against that parse: ok, ws (differs only in whitespace), differs; - not checked",
        "  n/a       a baseline that reads no calls of this format: not a mismatch",
    ))


def _engine_rows(results: list[Result], scenario: str) -> list[Result]:
    return [r for r in results if r.scenario == scenario and r.engine and not r.skipped and r.complete]


def _all_right(r: Result) -> bool:
    return r.calls_ok is not None and r.calls_ok == r.calls_expected == r.calls


def best_engine(results: list[Result], scenario: str) -> Result | None:
    """The engine row with the lowest per-delta cost among those run to the end on ``scenario`` whose calls were
    all right; None when no engine got every call right (a parser that misses calls is no yardstick)."""
    right = [r for r in _engine_rows(results, scenario) if _all_right(r)]
    return min(right, key=lambda r: r.us_per_delta, default=None)


def _engine_cell(r: Result, best: Result | None) -> str:
    star = "*" if r is best else ""
    if r.skipped:
        return f"{r.parser} {'failed' if r.note.startswith('failed') else 'skipped'}"
    stopped = "" if r.complete else " (stopped)"
    return f"{r.parser}{star} {r.us_per_delta:,.1f}{stopped} [{_check_cell(r)}]"


def _packed(head: str, cells: list[str]) -> list[str]:
    """``head`` then the cells joined by ``; ``, continued on lines indented under the first cell."""
    lines, line = [], head
    for i, cell in enumerate(cells):
        joined = line + ("; " if i and line.strip() else "") + cell
        if i and len(joined) > WIDTH and line.strip():
            lines.append(line + ";")
            line = " " * len(head) + cell
        else:
            line = joined
    return lines + [line]


def format_engines(results: list[Result], kind: str = "mixed") -> str:
    """One table for every format of the engines group (``mixed:*``; ``kind="short"``: the short group's
    ``short:*``): streamparse's µs per delta and check, the ratio to the best engine (``best_engine``, starred),
    and each engine's µs per delta with its check (``calls / text``). Empty when the run had no engine on such a
    stream. Columns: ``engines_legend``."""
    scenarios = [r.scenario for r in results if r.scenario.startswith(kind + ":") and r.parser == "streamparse"]
    rows = []
    for scenario in scenarios:
        mine = next(r for r in results if r.scenario == scenario and r.parser == "streamparse")
        engines = [r for r in results if r.scenario == scenario and r.engine]
        if not engines:
            continue
        best = best_engine(results, scenario)
        ratio = mine.us_per_delta / best.us_per_delta if best and best.us_per_delta else None
        rows.append(((scenario.split(":", 1)[1], _sig(mine.us_per_delta), _check_cell(mine),
                      "none right" if ratio is None else f"{ratio:.3f}×"), [_engine_cell(r, best) for r in engines]))
    if not rows:
        return ""
    head, *starts = lay_out([("format", "sp µs/Δ", "sp check", "ratio"), *(cells for cells, _ in rows)], "lrll",
                            ragged=False)
    what = "one mixed stream" if kind == "mixed" else "one stream of short calls"
    lines = [f"\n== {'engines' if kind == 'mixed' else kind}: streamparse vs the engines' own parsers, {what} per "
             "format (same run)",
             head + " engines: µs/Δ [calls / text]"]
    for start, (_, listed) in zip(starts, rows):
        lines += _packed(start + " ", listed)
    return "\n".join(lines)


def engines_legend() -> str:
    """One line per column of ``format_engines``."""
    return "\n".join((
        "  format    the dialect; its workload is mixed:FORMAT (short table: short:FORMAT, short calls)",
        "  sp µs/Δ   streamparse's microseconds per delta on it; sp check: its calls / text (see above)",
        "  ratio     streamparse's µs/Δ ÷ the starred engine's (below 1: streamparse is faster)",
        "  *         best engine: lowest µs/Δ among engines run to the end with every call right",
        "  none right  no engine got every call right: no yardstick, no ratio",
        "  engines   each engine parser's µs/Δ, [calls / text] against streamparse's whole-text parse",
    ))


def ratios(results: list[Result]) -> dict[str, float]:
    """The headline ratios: same run, same machine (each explained by ``format_ratios``).

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


_RATIO_MEANINGS = (  # (key pattern, one line); D stands for a dialect
    (r"prose_streamparse_over_floor", "prose: streamparse's time ÷ the floor's (the price of parsing)"),
    (r"tool_heavy_mb_per_s", "tool_heavy: streamparse's millions of characters per second"),
    (r"tool_heavy_naive_over_streamparse", "tool_heavy: naive's time ÷ streamparse's"),
    (r"scaling_.+_256kb_over_16kb", "scaling_D: streamparse's time on a 256 KB argument ÷ on 16 KB (16 = linear)"),
    (r"scaling_.+_16kb_naive_over_streamparse", "scaling_D: naive's time ÷ streamparse's on a 16 KB argument"),
    (r"agent_.+_streamparse_over_floor", "agent_D: streamparse's time ÷ the floor's on the agent workload"),
    (r".+_streamparse_over_best_engine", "D: streamparse's µs/Δ ÷ the best engine's (engines table; below 1: "
                                         "faster)"),
    # the groups' ratios (report_groups.group_ratios)
    (r"prose_streamparse_over_prose_floor", "prose: streamparse's time ÷ the prose floor's (search + collect)"),
    (r"short_.+_streamparse_over_best_engine", "short_D: the same on the short-call stream (short:D)"),
    (r"(short|mixed)_.+_streamparse_over_sglang", "(short|mixed)_D_..._over_sglang: ÷ SGLang's best parser "
                                                  "with every call right"),
    (r"answer1?_.+_streamparse_over_best_engine", "answer_D / answer1_D: streamparse's parse() ÷ the best "
                                                  "engine's, per whole answer"),
    (r"answer_.+_streamparse_over_regex", "answer_D_..._over_regex: parse() ÷ the strict regex parser's"),
    (r"construct_.+_streamparse_us", "construct_K_N: µs to build streamparse's parser for N tools"),
    (r"construct_.+_streamparse_over_fastest_engine", "construct_K_N_...: ÷ the fastest engine's construction"),
)


def format_ratios(headline: dict[str, float]) -> str:
    """The ratio block: one line per ratio, then one line saying what the block is and one per kind of ratio
    present. Figures in the block that are not ratios are labelled by their key (``..._mb_per_s``)."""
    if not headline:
        return ""
    lines = ["\n== ratios (same run, same machine)"]
    lines += [f"{key:<50}{value:>10.3g}" for key, value in headline.items()]
    lines.append("  each: one figure ÷ another, both measured in this run (time: best timed run)")
    lines += [f"  {meaning}" for pattern, meaning in _RATIO_MEANINGS
              if any(re.fullmatch(pattern, key) for key in headline)]
    return "\n".join(lines)
