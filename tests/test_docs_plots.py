"""The docs' pictures: every one a page shows is a shipped file (SVG, drawn once and committed; a diagram beside
its mermaid source), and the bench's pictures tell every parser apart and say what the page says."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from streamparse.harness.results import Result

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
IMAGES = DOCS / "images"
needs_matplotlib = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib")


def shown() -> dict[str, set[str]]:
    """Each docs page's pictures (paths under docs/)."""
    return {page.name: {str((page.parent / src).resolve().relative_to(DOCS.resolve()))
                        for src in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", page.read_text())}
            for page in DOCS.glob("*.md")}


def test_every_picture_is_a_shipped_file_and_every_svg_is_shown() -> None:
    pictures = set().union(*shown().values())
    assert all((DOCS / p).is_file() for p in pictures), pictures
    assert {f"images/{svg.name}" for svg in IMAGES.glob("*.svg")} <= pictures
    assert {"images/flow.svg", "images/bench-scaling.svg", "images/proxy-cost.svg"} <= pictures
    assert "images/proxy-path.svg" in shown()["proxy.md"]
    for source in IMAGES.glob("*.mmd"):  # a diagram is re-rendered from its source (the command is in it)
        text = source.read_text()  # (or drawn by hand after it, which test_docs_site holds line by line)
        assert source.with_suffix(".svg").is_file() and ("mmdc" in text or "drawn by hand after it" in text)
        assert "foreignObject" not in source.with_suffix(".svg").read_text()  # text as SVG text: any viewer shows it


def _row(scenario: str, parser: str, us: float, right: bool = True) -> Result:
    return Result(scenario, parser, 4000, 1000, us * 1e-3, 1, 1.0, 0, [0], [1.0], True, calls_ok=int(right),
                  calls_expected=1, text_ok="ok", engine=parser.startswith(("vllm:", "sglang:")))


@needs_matplotlib
def test_engine_parsers_are_told_apart_by_colour_and_named_in_a_legend_box(tmp_path: Path) -> None:
    from streamparse.harness.plot import _styles, plot, series

    parsers = {"hermes": ["vllm:hermes", "sglang:qwen25", "sglang:hermes"], "qwen3_coder": ["sglang:qwen3_coder"]}
    lines = [_row(f"args:{d}:{kb}", p, kb * 1.0) for d, ps in parsers.items() for p in ["streamparse", *ps]
             for kb in (1, 4)]
    styles = _styles(series(lines))
    sglang = [styles[p]["color"] for p in ("sglang:qwen25", "sglang:hermes", "sglang:qwen3_coder")]
    assert len(set(sglang)) == 3  # not only their markers

    bars = [_row(f"mixed:{f}", p, us, right) for f, group in {
        "hermes": [("streamparse", 1, True), ("vllm:hermes", 30, True), ("sglang:qwen25", 200, True),
                   ("sglang:hermes", 150, True)],
        "glm45": [("streamparse", 1, True), ("vllm:glm45", 12, True), ("sglang:glm45", 10, True),
                  ("sglang:glm47", 11, False)]}.items() for p, us, right in group]
    path = tmp_path / "bars.svg"
    plot(bars, str(path))
    svg = path.read_text()
    assert "SGLang's 2nd parser (hermes: hermes, glm45: glm47)" in svg and "vLLM's parser" in svg
    assert "an engine's parser that missed calls" in svg
    assert svg.count("legend") >= 1 and "#2ca02c" in svg and "#8cc152" in svg  # SGLang's two shades


def test_proxy_picture_says_what_the_page_says() -> None:
    figures = json.loads((IMAGES / "proxy-cost.json").read_text())["ratios"]
    page = (DOCS / "benchmarks.md").read_text()
    rows = {"c1_paced": "1 stream, paced at 2 ms", "c20_paced": "20 streams, paced", "c20_unpaced": "20 streams, unpaced"}
    for load, row in rows.items():
        cells = re.search(rf"^\| {row} \| (\d+) µs \| (\d+) µs \| ([\d.]+)× \| (\d+) µs \|", page, re.M)
        assert cells, row
        bare, ours, ratio, litellm = cells.groups()
        assert [figures[f"proxy_cost_{load}_{t}_cpu_us_per_chunk"] for t in ("bare", "streamparse", "litellm")] \
            == [int(bare), int(ours), int(litellm)]
        assert figures[f"proxy_cost_{load}_cpu_ratio_streamparse_to_bare"] == float(ratio)
    assert "streamparse 52 µs per upstream chunk against bare's 49 (1.07×)" in " ".join(page.split())
    assert (figures["proxy_cost_c200_paced20ms_streamparse_cpu_us_per_chunk"],
            figures["proxy_cost_c200_paced20ms_bare_cpu_us_per_chunk"]) == (52, 49)
    svg = (IMAGES / "proxy-cost.svg").read_text()
    assert all(f"÷ bare {r:.2f}×" in svg for r in (1.10, 1.33, 1.32, 1.07)) and ">851<" in svg.replace(" ", "")


@needs_matplotlib
def test_proxy_plot_reads_a_bench_json(tmp_path: Path) -> None:
    from streamparse.harness.plot import plot_proxy, proxy_costs

    run = json.loads((IMAGES / "proxy-cost.json").read_text())
    assert list(proxy_costs(run)) == ["c1_paced", "c20_paced", "c20_unpaced", "c200_paced20ms"]
    assert proxy_costs(run)["c200_paced20ms"] == {"bare": 49.0, "streamparse": 52.0}
    raw = {k.removeprefix("proxy_cost_"): v for k, v in run["ratios"].items()}  # run_costs' own figures
    assert proxy_costs(raw) == proxy_costs(run)
    path = tmp_path / "proxy.svg"
    plot_proxy(run, str(path))
    assert "LiteLLM proxy" in path.read_text()
    with pytest.raises(RuntimeError, match="bench --proxy"):
        plot_proxy({"ratios": {}}, str(path))
