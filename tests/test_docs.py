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
    assert len(readme.splitlines()) <= 150
    assert "```mermaid\nflowchart LR" in readme
    image = re.search(r"!\[[^\]]+\]\(([^)]+)\)", readme)
    assert image and (ROOT / image.group(1)).is_file()


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
