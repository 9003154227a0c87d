"""The construction and whole-answer groups (``bench_groups``), the short-call summary and the prose floor: what
they run, check and print, with the engines absent (fakes stand in for them). No timed assertions."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from streamparse import parse
from streamparse.harness import bench_groups as bg
from streamparse.harness import benchmark as bm
from streamparse.harness.baselines import PARSERS, PROSE_FLOOR, FunctionWhole, raw_api, regex_hermes
from streamparse.harness.report import WIDTH, format_engines, format_ratios
from streamparse.harness.report_groups import format_answers, format_construction, groups_legend
from streamparse.harness.results import Result
from streamparse.harness.workloads import build_workload


@pytest.fixture
def no_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("streamparse.harness.engines.engine_wholes", lambda dialect: ({}, ["engines: left out in tests"]))
    monkeypatch.setattr("streamparse.harness.bench_groups.optional_wholes",
                        lambda dialect: ({"regex": FunctionWhole(regex_hermes, lambda pair: pair)}
                                         if dialect == "hermes" else {}, []))


def test_new_tool_lists_are_never_the_same_and_cached_ones_are() -> None:
    a, b = bg.new_tools(5), bg.new_tools(5)
    names = {t["function"]["name"] for t in a + b}
    assert len(names) == 10
    params = {p for t in a + b for p in t["function"]["parameters"]["properties"]}
    assert len(params) == 30  # parameter names are fresh too: no cache keyed on a schema holds them
    assert bg._tools_for("same", 5) is bg._tools_for("same", 5)
    equal = bg._tools_for("equal", 5)
    assert equal == bg._tools_for("same", 5) and equal is not bg._tools_for("same", 5)


def test_every_group_workload_is_known_to_the_cli() -> None:
    from streamparse.cli import _known_scenario

    names = bm.SCENARIOS["construction"]() + bm.SCENARIOS["answers"]()
    assert {"construct:new:5", "construct:new:100", "construct:same:5", "construct:equal:100"} <= set(names)
    assert {"answer:hermes", "answer1:hermes", "answer:qwen3_coder", "answer1:qwen3_coder"} <= set(names)
    assert all(bg.is_group_workload(n) and _known_scenario(n) for n in names)
    assert not any(bg.known(n) for n in ("construct:old:5", "construct:new:0", "answer:nope", "answer1:"))


@pytest.mark.parametrize("scenario", ["mixed:hermes", "short:hermes", "dialect:hermes"])
def test_the_regex_parser_reads_hermes_answers_as_streamparse_does(scenario: str) -> None:
    workload = build_workload(scenario, calls=12)
    text, calls = regex_hermes(workload.text)
    expected = parse(workload.text, workload.tools)
    assert [(n, json.loads(a)) for n, a in calls] == [(c.name, json.loads(c.arguments)) for c in expected.tool_calls]
    assert text.split() == expected.content.split()


def test_the_regex_parser_is_strict() -> None:
    bad = 'a <tool_call>{"name": "f", "arguments": {"x": 1}</tool_call> b <tool_call>[1]</tool_call>'
    assert regex_hermes(bad) == (bad, [])


def test_the_prose_floor_searches_and_collects_every_delta() -> None:
    session = PROSE_FLOOR(None)
    assert session.feed("a <b") == ("a <b", [])
    feed, _ = raw_api(session)
    feed("more")
    assert session._kept == ["a <b", "more"]  # type: ignore[attr-defined]


def test_the_groups_run_streamparse_and_the_regex_parser_and_check_them(no_engines: None) -> None:
    logged: list[str] = []
    names = ["construct:new:5", "construct:equal:5", "answer:hermes", "answer1:hermes", "answer:qwen3_coder"]
    results = bm.run_suite(names, quick=True, log=logged.append)
    rows = {(r.scenario, r.parser): r for r in results}
    assert set(rows) == {(n, "streamparse") for n in names} | {("answer:hermes", "regex"), ("answer1:hermes", "regex")}
    for r in results:
        assert r.runs >= 1 and 0 < r.seconds < math.inf and r.deltas == 1, r
    for scenario in ("answer:hermes", "answer1:hermes", "answer:qwen3_coder"):
        mine = rows[scenario, "streamparse"]
        assert mine.correct and mine.calls_ok == mine.calls_expected == (1 if "1" in scenario else 5)
    assert rows["answer:hermes", "regex"].calls_ok == 5 and rows["answer:hermes", "regex"].text_ok in ("ok", "ws")
    text = "\n".join(logged)
    assert logged[0] == "# engines: left out in tests" and "== construction" in text and "== whole answers" in text
    assert groups_legend() in text
    headline = bm.ratios(results)
    assert {"construct_new_5_streamparse_us", "answer_hermes_streamparse_over_regex"} <= set(headline)
    assert all(len(line) <= WIDTH for line in text.splitlines() if not line.startswith("# "))


class _FakeEngine:
    """An engine stand-in: nothing to prepare, a dict to build, the regex parser to extract."""

    def __init__(self, broken: bool = False):
        self.broken = broken

    def prepare(self, tools: Any) -> Any:
        return tools

    def build(self, tools: Any) -> Any:
        if self.broken:
            raise RuntimeError("no tokenizer")
        return {"tools": tools}

    def extract(self, parser: Any, tools: Any, text: str) -> Any:
        return regex_hermes(text)

    def read(self, raw: Any) -> Any:
        return raw


class _Panics(BaseException):  # what a Rust panic raises through PyO3: not an Exception
    pass


def test_engines_join_both_groups_and_the_ratios_star_the_best(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("streamparse.harness.engines.engine_wholes", lambda dialect: (
        {"vllm:hermes": _FakeEngine(), "sglang:hermes": _FakeEngine(broken=True)} if dialect == "hermes" else {}, []))

    def panics(text: str) -> Any:
        raise _Panics("byte index is not a char boundary")

    monkeypatch.setattr("streamparse.harness.bench_groups.optional_wholes", lambda dialect: (
        {"agent-tool-parser": FunctionWhole(panics, lambda calls: (None, calls))}, []))
    results = bg.run_groups(["construct:new:5", "answer:hermes"], quick=True, log=lambda s: None)
    rows = {(r.scenario, r.parser): r for r in results}
    assert rows["construct:new:5", "vllm:hermes"].engine and not rows["construct:new:5", "vllm:hermes"].skipped
    assert rows["construct:new:5", "sglang:hermes"].note == "failed (RuntimeError: no tokenizer)"
    assert rows["answer:hermes", "agent-tool-parser"].note.startswith("failed (_Panics: byte index")
    assert rows["answer:hermes", "vllm:hermes"].calls_ok == 5
    table = format_answers(results)
    assert "vllm:hermes*" in table and "×" in table.splitlines()[3]
    assert "sp ÷ fastest engine" in format_construction(results)
    headline = bm.ratios(results)
    assert {"answer_hermes_streamparse_over_best_engine", "construct_new_5_streamparse_over_fastest_engine"} <= set(headline)
    block = format_ratios(headline)
    assert "answer_D / answer1_D" in block and "construct_K_N" in block


def _row(scenario: str, parser: str, seconds: float, engine: bool = False, right: bool = True) -> Result:
    return Result(scenario, parser, 1000, 100, seconds, 5, 1.0, 0, [], [], True, calls_ok=5 if right else 3,
                  calls_expected=5, text_ok="ok", runs=3, engine=engine)


def test_the_short_group_has_its_summary_and_its_ratios_against_sglang() -> None:
    results = [_row("short:qwen3_coder", "streamparse", 0.001), _row("short:qwen3_coder", "vllm:qwen3_coder", 0.01, True),
               _row("short:qwen3_coder", "sglang:qwen3_coder", 0.004, True),
               _row("prose", "streamparse", 0.003), _row("prose", "prose_floor", 0.001)]
    table = format_engines(results, "short")
    assert table.splitlines()[1].startswith("== short: streamparse vs the engines' own parsers")
    assert "sglang:qwen3_coder*" in table and format_engines(results) == ""
    headline = bm.ratios(results)
    assert headline["short_qwen3_coder_streamparse_over_sglang"] == pytest.approx(0.25)
    assert headline["short_qwen3_coder_streamparse_over_best_engine"] == pytest.approx(0.25)
    assert headline["prose_streamparse_over_prose_floor"] == pytest.approx(3.0)


def test_the_groups_legend_in_the_docs_is_the_programs_own() -> None:
    from pathlib import Path

    legend = Path(__file__).resolve().parents[2] / "docs" / "legends" / "groups_columns.txt"
    assert legend.read_text() == groups_legend().rstrip() + "\n"
    assert all(len(line) <= WIDTH for line in groups_legend().splitlines())
    assert PARSERS["streamparse"] is not PROSE_FLOOR
