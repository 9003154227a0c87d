"""The benchmark harness: workloads are deterministic and correct; a smoke run of `streamparse bench`."""

from __future__ import annotations

import io
import json

import pytest

import streamparse
from streamparse.benchmark import RENDERERS, build_workload, split
from streamparse.cli import main


@pytest.mark.parametrize("scenario", ["tool_heavy", *[f"dialect:{d}" for d in RENDERERS], "args:qwen3_coder:4",
                                      "args:hermes:4", "args:mistral:1"])
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


def test_split_fixed_and_random() -> None:
    text = "abcdefghij" * 10
    assert "".join(split(text, 3)) == text and {len(d) for d in split(text, 3)[:-1]} == {3}
    random_pieces = split(text, "random", seed=1)
    assert "".join(random_pieces) == text and max(map(len, random_pieces)) <= 12
    assert random_pieces == split(text, "random", seed=1)


def test_bench_smoke_run_with_json_plot_and_compare(tmp_path, monkeypatch) -> None:
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
    assert parsers == {"streamparse", "identity", "floor", "naive", "other_parser:parse"}
    heavy = {r["parser"]: r for r in data["results"] if r["scenario"] == "tool_heavy"}
    assert heavy["streamparse"]["correct"] is True and heavy["streamparse"]["calls"] == 20
    assert heavy["streamparse"]["max_held"] <= 32 and max(heavy["streamparse"]["latency_deltas"]) == 0
    assert "prose_streamparse_over_floor" in data["ratios"] and "tool_heavy_mb_per_s" in data["ratios"]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = out.getvalue()
    assert "== tool_heavy" in text and "sglang: not compared" in text or "sglang: importable" in text
