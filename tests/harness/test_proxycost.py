"""The proxy-cost comparison (``harness.proxycost``): real processes on loopback, every stream checked, the
figures and ratios it promises present and sane. (Speed itself is measured in bench/, never asserted here.)"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from streamparse.harness.proxycost import cost_table, cpu_ns, litellm_command, load_label, run_costs


def test_a_small_run_gives_every_figure_for_every_target_and_the_ratio_to_bare() -> None:
    lines: list[str] = []
    figures = run_costs(((2, 0.0),), rounds=1, litellm=False, log=lines.append)
    for target in ("bare", "streamparse"):
        assert figures[f"c2_unpaced_{target}_cpu_us_per_chunk"] > 0
        assert figures[f"c2_unpaced_{target}_requests_per_s"] > 0
        assert f"c2_unpaced_{target}_added_ttfb_ms_p99" in figures
    assert "c2_unpaced_direct_cpu_us_per_chunk" not in figures  # the upstream's CPU is nobody's overhead
    ratio = figures["c2_unpaced_cpu_ratio_streamparse_to_bare"]
    assert ratio == pytest.approx(figures["c2_unpaced_streamparse_cpu_us_per_chunk"]
                                  / figures["c2_unpaced_bare_cpu_us_per_chunk"])
    assert any("streamparse" in line and "CPU per upstream chunk" in line for line in lines)
    table = list(cost_table(figures))
    assert [row.split()[:2] for row in table[1:4]] == [["c2_unpaced", "direct"], ["c2_unpaced", "bare"],
                                                        ["c2_unpaced", "streamparse"]]
    assert table[-1].startswith("c2_unpaced_cpu_ratio_streamparse_to_bare")


def test_litellm_is_found_where_it_is_named_and_skipped_with_one_line_when_absent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "litellm"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("STREAMPARSE_LITELLM", str(fake))
    assert litellm_command() == [str(fake)]
    monkeypatch.setenv("STREAMPARSE_LITELLM", str(tmp_path / "missing"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    if litellm_command() is None:  # (unless installed next to this Python)
        lines: list[str] = []
        figures = run_costs((), litellm=True, log=lines.append)
        assert figures == {} and len(lines) == 1 and "litellm" in lines[0] and "not compared" in lines[0]


def test_cpu_time_is_read_from_every_thread_and_never_goes_back() -> None:
    first = cpu_ns([os.getpid()])
    sum(i * i for i in range(200_000))
    assert cpu_ns([os.getpid()]) > first > 0
    assert cpu_ns([2 ** 22 + 12345]) == 0  # a process that is gone counts nothing


def test_an_odd_pace_is_named_in_three_digits_and_the_table_stays_under_100_columns() -> None:
    assert load_label(200, 0.123456) == "c200_paced123ms"
    assert load_label(200, 0.02) == "c200_paced20ms" and load_label(1, 0.0005) == "c1_paced0.5ms"
    label = load_label(200, 0.123456)
    figures: dict[str, float] = {}
    for target in ("direct", "bare", "streamparse", "litellm"):  # every column at a wide but plausible value
        figures.update({f"{label}_{target}_{column}": 12345.678 for column in (
            "cpu_us_per_chunk", "added_ttfb_ms_p50", "added_ttfb_ms_p99", "latency_ms_p50", "latency_ms_p99",
            "gap_ms_p99", "requests_per_s")})
    figures[f"{label}_cpu_ratio_streamparse_to_litellm"] = 0.5
    table = list(cost_table(figures))
    assert [row.split()[0] for row in table[1:]] == [label] * 4 + [f"{label}_cpu_ratio_streamparse_to_litellm"]
    assert max(len(line) for line in table) < 100


SERVES_501 = """import http.server, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
http.server.HTTPServer(("127.0.0.1", port), http.server.BaseHTTPRequestHandler).serve_forever()
"""  # a stand-in LiteLLM that starts but answers every request 501 (no do_POST)


@pytest.mark.parametrize("body, why", [(SERVES_501, "status 501"), ("import sys; sys.exit(3)\n", "did not start")])
def test_a_failing_litellm_costs_only_its_own_figures_with_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, why: str) -> None:
    fake = tmp_path / "litellm"
    fake.write_text(f"#!{sys.executable}\n{body}")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("STREAMPARSE_LITELLM", str(fake))
    lines: list[str] = []
    figures = run_costs(((2, 0.0), (1, 0.0)), rounds=1, log=lines.append)
    said = [line for line in lines if "litellm" in line]
    assert len(said) == 1 and why in said[0], lines
    assert not any("litellm" in key for key in figures)
    for label in ("c2_unpaced", "c1_unpaced"):  # the load it failed on and the next
        for target in ("bare", "streamparse"):
            assert figures[f"{label}_{target}_cpu_us_per_chunk"] > 0
        assert f"{label}_cpu_ratio_streamparse_to_bare" in figures
