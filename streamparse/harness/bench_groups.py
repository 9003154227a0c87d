"""The benchmark's per-request groups: building a parser for a request's tools (``construction``) and parsing a
complete answer at once (``answers``), streamparse next to the engines' parsers and the optional comparators
(``baselines.optional_wholes``), in one run, the parsers taking turns.

- ``construct:new:N``: a parser for a list of N tools never seen before in the process (every tool's name and
  parameter names carry a fresh number, so no cache can hold them); ``construct:same:N``: for one list already
  built for, the same object again (a library caller's list); ``construct:equal:N``: an equal copy of it,
  decoded anew (a server sees the same tools in every request's JSON).
  streamparse: ``StreamParser(tools)``; vLLM: ``cls(tokenizer, request.tools)`` and ``adjust_request``; SGLang:
  ``FunctionCallParser(tools, name)``, each engine's parsers of ``CONSTRUCT_DIALECTS``. What a server does with
  the tools anyway (vLLM's request model, SGLang's ``Tool`` models) is made outside the clock (``prepare``).
- ``answer:NAME``: the mixed stream of that format (``mixed:NAME``: prose, a call, three at once, a 2 KB
  argument) as one complete answer; ``answer1:NAME``: a sentence and one short call. streamparse:
  ``parse(text, tools)``, which builds its parser for the tools (the same list every time) inside the clock;
  the engines: their non-streaming call (vLLM's ``extract_tool_calls``, SGLang's ``parse_non_stream``) on a
  parser built outside it; ``regex`` (hermes) and ``agent-tool-parser`` take the text alone.

Timing: in each of ``ROUNDS`` rounds every parser in turn builds (or parses) a batch, with the collector off;
each keeps its best batch's mean; a parser that has spent ``BUDGET`` seconds stops after two rounds (a slow
engine), and a whole-answer batch is as many answers as fit ``BATCH_SECONDS`` by the first parse (1 to 10). The results are ``Result`` records whose one "delta" is one construction or
one answer, so ``us_per_delta`` is µs each; whole answers are checked like every stream (``check``).

Invariant: every parser of a workload is timed in the same rounds, on the same inputs, by the same loop.
"""

from __future__ import annotations

import gc
import itertools
import json
import time
from typing import Any, Callable, Iterable

from ..dialects.render import RENDERERS
from .baselines import StreamparseWhole, Whole, optional_wholes
from .check import check, reference
from .results import Result
from .examples import EXAMPLE_TOOLS
from .workloads import Workload, build_workload

__all__ = ["GROUPS", "CONSTRUCT_SIZES", "CONSTRUCT_DIALECTS", "ONE_CALL_DIALECTS", "is_group_workload", "run_groups",
           "new_tools", "one_call", "known", "CONSTRUCT_KINDS"]

CONSTRUCT_SIZES = (5, 100)
CONSTRUCT_KINDS = ("new", "same", "equal")
CONSTRUCT_DIALECTS = ("hermes", "qwen3_coder")  # the engines' parsers built in the construction group
ONE_CALL_DIALECTS = ("hermes", "qwen3_coder")  # answer1:NAME in the answers group
ROUNDS, QUICK_ROUNDS = 9, 2
BUDGET = 0.3  # seconds of timed batches per parser and workload: a parser past it stops (after 2 rounds)
BATCH_SECONDS = 0.004  # a whole-answer batch holds about this much work (1 to 10 answers)
GROUPS: dict[str, Callable[[Iterable[str]], list[str]]] = {
    "construction": lambda dialects: [f"construct:{kind}:{n}" for kind in CONSTRUCT_KINDS for n in CONSTRUCT_SIZES],
    "answers": lambda dialects: [name for d in dialects
                                 for name in (f"answer:{d}", *([f"answer1:{d}"] if d in ONE_CALL_DIALECTS else []))],
}
_KINDS = ("construct", "answer", "answer1")


def is_group_workload(name: str) -> bool:
    return name.split(":", 1)[0] in _KINDS


def known(name: str) -> bool:
    """A construction or whole-answer workload's name: ``construct:new|same|equal:N`` (N ≥ 1) or ``answer:NAME`` /
    ``answer1:NAME`` for a dialect NAME."""
    kind, _, rest = name.partition(":")
    if kind == "construct":
        which, _, n = rest.partition(":")
        return which in CONSTRUCT_KINDS and n.isdecimal() and int(n) > 0
    return kind in ("answer", "answer1") and rest in RENDERERS


# ----------------------------------------------------------------------------- inputs

_fresh = itertools.count()


def new_tools(n: int) -> list[dict[str, Any]]:
    """``n`` tools never seen before in this process: each name and parameter name carries a fresh number."""
    k = next(_fresh)
    return [{"type": "function", "function": {
        "name": f"tool_{k}_{i}", "description": f"Tool {i} of list {k}: reads a path, counts, picks a mode.",
        "parameters": {"type": "object", "properties": {
            f"path_{k}_{i}": {"type": "string", "description": "a file"},
            f"count_{k}_{i}": {"type": "integer"},
            f"mode_{k}_{i}": {"type": "string", "enum": ["fast", "full"]}},
            "required": [f"path_{k}_{i}"]}}} for i in range(n)]


_SEEN: dict[int, list[dict[str, Any]]] = {}  # n -> the one list of the cached cases


def _tools_for(kind: str, n: int) -> list[dict[str, Any]]:
    """A new list (``new``), the one list of ``n`` tools (``same``), or an equal copy of it (``equal``)."""
    if kind == "new":
        return new_tools(n)
    seen = _SEEN.setdefault(n, new_tools(n))
    return seen if kind == "same" else json.loads(json.dumps(seen))


def one_call(dialect: str) -> Workload:
    """A complete answer of one sentence and one short call (``answer1:NAME``)."""
    head = "I will look up the weather in Paris first.\n"
    block, end = RENDERERS[dialect]("get_weather", {"city": "Paris", "days": 3})
    return Workload(f"answer1:{dialect}", head + block, EXAMPLE_TOOLS, [len(head) + end])


# ----------------------------------------------------------------------------- timing

def _batch(run: Callable[[Any], Any], inputs: list[Any]) -> float:
    """Mean seconds of ``run`` over ``inputs``, the collector off (the one loop of both groups)."""
    gc.disable()
    try:
        start = time.perf_counter()
        for item in inputs:
            run(item)
        return (time.perf_counter() - start) / len(inputs)
    finally:
        gc.enable()


def _failed(exc: BaseException) -> str:
    return f"failed ({type(exc).__name__}: {str(exc)[:120]})"


def _row(scenario: str, parser: str, engine: bool, chars: int = 0) -> Result:
    return Result(scenario, parser, chars, 1, float("inf"), 0, float("nan"), None, [], [], None, engine=engine)


def _in_turns(rows: dict[str, Result], steps: dict[str, Callable[[], float]], rounds: int) -> None:
    """``rounds`` rounds, each parser's step in turn; a row keeps its best; a step that raises marks its row failed
    (once) and is not run again. streamparse's own failure is raised."""
    spent = dict.fromkeys(steps, 0.0)
    for round_ in range(rounds):
        for name, step in list(steps.items()):
            if round_ >= 2 and spent[name] > BUDGET:
                continue
            start = time.perf_counter()
            try:
                seconds = step()
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # noqa: BLE001 - a comparator that breaks (a Rust panic too) is a note
                if name == "streamparse":
                    raise
                rows[name].seconds, rows[name].note = float("nan"), _failed(exc)
                del steps[name]
                continue
            rows[name].seconds = min(rows[name].seconds, seconds)
            rows[name].runs += 1
            spent[name] += time.perf_counter() - start


def _construction(name: str, wholes: dict[str, tuple[Whole, bool]], rounds: int, quick: bool) -> list[Result]:
    _, kind, size = name.split(":")
    n = int(size)
    batch = max(1, (2 if quick else 20) * 5 // max(n, 5))
    rows = {p: _row(name, p, engine, n) for p, (_, engine) in wholes.items()}
    steps: dict[str, Callable[[], float]] = {}
    for parser, (whole, _) in wholes.items():
        try:
            whole.build(whole.prepare(_tools_for(kind, n)))  # warm: imports, shared tables; the cached list seen
        except Exception as exc:  # noqa: BLE001 - an engine parser that cannot be built is a note
            if parser == "streamparse":
                raise
            rows[parser].seconds, rows[parser].note = float("nan"), _failed(exc)
            continue
        def step(w: Whole = whole) -> float:
            return _batch(w.build, [w.prepare(_tools_for(kind, n)) for _ in range(batch)])

        steps[parser] = step
    _in_turns(rows, steps, rounds)
    return list(rows.values())


def _answers(name: str, wholes: dict[str, tuple[Whole, bool]], rounds: int, quick: bool) -> list[Result]:
    kind, dialect = name.split(":", 1)
    workload = one_call(dialect) if kind == "answer1" else build_workload(f"mixed:{dialect}")
    text, tools = workload.text, workload.tools
    expected = reference(workload)
    rows = {p: _row(name, p, engine, len(text)) for p, (_, engine) in wholes.items()}
    steps: dict[str, Callable[[], float]] = {}
    for parser, (whole, _) in wholes.items():
        row = rows[parser]
        try:
            prepared = whole.prepare(tools)
            built = whole.build(prepared)
            took = time.perf_counter()
            raw = whole.extract(built, prepared, text)
            took = time.perf_counter() - took
            got_text, calls = whole.read(raw)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - a comparator that breaks (a Rust panic too) is a note
            if parser == "streamparse":
                raise
            row.seconds, row.note = float("nan"), _failed(exc)
            continue
        row.calls = len(calls)
        row.calls_ok, row.text_ok = check(got_text, calls, expected)
        row.calls_expected = len(expected[1])
        row.correct = row.calls_ok == row.calls_expected == row.calls and row.text_ok in ("ok", None)
        if got_text is None:
            row.note = "gives no text (calls only)"

        batch = max(1, min(3 if quick else 10, int(BATCH_SECONDS / max(took, 1e-9))))

        def step(w: Whole = whole, p: Any = prepared, batch: int = batch) -> float:
            built = [(w.build(p), p) for _ in range(batch)]
            return _batch(lambda item: w.extract(item[0], item[1], text), built)

        steps[parser] = step
    _in_turns(rows, steps, rounds)
    return list(rows.values())


def _engine_wholes(dialects: Iterable[str], engines: bool, notes: list[str]) -> dict[str, dict[str, Whole]]:
    from . import engines as engines_mod

    out: dict[str, dict[str, Whole]] = {}
    for dialect in dict.fromkeys(dialects):
        found, lines = engines_mod.engine_wholes(dialect) if engines else ({}, [])
        out[dialect] = found
        notes += [line for line in lines if line not in notes]
    return out


def run_groups(names: list[str], *, quick: bool = False, engines: bool = True,
               log: Callable[[str], None] = print) -> list[Result]:
    """Every ``construct:*`` and ``answer*:*`` workload of ``names``, in order; the notes (an engine or a
    comparator not available) logged once, first. Formatting is ``report_groups``'."""
    rounds = QUICK_ROUNDS if quick else ROUNDS
    notes: list[str] = []
    answer_dialects = [n.split(":", 1)[1] for n in names if n.startswith("answer")]
    construct = any(n.startswith("construct:") for n in names)
    by_dialect = _engine_wholes([*(CONSTRUCT_DIALECTS if construct else ()), *answer_dialects], engines, notes)
    optional = {}
    for dialect in dict.fromkeys(answer_dialects):
        found, lines = optional_wholes(dialect)
        optional[dialect] = found
        notes += [line for line in lines if line not in notes]
    for line in notes:
        log(f"# {line}")
    ours: tuple[Whole, bool] = (StreamparseWhole(), False)
    builders = {"streamparse": ours, **{p: (w, True) for d in (CONSTRUCT_DIALECTS if construct else ())
                                        for p, w in by_dialect[d].items()}}
    results: list[Result] = []
    for name in names:
        if name.startswith("construct:"):
            results += _construction(name, builders, rounds, quick)
        else:
            dialect = name.split(":", 1)[1]
            here = {"streamparse": ours, **{p: (w, True) for p, w in by_dialect[dialect].items()},
                    **{p: (w, False) for p, w in optional[dialect].items()}}
            results += _answers(name, here, rounds, quick)
    return results
