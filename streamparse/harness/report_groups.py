"""The tables and ratios of the per-request groups (``bench_groups``): construction and whole answers; and the
headline ratios of the short-call and prose-floor rows.

Invariant: formatting only; reads ``Result`` records and measures nothing; every line fits ``report.WIDTH``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .report import WIDTH, _check_cell, _engine_cell, _packed, _sig, best_engine
from .table import lay_out

if TYPE_CHECKING:
    from .results import Result

__all__ = ["format_construction", "format_answers", "groups_legend", "group_ratios", "TARGET_DIALECTS"]

TARGET_DIALECTS = ("hermes", "qwen3_coder")  # also compared with SGLang's best parser alone (short and mixed)
_KIND_LABELS = {"new": "new", "same": "same", "equal": "equal"}


def _construct_columns(results: list[Result]) -> list[str]:
    return list(dict.fromkeys(r.scenario for r in results if r.scenario.startswith("construct:")))


def _fastest_engine(results: list[Result], scenario: str) -> Result | None:
    return min((r for r in results if r.scenario == scenario and r.engine and not r.skipped),
               key=lambda r: r.seconds, default=None)


def format_construction(results: list[Result]) -> str:
    """One row per parser, one column per ``construct:KIND:N`` (µs per parser built), then streamparse's ratio to
    the fastest engine of each column. Empty when no construction ran."""
    columns = _construct_columns(results)
    if not columns:
        return ""
    parsers = list(dict.fromkeys(r.parser for r in results if r.scenario in columns))
    by = {(r.scenario, r.parser): r for r in results if r.scenario in columns}
    head = ["parser", *(f"{_KIND_LABELS.get(c.split(':')[1], c.split(':')[1])} {c.split(':')[2]}" for c in columns)]
    rows = [head]
    for parser in parsers:
        cells = []
        for column in columns:
            r = by.get((column, parser))
            cells.append("-" if r is None else "failed" if r.skipped else _sig(r.us_per_delta))
        rows.append([parser, *cells])
    ratio_row = ["sp ÷ fastest engine"]
    for column in columns:
        mine, best = by.get((column, "streamparse")), _fastest_engine(results, column)
        ratio_row.append(f"{mine.seconds / best.seconds:.3f}×" if mine and best and best.seconds else "-")
    rows.append(ratio_row)
    notes = [f"  {r.parser} ({r.scenario}): {r.note}" for r in results if r.scenario in columns and r.note]
    return "\n".join(["\n== construction: a parser for one request's tools, µs each (same run, in turns)",
                      *lay_out(rows, "l" + "r" * len(columns), width=WIDTH), *notes])


def format_answers(results: list[Result]) -> str:
    """One row per whole answer (``answer:NAME``: 5 calls; ``answer1:NAME``: 1 call): streamparse's µs per answer
    and check, the ratio to the best engine (the fastest with every call right, starred), then every other
    parser's µs [calls / text]. Empty when no answer ran."""
    scenarios = [r.scenario for r in results if r.scenario.startswith("answer") and r.parser == "streamparse"]
    if not scenarios:
        return ""
    rows = []
    for scenario in scenarios:
        kind, dialect = scenario.split(":", 1)
        mine = next(r for r in results if r.scenario == scenario and r.parser == "streamparse")
        best = best_engine(results, scenario)
        ratio = mine.seconds / best.seconds if best and best.seconds else None
        has_engine = any(r.scenario == scenario and r.engine for r in results)
        others = [_engine_cell(r, best) for r in results if r.scenario == scenario and r.parser != "streamparse"]
        rows.append(((dialect, "1 call" if kind == "answer1" else f"{mine.calls_expected} calls",
                      _sig(mine.us_per_delta), _check_cell(mine),
                      "-" if not has_engine else "none right" if ratio is None else f"{ratio:.3f}×"), others))
    head, *starts = lay_out([("format", "answer", "sp µs", "sp check", "ratio"), *(cells for cells, _ in rows)],
                            "llrll", ragged=False)
    lines = ["\n== whole answers: parse() vs the engines' non-streaming parse, µs per answer (same run)",
             head + " others: µs [calls / text]"]
    for start, (_, listed) in zip(starts, rows):
        lines += _packed(start + " ", listed)
    notes = dict.fromkeys(f"  {r.parser}: {r.note}" for r in results
                          if r.scenario in scenarios and r.note and r.parser != "streamparse")
    return "\n".join([*lines, *notes])


def groups_legend() -> str:
    """One line per column of ``format_construction`` and ``format_answers``."""
    return "\n".join((
        "  construction: µs to build a parser for one request's tools (best batch mean, parsers in turns)",
        "  new N     N tools never seen before in the process (fresh names: no cache holds them)",
        "  same N    the same list object again; equal N: an equal copy, decoded anew (a server's case)",
        "  built     vLLM: cls(tokenizer, tools) + adjust_request; SGLang: FunctionCallParser(tools, name);",
        "            streamparse: StreamParser(tools); each from the request's tools read outside the clock",
        "            (vLLM's request model, SGLang's Tool models, streamparse's read_tools)",
        "  whole answers: µs to parse one complete answer; streamparse's parse() builds its parser too",
        "            (from the tools read)",
        "  answer    N calls: the mixed stream of the format as one answer; 1 call: a sentence and a call",
        "  ratio     streamparse ÷ the starred engine: fastest with every call right (below 1: faster)",
        "  others    engines (extract_tool_calls / parse_non_stream, parser built outside the clock),",
        "            regex (<tool_call>{JSON}</tool_call> + json.loads), agent-tool-parser when installed",
    ))


def _over(a: Result | None, b: Result | None) -> float | None:
    return a.seconds / b.seconds if a and b and not a.skipped and not b.skipped and b.seconds else None


def _best_sglang(results: list[Result], scenario: str) -> Result | None:
    right = [r for r in results if r.scenario == scenario and r.parser.startswith("sglang:") and not r.skipped
             and r.complete and r.calls_ok is not None and r.calls_ok == r.calls_expected == r.calls]
    return min(right, key=lambda r: r.seconds / max(r.deltas, 1), default=None)


def group_ratios(results: list[Result]) -> dict[str, float]:
    """The ratios of the short-call, prose-floor, construction and whole-answer rows (``benchmark.ratios`` adds
    them to ``report.ratios``'; ``report.format_ratios`` says what each kind is)."""
    by = {(r.scenario, r.parser): r for r in results if not r.skipped}
    out: dict[str, float] = {}
    found = _over(by.get(("prose", "streamparse")), by.get(("prose", "prose_floor")))
    if found is not None:
        out["prose_streamparse_over_prose_floor"] = found
    for scenario in dict.fromkeys(r.scenario for r in results if r.parser == "streamparse"):
        kind, _, dialect = scenario.partition(":")
        mine = by.get((scenario, "streamparse"))
        if kind in ("short", "answer", "answer1"):
            best = best_engine(results, scenario)
            if mine and best:
                out[f"{kind}_{dialect}_streamparse_over_best_engine"] = mine.us_per_delta / best.us_per_delta
        if kind in ("short", "mixed") and dialect in TARGET_DIALECTS:
            sglang = _best_sglang(results, scenario)
            if mine and sglang:
                out[f"{kind}_{dialect}_streamparse_over_sglang"] = mine.us_per_delta / sglang.us_per_delta
        if kind == "answer":
            regex = _over(mine, by.get((scenario, "regex")))
            if regex is not None:
                out[f"answer_{dialect}_streamparse_over_regex"] = regex
        if kind == "construct" and mine:
            key = "construct_" + dialect.replace(":", "_")
            out[f"{key}_streamparse_us"] = mine.us_per_delta
            fastest = _over(mine, _fastest_engine(results, scenario))
            if fastest is not None:
                out[f"{key}_streamparse_over_fastest_engine"] = fastest
    return out
