"""The docs site as a reader gets it: the HTML ``mkdocs build`` writes, checked for what Markdown alone hides.

The site is built once per test session (under pytest-xdist, once for all workers: the first to take the lock
builds it, the others read it), into pytest's temporary directory.
"""

from __future__ import annotations

import fcntl
import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs")
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # shared by the workers of one run
    out, done = base / "docs-site", base / "docs-site.built"
    with open(base / "docs-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
            subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=ROOT,
                           env=env, check=True, capture_output=True)
            done.touch()
    return out


def page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text()


def code_spans(text: str) -> list[str]:
    """The text of every ``<code>`` element of a page, tags stripped and entities read."""
    return [html.unescape(re.sub(r"<[^>]+>", "", code)) for code in re.findall(r"<code[^>]*>(.*?)</code>", text, re.S)]


def prose(text: str) -> str:
    """A page's article as plain text."""
    article = re.search(r"<article.*?</article>", text, re.S)
    assert article
    return html.unescape(re.sub(r"<[^>]+>", "", article.group(0)))


def test_no_code_span_on_any_page_shows_a_table_escape(site: Path) -> None:
    for path in site.rglob("index.html"):
        for code in code_spans(path.read_text()):
            assert "\\|" not in code, (path.relative_to(site), code)


def test_markers_in_tables_read_as_written(site: Path) -> None:
    dialects = code_spans(page(site, "dialects"))
    assert '<|python_tag|>{"name", "parameters"}' in dialects
    assert "<|tool_call|>[{…}]" in dialects
    assert '<tool_call>{"name", "arguments"|"parameters"|"input"}</tool_call>' in dialects  # one cell, not three
    assert any(code.startswith("streamparse [parse] [FILE|-] ") for code in code_spans(page(site, "cli")))


def test_api_page_shows_no_sphinx_role(site: Path) -> None:
    text = prose(page(site, "api"))
    roles = set(re.findall(r":(?:class|func|meth|data|attr|mod|exc):~?[\w.]*\w", text))
    assert not roles, roles


def test_api_page_shows_no_internals(site: Path) -> None:
    from streamparse import StreamParser

    text = prose(page(site, "api"))
    assert StreamParser.__mro__[1:-1] == ()  # no base class: the parts it holds are its own business
    assert not [name for name in ("SpanReader", "ItemCalls", "AfterReader", "MidLine", "Output") if name in text]
    assert "Bases:" not in text and "ChunkReader" not in text
    assert "_DECLARATIONS" not in text and " for d in " not in text  # DIALECTS / ALIASES as their source
    assert "Invariant" not in text and "Layers" not in text
    assert "Every dialect streamparse reads" in text  # DIALECTS's docstring instead


def test_no_page_needs_a_cdn(site: Path) -> None:
    for path in site.rglob("*.html"):
        text = path.read_text()
        external = re.findall(r"<(?:script|link)\b[^>]*(?:src|href)=\"(?:https?:)?//[^\"]+\"", text)
        assert not [tag for tag in external if "rel=\"canonical\"" not in tag], (path.relative_to(site), external)
        assert 'class="mermaid"' not in text, path.relative_to(site)
    index = page(site, "")  # the home page
    assert 'src="images/flow.svg"' in index and (site / "images" / "flow.svg").is_file()


def test_wide_tables_and_code_stay_in_the_column(site: Path) -> None:
    css = (site / "stylesheets" / "extra.css").read_text()
    assert "overflow-x: auto" in css and 'href="../stylesheets/extra.css"' in page(site, "dialects")
    # A long chain of markers in a cell may wrap before each marker (<wbr>), since names never break inside.
    assert "&lt;|tool_calls_section_begin|&gt;<wbr />&lt;|tool_call_begin|&gt;" in page(site, "dialects")


def test_the_copy_button_keeps_a_strip_of_its_own(site: Path) -> None:
    """Material's copy button sits over a code block's top right corner, about 2.6em (of the code's font) from its
    right edge. The block keeps that strip for it with a right border in its own colour, outside the part that
    scrolls, so a long line is cut off before the button instead of running under it."""
    css = (site / "stylesheets" / "extra.css").read_text()
    rules = re.findall(r"\.md-typeset pre > code \{([^}]*)\}", css)
    assert len(rules) == 1, rules
    (rule,) = rules
    assert "overflow-x: auto" in rule
    border = re.search(r"border-right: ([\d.]+)em solid var\(--md-code-bg-color\)", rule)
    assert border and float(border.group(1)) >= 2.7, rule


def test_the_diagram_reads_at_the_columns_width(site: Path) -> None:
    """flow.svg is drawn by hand after flow.mmd: every line of the outline is a line of its text, and at the
    docs' 700 px column (1280 px window) it shrinks to no less than 93%, its text to no less than 14 px."""
    svg = (site / "images" / "flow.svg").read_text()
    outline = (site / "images" / "flow.mmd").read_text()
    lines = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
    words = [w for label in re.findall(r'"([^"]+)"', outline) for w in label.split("<br/>")]
    assert len(words) == 20 and sorted(words) == sorted(lines)
    width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))  # type: ignore[union-attr]
    sizes = [float(s) for s in re.findall(r"font-size: ([\d.]+)px", svg)]
    assert width <= 750 and sizes and min(sizes) >= 15
