"""The benchmark harness: workloads are deterministic and correct, the naive size rule, the engines'
comparators wired per dialect with their correctness, the plot, the ratios; a smoke run of `streamparse bench`."""

from __future__ import annotations

import importlib.util
import io
import json
from typing import Any

import pytest

import streamparse
import streamparse.harness.benchmark as bm
from streamparse.harness.baselines import PARSERS, raw_api
from streamparse.harness.benchmark import RENDERERS, Result, build_workload, split
from streamparse.cli import main
from streamparse.harness.workloads import AGENT_CALLS, AGENT_SMALL, AGENT_WRITE, KB


@pytest.fixture
def no_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real engines (when installed) are measured by `streamparse bench`, not by these quick tests."""
    monkeypatch.setattr("streamparse.harness.engines.engine_comparators", lambda dialect: ({}, ["engines: left out in tests"]))


@pytest.mark.parametrize("scenario", ["tool_heavy", *[f"dialect:{d}" for d in RENDERERS], "args:qwen3_coder:4",
                                      "args:hermes:4", "args:mistral:1", "agent:hermes", "agent:qwen3_coder"])
def test_workloads_parse_to_their_calls_and_call_ends_are_exact(scenario: str) -> None:
    workload = build_workload(scenario, size_kb=4, calls=12)
    assert build_workload(scenario, size_kb=4, calls=12).text == workload.text  # deterministic
    result = streamparse.parse(workload.text, workload.tools)
    assert len(result.tool_calls) == len(workload.call_ends)
    # Cutting the stream right before each call_end must not yet produce that call; at call_end it must.
    for n, end in enumerate(workload.call_ends):
        parser = streamparse.StreamParser(workload.tools)
        before = parser.feed(workload.text[: end - 1])
        at = parser.feed(workload.text[end - 1 : end])
        assert sum(e.type == "tool_call" for e in before) == n
        assert sum(e.type == "tool_call" for e in at) == 1


@pytest.mark.parametrize("dialect", ["hermes", "qwen3_coder"])
def test_agent_workload_has_the_stated_argument_sizes_and_parses_to_its_calls(dialect: str) -> None:
    workload = build_workload(f"agent:{dialect}")
    assert workload.text == build_workload(f"agent:{dialect}").text
    assert len(workload.calls) == len(workload.arg_sizes) == len(workload.call_ends) == AGENT_CALLS
    writes = [args["content"] for name, args in workload.calls if name == "write_file"]
    small = [size for (name, _), size in zip(workload.calls, workload.arg_sizes) if name != "write_file"]
    assert len(writes) == 6 and all(AGENT_WRITE[0] - 64 <= len(c) <= AGENT_WRITE[1] for c in writes)
    assert max(map(len, writes)) > 10 * KB  # the range is used, not only its low end
    assert len(small) == 34 and all(AGENT_SMALL[0] <= s <= AGENT_SMALL[1] for s in small)
    assert {name for name, _ in workload.calls} == {"read_file", "run_command", "grep", "edit_file", "write_file"}
    assert len(workload.text) - sum(workload.arg_sizes) > AGENT_CALLS * 100  # prose between the calls
    result = streamparse.parse(workload.text, workload.tools)
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == workload.calls


def test_split_fixed_and_random() -> None:
    text = "abcdefghij" * 10
    assert "".join(split(text, 3)) == text and {len(d) for d in split(text, 3)[:-1]} == {3}
    random_pieces = split(text, "random", seed=1)
    assert "".join(random_pieces) == text and max(map(len, random_pieces)) <= 12
    assert random_pieces == split(text, "random", seed=1)


def test_the_harness_times_streamparse_and_the_floor_without_adapters() -> None:
    """Same loop for both: streamparse is timed as StreamParser.feed itself, the floor as its bare search."""
    feed, close = raw_api(PARSERS["streamparse"]([]))
    assert getattr(feed, "__func__", None) is streamparse.StreamParser.feed
    assert getattr(close, "__func__", None) is streamparse.StreamParser.close
    floor_feed, _ = raw_api(PARSERS["floor"]([]))
    assert floor_feed("ab<tool_call>") == "ab<tool_call>"
    workload = build_workload("tool_heavy", calls=6)
    assert bm.timed_run(PARSERS["streamparse"], workload.tools, split(workload.text, 4)) > 0
    result = bm.measure(workload, "streamparse", PARSERS["streamparse"], split(workload.text, 4), repeat=1,
                        expected=bm.reference(workload))
    assert result.correct and result.calls == 6 and result.runs == 1


def test_a_slow_parser_runs_once_instrumented_and_is_not_traced_when_that_would_take_long(
        monkeypatch: pytest.MonkeyPatch) -> None:
    workload = build_workload("args:hermes:1")
    deltas = split(workload.text, 4)
    monkeypatch.setattr(bm, "SLOW_DELTA_US", 0.0)  # everything counts as slow
    monkeypatch.setattr(bm, "TRACE_MAX_SECONDS", 0.0)
    slow = bm.measure(workload, "naive", PARSERS["naive"], deltas, overhead=lambda: 1e-7,
                      expected=bm.reference(workload))
    assert slow.runs == 0 and slow.seconds > 0 and slow.correct is True and slow.skipped is False
    assert slow.peak_kib != slow.peak_kib  # NaN: not traced
    assert slow.note == "one run, instrumented (its cost taken off: 0.10 µs/delta); peak memory not traced (~0 s)"
    assert bm.instrumentation_cost(workload.tools, deltas) >= 0
    monkeypatch.setattr(bm, "TRACE_FACTOR", 0.0)  # never predicted too long: traced, and stopped at once
    monkeypatch.setattr(bm, "TRACE_MAX_SECONDS", 1e-9)
    stopped = bm.measure(workload, "streamparse", PARSERS["streamparse"], deltas)
    assert stopped.peak_kib >= 0 and stopped.note.startswith("peak memory of the first 0% (traced run stopped at")
    fast = bm.measure(workload, "naive", PARSERS["naive"], deltas)  # no overhead given: always clean timed runs
    assert fast.runs >= 1
    tool_heavy = build_workload("tool_heavy", calls=8)
    cut = bm.measure(tool_heavy, "naive", PARSERS["naive"], split(tool_heavy.text, 4), stop_after=1e-9,
                     expected=bm.reference(tool_heavy))  # stopped after its first delta
    assert (cut.complete, cut.deltas, cut.chars, cut.correct, cut.calls_expected, cut.text_ok) == (
        False, 1, 4, None, 0, None)
    assert cut.note.startswith("stopped at 1e-09 s: figures for the first 0% (1 deltas), text not checked; ")


def test_naive_runs_only_up_to_its_size_and_the_table_says_so(monkeypatch: pytest.MonkeyPatch,
                                                                no_engines: None) -> None:
    assert bm.skip_reason("naive", bm.NAIVE_MAX_CHARS) is None
    assert bm.skip_reason("naive", bm.NAIVE_MAX_CHARS + 1) == "skipped above 20 KB (quadratic)"
    assert bm.skip_reason("streamparse", 10**9) is None
    monkeypatch.setattr(bm, "NAIVE_MAX_CHARS", 2 * KB)
    logged: list[str] = []
    parsers = {name: PARSERS[name] for name in ("streamparse", "naive")}
    results = bm.run_suite(["args:hermes:1", "args:hermes:4"], parsers=parsers, quick=True, log=logged.append)
    naive = {r.scenario: r for r in results if r.parser == "naive"}
    assert not naive["args:hermes:1"].skipped and naive["args:hermes:1"].calls_ok == 1
    assert naive["args:hermes:4"].skipped and naive["args:hermes:4"].note == "skipped above 2 KB (quadratic)"
    table = next(t for t in logged if "== args:hermes:4" in t)
    assert "naive: skipped above 2 KB (quadratic)" in table
    assert logged.count("# engines: left out in tests") == 1


class _SloppySession:
    """A comparator that parses the calls right but writes newlines of the text as spaces (no raw(): plain feed)."""

    def __init__(self, tools: Any) -> None:
        self._p = streamparse.StreamParser(tools)

    def _pair(self, events: list[Any]) -> tuple[str, list[tuple[str, str]]]:
        text = "".join(e.text for e in events if e.type == "text").replace("\n", " ")
        return text, [(e.name, e.arguments) for e in events if e.type == "tool_call"]

    def feed(self, delta: str) -> tuple[str, list[tuple[str, str]]]:
        return self._pair(self._p.feed(delta))

    def close(self) -> tuple[str, list[tuple[str, str]]]:
        return self._pair(self._p.close())

    def held(self) -> int | None:
        return None


def _broken(tools: Any) -> Any:
    raise RuntimeError("no tokenizer")


def test_engine_comparators_are_wired_per_dialect_with_their_correctness(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def fake(dialect: str) -> tuple[dict[str, Any], list[str]]:
        asked.append(dialect)
        if dialect == "hermes":
            return {"vllm:hermes": _SloppySession, "sglang:hermes": _broken}, ["sglang: not installed"]
        return {}, ["sglang: not installed", "vllm: not installed"]

    monkeypatch.setattr("streamparse.harness.engines.engine_comparators", fake)
    logged: list[str] = []
    parsers = {name: PARSERS[name] for name in ("streamparse", "floor")}
    results = bm.run_suite(["prose", "agent:hermes", "agent:qwen3_coder"], parsers=parsers, quick=True,
                           log=logged.append)
    assert asked == ["hermes", "qwen3_coder"]  # once per dialect, never for prose
    assert logged[:2] == ["# sglang: not installed", "# vllm: not installed"]  # each note once, before the tables
    rows = {(r.scenario, r.parser): r for r in results}
    assert {p for s, p in rows if s == "agent:hermes"} == {"streamparse", "floor", "vllm:hermes", "sglang:hermes"}
    assert rows["agent:hermes", "sglang:hermes"].note == "failed (RuntimeError: no tokenizer)"
    assert {p for s, p in rows if s == "agent:qwen3_coder"} == {"streamparse", "floor"}
    assert {p for s, p in rows if s == "prose"} == {"streamparse", "floor", "prose_floor"}  # it joins the floor
    engine = rows["agent:hermes", "vllm:hermes"]
    assert (engine.calls_ok, engine.calls_expected, engine.text_ok, engine.correct) == (20, 20, "ws", False)
    assert rows["agent:hermes", "streamparse"].correct is True
    assert rows["agent:hermes", "floor"].calls_ok == 0 and rows["agent:hermes", "floor"].text_ok == "differs"
    table = next(t for t in logged if "== agent:hermes" in t)
    assert any(line.startswith("vllm:hermes") and line.split()[-2:] == ["ok", "ws"] for line in table.splitlines())
    ratios = bm.ratios(results)
    assert set(ratios) >= {"prose_streamparse_over_floor", "hermes_streamparse_over_best_engine",
                           "agent_hermes_streamparse_over_floor"}
    assert "qwen3_coder_streamparse_over_best_engine" not in ratios  # no engine measured there


def test_a_comparator_whose_next_size_would_take_too_long_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    assert bm.predicted_seconds([(1000, 1.0)], 4000) == (16.0, 2.0)  # one point: assume quadratic
    assert bm.predicted_seconds([(1000, 1.0), (4000, 4.0)], 16000) == (16.0, 1.0)  # measured: linear
    assert bm.predicted_seconds([(1000, 1.0), (4000, 64.0)], 16000)[1] == 2.0  # never assumed worse than quadratic
    monkeypatch.setattr("streamparse.harness.engines.engine_comparators", lambda d: ({f"vllm:{d}": _SloppySession}, []))
    monkeypatch.setattr(bm, "SLOW_RUN_SECONDS", 1e-9)  # any further run is "too long"
    results = bm.run_suite(["args:hermes:1", "args:hermes:4"], parsers={"streamparse": PARSERS["streamparse"]},
                           quick=True, log=lambda line: None)
    rows = {(r.scenario, r.parser): r for r in results}
    assert not rows["args:hermes:1", "vllm:hermes"].skipped and not rows["args:hermes:4", "streamparse"].skipped
    assert rows["args:hermes:4", "vllm:hermes"].note.startswith("skipped above 1 KB (a run would take")
    assert rows["args:hermes:4", "vllm:hermes"].engine


def _row(scenario: str, parser: str, seconds: float, calls_ok: int = 1) -> Result:
    return Result(scenario, parser, 4000, 1000, seconds, 1, 1.0, 0, [0], [1.0], True, calls_ok=calls_ok,
                  calls_expected=1, text_ok="ok", engine=parser.startswith(("vllm:", "sglang:")))


def test_ratios_against_the_best_engine_that_got_the_calls_right() -> None:
    results = [_row("prose", "streamparse", 3.0), _row("prose", "floor", 1.0)]
    for dialect, sglang_right in (("hermes", 1), ("qwen3_coder", 0)):
        results += [_row(f"agent:{dialect}", "streamparse", 2.0), _row(f"agent:{dialect}", "floor", 0.5),
                    _row(f"agent:{dialect}", f"vllm:{dialect}", 8.0),
                    _row(f"agent:{dialect}", f"sglang:{dialect}", 4.0 if sglang_right else 1.0, sglang_right),
                    _row(f"agent:{dialect}", "my_module:parse", 1.0)]  # not an engine
    ratios = bm.ratios(results)
    assert ratios["prose_streamparse_over_floor"] == 3.0
    assert ratios["hermes_streamparse_over_best_engine"] == 0.5  # 2 µs against sglang's 4
    assert ratios["qwen3_coder_streamparse_over_best_engine"] == 0.25  # sglang is faster there but got the calls wrong
    assert ratios["agent_hermes_streamparse_over_floor"] == 4.0


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib")
def test_plot_writes_a_png_with_every_parser(tmp_path) -> None:
    from streamparse.harness.plot import series

    results = [_row(f"args:{d}:{kb}", p, kb * 1e-3) for d in ("hermes", "qwen3_coder") for kb in (1, 4, 16)
               for p in ("streamparse", "floor", f"vllm:{d}")]
    results.append(Result("args:hermes:16", "naive", 1, 1, float("nan"), 0, float("nan"), None, [], [], None))
    results += [_row("args:hermes:1", "naive", 1e-2), _row("args:hermes:4", "naive", 1e-1)]
    assert set(series(results)["hermes"]) == {"streamparse", "floor", "vllm:hermes", "naive"}
    assert series(results)["hermes"]["naive"] == [(1.0, 10.0), (4.0, 100.0)]  # µs per delta; skipped: no point
    path = tmp_path / "scaling.png"
    bm.plot(results, str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(RuntimeError, match="scaling"):
        bm.plot([_row("prose", "streamparse", 1.0)], str(path))


def test_bench_smoke_run_with_json_plot_and_compare(tmp_path, monkeypatch, no_engines: None) -> None:
    module = tmp_path / "other_parser.py"
    module.write_text(
        "import streamparse\n"
        "def parse(deltas):\n"
        "    r = streamparse.parse(''.join(deltas))\n"
        "    return r.content, [(c.name, c.arguments) for c in r.tool_calls]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = io.StringIO()
    results = tmp_path / "bench.json"
    plot = tmp_path / "scaling.png"
    code = main(["bench", "--quick", "--scenario", "prose", "--scenario", "tool_heavy", "--scenario", "scaling",
                 "--compare", "other_parser:parse", "--json", str(results), "--plot", str(plot), "--chunk", "random"], out=out)
    assert code == 0, out.getvalue()
    data = json.loads(results.read_text())
    parsers = {r["parser"] for r in data["results"]}
    assert parsers == {"streamparse", "identity", "floor", "naive", "prose_floor", "other_parser:parse"}
    heavy = {r["parser"]: r for r in data["results"] if r["scenario"] == "tool_heavy"}
    assert heavy["streamparse"]["correct"] is True and heavy["streamparse"]["calls"] == 20
    assert heavy["streamparse"]["max_held"] <= 32 and max(heavy["streamparse"]["latency_deltas"]) == 0
    assert 0 < heavy["other_parser:parse"]["calls_ok"] < 20  # checked like every parser (it is given no tools)
    assert "prose_streamparse_over_floor" in data["ratios"] and "tool_heavy_mb_per_s" in data["ratios"]
    assert "prose_streamparse_over_prose_floor" in data["ratios"]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = out.getvalue()
    assert "== tool_heavy" in text and text.count("# engines: left out in tests") == 1
