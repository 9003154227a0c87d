"""The docs say what the code does: README stays a front page, and what the docs quote from the program's own
output is that output today (the legends are generated, then compared here, so a changed column fails CI).

mkdocs build --strict (in .ci/run) checks links and included files; this checks content.
"""

from __future__ import annotations

import re
from pathlib import Path

from streamparse.harness import report
from streamparse.harness.benchmark import KB, NAIVE_MAX_CHARS

ROOT = Path(__file__).resolve().parent.parent
LEGENDS = ROOT / "docs" / "legends"


def test_readme_is_a_front_page_with_the_diagram_and_the_picture() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 160  # a front page: the reference is docs/
    images = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", readme)
    assert len(images) >= 2 and all((ROOT / image).is_file() for image in images)


def test_the_diagram_is_a_shipped_svg_made_from_its_mermaid_source() -> None:
    # Rendered once by mermaid-cli (the command is in flow.mmd), committed: no page needs mermaid's CDN script.
    svg, source = ROOT / "docs" / "images" / "flow.svg", ROOT / "docs" / "images" / "flow.mmd"
    assert "flowchart LR" in source.read_text()
    assert svg.read_text().lstrip().startswith("<svg") and "foreignObject" not in svg.read_text()
    assert "](docs/images/flow.svg)" in (ROOT / "README.md").read_text()
    assert "](images/flow.svg)" in (ROOT / "docs" / "index.md").read_text()
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        assert "```mermaid" not in page.read_text(), page


def test_every_engines_install_line_says_no_deps() -> None:
    # vllm and sglang declare the whole GPU stack: bench/requirements-engines.txt is installed --no-deps only.
    for page in [ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").glob("*.md")]:
        for line in re.findall(r"pip install[^`\n]*requirements-engines\.txt", page.read_text()):
            assert "--no-deps" in line, (page.name, line)


def test_readme_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text()
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target


def test_benchmark_legends_in_the_docs_are_the_programs_own() -> None:
    assert (LEGENDS / "bench_columns.txt").read_text() == report.table_legend(NAIVE_MAX_CHARS // KB).rstrip() + "\n"
    assert (LEGENDS / "engines_columns.txt").read_text() == report.engines_legend().rstrip() + "\n"


def test_docs_state_the_naive_baselines_real_limit() -> None:
    text = (ROOT / "docs" / "benchmarks.md").read_text() + (LEGENDS / "bench_columns.txt").read_text()
    assert f"up to {NAIVE_MAX_CHARS // KB} KB" in text
    assert "80 KB" not in text and "deltas/s" not in text
