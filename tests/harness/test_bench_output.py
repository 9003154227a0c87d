"""What ``streamparse bench`` prints, rendered from fixed result records (nothing is timed): every table and
legend fits in 100 columns, a baseline that reads no calls of a format shows n/a (a real mismatch does not),
the proxy figures carry units and print counts as integers, and the naive baseline's size limit is stated
from its constant."""

from __future__ import annotations

from typing import Any

import pytest

from streamparse.harness import benchmark as bm
from streamparse.harness.proxycost import LOADS, cost_legend, cost_table
from streamparse.harness.proxyload import load_table
from streamparse.harness.report import (WIDTH, engines_legend, format_engines, format_ratios,
                                        format_table, table_legend)
from streamparse.harness.results import Result
from streamparse.harness.workloads import KB

NAN = float("nan")


def _result(scenario: str, parser: str, us: float, *, calls: int = 5, right: int | None = 5, expected: int = 5,
            text: str | None = "ok", engine: bool = False, note: str = "", complete: bool = True,
            big: bool = False) -> Result:
    deltas = 250_000 if big else 800
    latency = [123_456.7, 99_999.9] if big else [12.5, 40.25]
    r = Result(scenario, parser, deltas * 4, deltas, us * deltas / 1e6, calls, 123_456.0 if big else 21.0,
               262_144 if big else 30, [568, -5] if big else [0, 1], latency, None, note, engine=engine,
               complete=complete)
    r.calls_ok, r.calls_expected, r.text_ok = right, expected, text
    return r


def _skipped(scenario: str, parser: str, why: str, engine: bool = False) -> Result:
    return Result(scenario, parser, 3200, 800, NAN, 0, NAN, None, [], [], None, why, engine=engine)


def _workload(scenario: str = "mixed:hermes", big: bool = False) -> list[Result]:
    return [
        _result(scenario, "streamparse", 0.95, big=big),
        _result(scenario, "identity", 0.03, calls=0, right=0, text="differs"),
        _result(scenario, "floor", 0.12, calls=0, right=0, text="differs"),
        _result(scenario, "naive", 38.4, calls=0, right=0, text="differs",
                note="one run, instrumented (its cost taken off: 0.40 µs/delta)"),
        _result(scenario, "vllm:hermes", 35.8, text="differs", engine=True, big=big,
                note="one run, instrumented (its cost taken off: 0.40 µs/delta)"),
        _result(scenario, "sglang:cohere_command4", 2_859.1, calls=3, right=2, text="ws", engine=True, big=big),
        _result(scenario, "sglang:qwen25", 611.4, engine=True, complete=False, text=None,
                note="stopped at 6 s: figures for the first 41% (330 deltas), text not checked"),
        _skipped(scenario, "vllm:internlm", "failed (ValueError: too many values to unpack "
                                            "(expected 2)) " + "and a long explanation " * 6, engine=True),
        _result(scenario, "a_long_module_name.with_parts:parse_everything", 7.0, right=4, calls=6),
    ]


def _wide(lines: list[str]) -> list[str]:
    return [line for line in lines if len(line) > WIDTH]


@pytest.mark.parametrize("big", [False, True])
def test_a_workload_table_and_its_legend_fit_in_100_columns(big: bool) -> None:
    table = format_table(_workload(big=big)).splitlines()
    assert _wide(table) == [] and _wide(table_legend(bm.NAIVE_MAX_CHARS // KB).splitlines()) == []
    assert table[1] == "== mixed:hermes  (3,200 chars, 800 deltas)" or table[1].startswith("== mixed:hermes")
    heads = table[2].split()
    assert heads[0] == "parser" and heads[-2:] == ["calls", "text"]
    long = next(line for line in table if line.startswith("a_long_module_name"))
    assert "…" in long.split()[0]  # clipped to the room left, never pushing the columns out


def test_every_column_of_the_workload_table_has_a_legend_line() -> None:
    table = format_table(_workload()).splitlines()
    legend = table_legend(20).splitlines()
    explained = {line.split()[0] for line in legend[1:]}
    for column in ("parser", "MB/s", "µs/Δ", "×floor", "KiB", "held", "p50", "max", "calls", "text", "n/a"):
        assert column in explained, column
    assert "lat Δ" in " ".join(legend)  # the one header with a space in it
    assert all(line.startswith("  ") for line in legend)


def test_a_baseline_that_reads_no_calls_is_n_a_and_a_real_miss_is_not() -> None:
    table = format_table(_workload()).splitlines()
    rows = {line.split()[0]: line.split() for line in table[3:] if not line.startswith(" ")}
    for baseline in ("identity", "floor", "naive"):
        assert rows[baseline][-2:] == ["n/a", "n/a"], baseline
    assert rows["sglang:cohere_command4"][-2:] == ["2/5", "ws"]  # an engine that misses is shown missing
    assert rows["streamparse"][-2:] == ["ok", "ok"]
    assert next(v for k, v in rows.items() if k.startswith("a_long_module"))[-2:] == ["4/5", "ok"]
    extra = format_table([_result("x", "mine", 1.0, calls=6, right=5)]).splitlines()[-1]
    assert extra.split()[-2:] == ["5/5+1", "ok"]  # all expected calls right, and one more
    assert "  naive: reads no calls of this format (n/a: not a mismatch)" in table
    assert not any(line.startswith(("  identity:", "  floor:")) for line in table)  # the legend says it once
    one_right = format_table([_result("tool_heavy", "floor", 0.1),
                              _result("tool_heavy", "naive", 40.0, calls=5, right=1, expected=20, text="differs")])
    assert one_right.splitlines()[-1].split()[-2:] == ["1/20", "differs"]  # it read some: a real mismatch
    prose = format_table([_result("prose", "identity", 0.03, calls=0, right=0, expected=0)])
    assert prose.splitlines()[-1].split()[-2:] == ["ok", "ok"]  # nothing to read, nothing missed


def test_notes_are_wrapped_under_the_table_one_line_per_note_with_the_parsers_it_is_about() -> None:
    table = format_table(_workload()).splitlines()
    assert "  naive, vllm:hermes: one run, instrumented (its cost taken off: 0.40 µs/delta)" in table
    failed = next(i for i, line in enumerate(table) if line.startswith("  vllm:internlm: failed (ValueError"))
    assert table[failed + 1].startswith("    ")  # continued, indented


def _engine_results() -> list[Result]:
    out = _workload("mixed:hermes") + _workload("mixed:mistral")
    for r in out:
        if r.scenario == "mixed:mistral" and r.parser == "vllm:hermes":
            r.calls_ok = 2
    out += [_result("mixed:deepseek_v31", "streamparse", 1.1), _result("mixed:deepseek_v31", "naive", 12.0)]
    return out


def test_the_engines_table_and_its_legend_fit_and_star_the_best_engine() -> None:
    table = format_engines(_engine_results()).splitlines()
    assert _wide(table) == [] and _wide(engines_legend().splitlines()) == []
    assert table[1].startswith("== engines")
    hermes = [i for i, line in enumerate(table) if line.startswith("hermes")]
    assert len(hermes) == 1
    block = table[hermes[0]:]
    assert "vllm:hermes* 35.8 [ok / differs]" in block[0]  # the fastest engine with every call right
    assert any("(stopped)" in line for line in block) and any("vllm:internlm failed" in line for line in block)
    assert block[1].startswith(" " * 20)  # further engines continue under the engines column
    mistral = next(line for line in table if line.startswith("mistral"))
    assert "none right" in mistral and "×" not in mistral  # no engine right: no yardstick, no ratio
    assert not any(line.startswith("deepseek_v31") for line in table)  # no engine ran there
    legend = engines_legend()
    assert all(word in legend for word in ("format", "sp µs/Δ", "ratio", "*", "none right", "engines"))


def test_the_ratio_block_explains_itself_one_line_per_kind() -> None:
    headline = {"prose_streamparse_over_floor": 2.66, "tool_heavy_mb_per_s": 1.32,
                "tool_heavy_naive_over_streamparse": 11.9, "scaling_qwen3_coder_256kb_over_16kb": 16.2,
                "scaling_qwen3_coder_16kb_naive_over_streamparse": 52.0, "agent_hermes_streamparse_over_floor": 7.0,
                "deepseek_v31_streamparse_over_best_engine": 0.0407}
    block = format_ratios(headline).splitlines()
    assert _wide(block) == [] and block[1] == "== ratios (same run, same machine)"
    for key, value in headline.items():
        assert any(line.startswith(key) and line.endswith(f"{value:.3g}") for line in block), key
    explained = block[2 + len(headline):]
    assert explained[0].startswith("  each: ") and len(explained) == 1 + 7  # the block, then each kind once
    assert format_ratios({"tool_heavy_mb_per_s": 1.0}).splitlines()[-1] == (
        "  tool_heavy: streamparse's millions of characters per second")
    assert format_ratios({}) == ""


def _load_figures() -> dict[str, Any]:
    return {"concurrency": 200, "token_delay_s": 0.02, "calls_per_stream": 3, "chunks_per_stream_upstream": 412,
            "chunks_per_stream_proxy": 380, "proxy_requests_per_s": 151.234, "proxy_chunks_per_s": 57_468.9,
            "direct_requests_per_s": 160.1, "direct_chunks_per_s": 65_963.2, "bare_requests_per_s": 155.0,
            "latency_ms_direct_p50": 1_250.5, "latency_ms_direct_p99": 1_301.0, "latency_ms_proxy_p50": 1_260.25,
            "latency_ms_proxy_p99": 1_340.75, "added_latency_ms_p50": 9.75, "added_latency_ms_p99": 39.75,
            "proxy_peak_rss_mib": 88.4, "proxy_cpu_us_per_upstream_chunk": 41.5,
            "bare_cpu_us_per_upstream_chunk": 20.2, "cpu_per_chunk_ratio_to_bare": 2.05,
            "mean_latency_ms_proxy": 1_270.0}


def test_proxy_load_figures_have_units_and_counts_are_integers() -> None:
    lines = load_table(_load_figures())
    assert _wide(lines) == [] and len(lines) == len(_load_figures())
    by = {line.split()[0]: line.split() for line in lines}
    assert by["concurrency"][1:3] == ["200", "streams"]
    assert by["calls_per_stream"][1:3] == ["3", "calls"] and by["chunks_per_stream_proxy"][1:3] == ["380", "chunks"]
    assert by["token_delay_s"][1:3] == ["0.020", "s"]
    assert by["latency_ms_proxy_p50"][1:3] == ["1,260.25", "ms"] and by["proxy_peak_rss_mib"][2] == "MiB"
    assert by["proxy_cpu_us_per_upstream_chunk"][2] == "µs"
    assert all(len(words) > 3 for words in by.values())  # and a few words saying what it is
    assert not any(".0 " in line.split(maxsplit=1)[1][:12] for line in lines if line.split()[0] in
                   ("concurrency", "calls_per_stream", "chunks_per_stream_upstream", "chunks_per_stream_proxy"))


def test_the_proxy_cost_table_and_its_legend_fit() -> None:
    figures: dict[str, Any] = {}
    for streams, delay in LOADS:
        label = f"c{streams}_{'paced' if delay else 'unpaced'}"
        for target in ("direct", "bare", "streamparse", "litellm"):
            name = f"{label}_{target}"
            if target != "direct":
                figures[f"{name}_cpu_us_per_chunk"] = 1_234.5
                figures[f"{name}_added_ttfb_ms_p50"] = figures[f"{name}_added_ttfb_ms_p99"] = 1_234.56
            for column in ("latency_ms_p50", "latency_ms_p99", "gap_ms_p99"):
                figures[f"{name}_{column}"] = 12_345.67
            figures[f"{name}_requests_per_s"] = 12_345.6
        figures[f"{label}_cpu_ratio_streamparse_to_bare"] = 2.0
        figures[f"{label}_cpu_ratio_streamparse_to_litellm"] = 0.5
    table = list(cost_table(figures))
    assert _wide(table) == [] and _wide(cost_legend()) == []
    assert table[1].split()[:2] == ["c1_paced", "direct"] and table[1].split()[2] == "-"  # the upstream: no CPU
    assert len(table) == 1 + 4 * len(LOADS) + 2 * len(LOADS)
    heads = table[0]
    assert all(unit in heads for unit in ("µs", "ms", "/s"))
    legend = "\n".join(cost_legend())
    assert all(f"c{s}_{'paced' if d else 'unpaced'}:" in legend for s, d in LOADS)
    assert all(word in legend for word in ("CPU µs/chk", "+TTFB50/99", "lat50/99", "gap99", "req/s", "_cpu_ratio_"))


def test_the_naive_limit_is_stated_from_its_constant() -> None:
    kb = bm.NAIVE_MAX_CHARS // KB
    assert bm.skip_reason("naive", bm.NAIVE_MAX_CHARS + 1) == f"skipped above {kb} KB (quadratic)"
    assert bm.skip_reason("naive", bm.NAIVE_MAX_CHARS) is None
    assert f"runs up to {kb} KB" in table_legend(kb)
    r = _skipped("args:hermes:64", "naive", bm.skip_reason("naive", 64 * KB) or "")
    assert f"  naive: skipped above {kb} KB (quadratic)" in format_table([r]).splitlines()


def test_run_suite_prints_the_legend_once_under_the_first_table() -> None:
    logged: list[str] = []
    bm.run_suite(["prose", "dialect:hermes"], parsers={"streamparse": bm.PARSERS["streamparse"],
                                                       "floor": bm.PARSERS["floor"]},
                 quick=True, engines=False, log=logged.append)
    assert len(logged) == 2 and "columns of every workload table" in logged[0]
    assert "columns of every" not in logged[1]
    assert _wide("\n".join(logged).splitlines()) == []
