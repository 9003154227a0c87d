"""The report of a BFCL run: a table per category x configuration, speed, failure kinds, and for
the streamparse configurations, each failure's raw model text with what the parser made of it.

"What the parser made of it" (issue 23: which calls the parser lost, which the model got wrong):
the raw text is parsed again with ``streamparse.parse`` (the proxy's options for that
configuration), its diagnostics are kept, and a few textual what-if repairs are tried (JSON
literals in a pythonic call, ``//`` comments in JSON, undeclared calls dropped from a pythonic list,
an arithmetic value computed, pythonic lists on one line put on lines of their own, a dotted name
written for a tool offered with ``_``); a repair that turns the failure into a correct answer marks a call
a lenient parser could have recovered. Values outside a schema ``enum`` are flagged.

Invariant: analysis only; nothing here changes a record's score, and the repairs are used for
nothing but this report (they may evaluate arithmetic, which the parser never does).
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections import Counter, defaultdict
from typing import Any, Callable, Iterable, Mapping, Sequence

import streamparse

from ..prompting.requests import prompt_request
from .bfcl_score import FAILURE_KINDS, openai_tools, score_case

__all__ = ["analyse", "report", "REPAIRS"]


# --------------------------------------------------------------------------- what-if repairs

def _json_literals(text: str) -> str:
    """``true``/``false``/``null`` as Python's, inside what looks like a pythonic call only."""
    if not re.search(r"\w\s*\([^()]*\b(true|false|null)\b", text):
        return text
    return re.sub(r"\b(true|false|null)\b", lambda m: {"true": "True", "false": "False", "null": "None"}[m[1]], text)


def _comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"(?m)(?<![:\"\w/])[ \t]*//[^\n]*$", "", text)


def _pythonic_lists(text: str, keep: Callable[[ast.Call], ast.expr | None]) -> str:
    """Rewrite each ``[call(...), ...]`` that Python reads, element by element."""
    def fix(match: re.Match[str]) -> str:
        try:
            tree = ast.parse(match[0], mode="eval")
        except SyntaxError:
            return match[0]
        if not isinstance(tree.body, ast.List) or not all(isinstance(e, ast.Call) for e in tree.body.elts):
            return match[0]
        kept = [k for e in tree.body.elts if isinstance(e, ast.Call) and (k := keep(e)) is not None]
        return ast.unparse(ast.List(elts=kept, ctx=ast.Load())) if kept else ""

    return re.sub(r"\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\]", fix, text)


def _undeclared_dropped(names: set[str]) -> Callable[[str], str]:
    def keep(call: ast.Call) -> ast.expr | None:
        return call if ast.unparse(call.func) in names else None

    return lambda text: _pythonic_lists(text, keep)


_SAFE = {"pi": math.pi, "e": math.e, "PI": math.pi, "E": math.e}


def _number(node: ast.expr) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("math", "Math"):
        return _SAFE.get(node.attr)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        left, right = _number(node.left), _number(node.right)
        if left is None or right is None or (isinstance(node.op, ast.Div) and right == 0):
            return None
        ops: dict[type, Callable[[float, float], float]] = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
                                                            ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
                                                            ast.Pow: lambda a, b: a ** b if abs(b) < 64 else math.nan}
        return ops[type(node.op)](left, right)
    return None


_NUM = r"(?:\d+\.?\d*(?:[eE][+-]?\d+)?|(?:math|Math)\.\w+)"
_EXPRESSION = re.compile(rf"(?:[=:]\s*)(-?{_NUM}(?:\s*[*/+\-]\s*{_NUM})+|(?:math|Math)\.\w+)")


def _expressions(text: str) -> str:
    """Arithmetic values computed (JSON ``"x": 2 * Math.PI`` or pythonic ``x=2 * math.pi``)."""
    def fix(match: re.Match[str]) -> str:
        expr = match[1]
        try:
            value = _number(ast.parse(expr.strip(), mode="eval").body)
        except SyntaxError:
            return match[0]
        if value is None or value != value:
            return match[0]
        return match[0][: match.start(1) - match.start(0)] + repr(value)

    return _EXPRESSION.sub(fix, text)


REPAIRS: dict[str, Callable[[str, set[str]], str]] = {
    "json_literals_in_pythonic": lambda text, names: _json_literals(text),
    "comments_in_json": lambda text, names: _comments(text),
    "undeclared_call_in_list": lambda text, names: _undeclared_dropped(names)(text),
    "expression_as_value": lambda text, names: _expressions(text),
    "dotted_name_for_offered_underscore_name": lambda text, names: re.sub(
        r"(?<![\w.])(\w+(?:\.\w+)+)(?=\s*\(|\")",
        lambda m: m[1].replace(".", "_") if m[1].replace(".", "_") in names else m[1], text),
    "pythonic_lists_on_one_line": lambda text, names: re.sub(r"\)\][ \t]+\[(?=\w+\()", ")]\n[", text),
}


# --------------------------------------------------------------------------- analysis

def _parse_options(config: str, body: Mapping[str, Any]) -> dict[str, Any]:
    if config.startswith("prompt:"):
        dialect = config.split(":", 1)[1].partition("+")[0]  # prompt:DIALECT or prompt:DIALECT+constrain
        return prompt_request(body, dialect).parser_options()
    return {}


def _calls(parsed: Any) -> list[dict[str, Any]]:
    return [{"name": c.name, "arguments": c.arguments} for c in parsed.tool_calls]


def _enum_misses(calls: Iterable[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> list[str]:
    schemas = {t["function"]["name"]: t["function"].get("parameters") or {} for t in tools}
    misses = []
    for call in calls:
        try:
            arguments = json.loads(call["arguments"]) if isinstance(call["arguments"], str) else call["arguments"]
        except ValueError:
            continue
        props = schemas.get(call["name"], {}).get("properties") or {}
        for key, value in (arguments or {}).items() if isinstance(arguments, dict) else ():
            enum = (props.get(key) or {}).get("enum") if isinstance(props.get(key), dict) else None
            if enum and value not in enum:
                close = isinstance(value, str) and value.strip().lower() in [str(e).lower() for e in enum]
                misses.append(f"{key}={value!r}{' (case only)' if close else ''} not in {enum}")
    return misses


# Diagnostics that mean a block stayed text or was cut; others (repaired, coerced, enum_mismatch) only inform.
_REFUSALS = {"rejected", "unknown_tool", "incomplete", "missing_required", "block_too_large", "too_many_calls",
             "too_deep"}


def analyse(record: Mapping[str, Any], case: Mapping[str, Any]) -> dict[str, Any]:
    """For a failing streamparse record: diagnostics, the repair that would have saved it, enum misses."""
    tools = openai_tools(case["function"])
    body = {"model": "m", "messages": case["question"][0], "tools": tools}
    raw = record.get("raw") or ""
    options = _parse_options(record["config"], body)
    parsed = streamparse.parse(raw, tools, **options)
    out: dict[str, Any] = {"diagnostics": [f"{d.code}: {d.message}" for d in parsed.diagnostics],
                           "enum_misses": _enum_misses(record.get("calls") or [], tools) +
                           [d.message for d in parsed.diagnostics if d.code == "enum_mismatch"], "recoverable_by": None}
    if record["config"] == "native":
        out["streamparse_would_score"] = score_case(record["category"], case["function"], _calls(parsed),
                                                    case["ground_truth"]).correct
        return out
    names = {t["function"]["name"] for t in tools}
    out["more_calls_by"] = None  # a repair that finds more calls, even if the answer stays wrong
    for name, repair in REPAIRS.items():
        fixed = repair(raw, names)
        if fixed != raw:
            again = streamparse.parse(fixed, tools, **options)
            if len(again.tool_calls) > len(parsed.tool_calls) and not out["more_calls_by"]:
                out["more_calls_by"] = name
            if score_case(record["category"], case["function"], _calls(again), case["ground_truth"]).correct:
                out["recoverable_by"] = name
                break
    # Call-like spots in the text: a declared (or BFCL's dotted) name opening a call or named in JSON.
    spelled = names | {f["name"] for f in case["function"]}
    alternatives = "|".join(re.escape(n) for n in sorted(spelled, key=len, reverse=True))
    out["call_like_spots"] = len(re.findall(rf"(?<![\w.`'])(?:{alternatives})\s*\(|\"name\"\s*:\s*\"(?:{alternatives})\"",
                                            raw)) if alternatives else 0
    if out["recoverable_by"]:
        out["verdict"] = "parser_lost"
    elif out["more_calls_by"]:
        out["verdict"] = f"parser_lost_a_call_but_answer_wrong_anyway({out['more_calls_by']})"
    elif out["call_like_spots"] > len(record.get("calls") or []) and not any(d.code in _REFUSALS
                                                                            for d in parsed.diagnostics):
        out["verdict"] = "unparsed_call_like_text"  # more call-like spots than calls, and not a word said
    elif any(d.code in _REFUSALS for d in parsed.diagnostics):
        out["verdict"] = "parser_refused_block"  # a block kept as text; the model's call was wrong anyway
    else:
        out["verdict"] = "model_wrong"
    return out


# --------------------------------------------------------------------------- report

def _short(text: str | None, limit: int = 300) -> str:
    text = (text or "").replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + "…"


def report(records: Sequence[Mapping[str, Any]], cases: Mapping[str, Mapping[str, Any]],
           examples: int = 4) -> str:
    """The table, speed, failure kinds and (streamparse configurations) the parser-loss analysis."""
    first: dict[tuple[str, str], Mapping[str, Any]] = {}
    for r in records:
        first.setdefault((r["config"], r["id"]), r)
    records = list(first.values())  # a case asked twice (two runs into one file) counts once
    configs = list(dict.fromkeys(r["config"] for r in records))
    categories = list(dict.fromkeys(r["category"] for r in records))
    cell: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        cell[(r["category"], r["config"])].append(r)
    width = max([14] + [len(c) for c in configs])
    lines = ["", "correct/total (BFCL AST rule)", f"{'category':<14} " + " ".join(f"{c:>{width}}" for c in configs)]
    for cat in categories:
        row = []
        for cfg in configs:
            rs = cell[(cat, cfg)]
            row.append(f"{sum(r['correct'] for r in rs)}/{len(rs)}" if rs else "-")
        lines.append(f"{cat:<14} " + " ".join(f"{v:>{width}}" for v in row))
    lines += ["", "speed: requests/s (s/request) over all asked cases, streamed; stream vs whole answers"]
    for cfg in configs:
        rs = [r for r in records if r["config"] == cfg]
        secs = sum(r["seconds"] for r in rs)
        compared = [r["nonstream_same"] for r in rs if r.get("nonstream_same") in (True, False)]
        differs = sum(r.get("nonstream_same") == "raw_differs" for r in rs)
        timings = [t for r in rs for t in [r.get("timings")] + [u.get("timings") for u in r.get("upstream") or []]
                   if isinstance(t, dict) and "predicted_per_second" in t]
        tps = [t["predicted_per_second"] for t in timings]
        model_s = sum(t.get("prompt_ms", 0) + t.get("predicted_ms", 0) for t in timings) / 1000
        lines.append(f"  {cfg:<{width}} {len(rs) / secs if secs else 0:.3f} req/s ({secs / max(len(rs), 1):.1f} s), "
                     f"stream==whole {sum(compared)}/{len(compared)} (+{differs} where the model wrote other text)"
                     + (f"; llama.cpp's own time {model_s / len(timings):.1f} s/request, decode "
                        f"{sum(tps) / len(tps):.1f} tok/s over {len(timings)}" if timings else ""))
    lines += ["", "failure kinds"]
    for cfg in configs:
        counts = Counter(r["kind"] for r in records if r["config"] == cfg and not r["correct"])
        lines.append(f"  {cfg:<{width}} " + ", ".join(f"{k} {counts[k]}" for k in FAILURE_KINDS if counts[k]))
    lines += ["", "streamparse configurations: failures by what the parser did (issue 23)"]
    groups: dict[str, list[tuple[Mapping[str, Any], dict[str, Any]]]] = defaultdict(list)
    native_rescued: Counter[str] = Counter()
    for r in records:
        if r["correct"] or r["id"] not in cases:
            continue
        a = analyse(r, cases[r["id"]])
        if r["config"] == "native":
            native_rescued[r["category"]] += bool(a["streamparse_would_score"])
            continue
        key = f"{a['verdict']}:{a['recoverable_by'] or r['kind']}"
        groups[key].append((r, a))
        if a["enum_misses"]:
            groups["enum_mismatch (model; a constraint could fix)"].append((r, a))
    for key in sorted(groups, key=lambda k: (not k.startswith("parser"), k)):
        items = groups[key]
        per = Counter(r["config"] for r, _ in items)
        lines.append(f"- {key}: {len(items)} (" + ", ".join(f"{c} {n}" for c, n in per.items()) + ")")
        for r, a in items[:examples]:
            note = a["enum_misses"] or a["diagnostics"][:1] or [f"{r['kind']}: {r['detail']}"]
            lines.append(f"    [{r['config']} {r['id']}] {r['kind']} — {_short('; '.join(note), 160)}")
            lines.append(f"      raw: {_short(r.get('raw'))!r}")
    if native_rescued:
        lines += ["", "native failures that streamparse.parse of llama.cpp's leftover content would score correct: "
                  + ", ".join(f"{c} {n}" for c, n in native_rescued.items())]
    return "\n".join(lines)
