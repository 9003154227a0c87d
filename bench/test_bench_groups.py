"""Per request: building a parser for a request's tools, and parsing a complete answer at once, streamparse next
to the engines' parsers (vLLM, SGLang) and the strict regex parser, as `streamparse bench --scenario construction
--scenario answers` measures them (``streamparse.harness.bench_groups``).

Run: pytest bench/test_bench_groups.py --benchmark-only      (engines: bench/README.md)
Construction: a list of 5 or 100 tools never seen before (fresh names each round: ``bench_groups.new_tools``;
the list is made in pytest-benchmark's setup, outside the clock), or the same list again. Whole answers: the mixed
stream of hermes and qwen3_coder (5 calls, 3 KB) and a one-call answer, each parser's non-streaming call
(streamparse's ``parse()``, which builds its parser too; the engines' on a parser built outside the clock).
Outside the clock, each parser's calls are checked against streamparse's. Engines skip when not installed.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

from streamparse import parse
from streamparse.harness.baselines import StreamparseWhole, optional_wholes
from streamparse.harness.bench_groups import _tools_for, one_call
from streamparse.harness.engines import COMPARATORS, engine_wholes
from streamparse.harness.workloads import build_workload

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's own, when the engines import it

BUILDERS = ["streamparse", *(f"{e}:{n}" for d in ("hermes", "qwen3_coder") for e, n in COMPARATORS[d])]


def _whole(parser: str, dialect: str) -> Any:
    if parser == "streamparse":
        return StreamparseWhole()
    if parser in ("regex", "agent-tool-parser"):
        found, notes = optional_wholes(dialect)
        if parser not in found:
            pytest.skip("; ".join(notes) or f"{parser} does not read {dialect}")
        return found[parser]
    engine = parser.split(":")[0]
    if importlib.util.find_spec(engine) is None:
        pytest.skip(f"{engine} not installed (bench/README.md: installing the engine comparators)")
    found, notes = engine_wholes(dialect)
    assert parser in found, notes
    return found[parser]


@pytest.mark.parametrize("kind", ["new", "same"])
@pytest.mark.parametrize("size", [5, 100])
@pytest.mark.parametrize("parser", BUILDERS)
def test_construction(benchmark: Any, parser: str, size: int, kind: str) -> None:
    dialect = "qwen3_coder" if "qwen3_coder" in parser else "hermes"
    whole = _whole(parser, dialect)
    whole.build(whole.prepare(_tools_for(kind, size)))  # warm: imports, shared tables, the same list seen once
    benchmark.pedantic(whole.build, setup=lambda: ((whole.prepare(_tools_for(kind, size)),), {}), rounds=50)


ANSWERS = [(f"{kind}:{d}", p) for d in ("hermes", "qwen3_coder") for kind in ("answer", "answer1")
           for p in ["streamparse", *(f"{e}:{n}" for e, n in COMPARATORS[d]), "regex", "agent-tool-parser"]
           if not (p == "regex" and d != "hermes")]


@pytest.mark.parametrize("scenario,parser", ANSWERS)
def test_whole_answer(benchmark: Any, scenario: str, parser: str) -> None:
    kind, dialect = scenario.split(":")
    workload = one_call(dialect) if kind == "answer1" else build_workload(f"mixed:{dialect}")
    whole = _whole(parser, dialect)
    prepared = whole.prepare(workload.tools)
    built = whole.build(prepared)
    try:
        _, calls = whole.read(whole.extract(built, prepared, workload.text))
    except Exception as exc:  # noqa: BLE001 - a comparator that breaks on this answer is not timed
        pytest.skip(f"{parser} fails on {scenario}: {type(exc).__name__}: {exc}")
    expected = [(c.name, json.loads(c.arguments)) for c in parse(workload.text, workload.tools).tool_calls]
    benchmark(whole.extract, built, prepared, workload.text)
    got = [(n, json.loads(a) if isinstance(a, str) else a) for n, a in calls]
    benchmark.extra_info.update(chars=len(workload.text), calls_right=sum(g == e for g, e in zip(got, expected)),
                                calls_expected=len(expected))
    if parser in ("streamparse", "regex"):
        assert got == expected
