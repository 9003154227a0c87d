"""An mkdocs hook for code spans in table cells: a `\\|` renders as `|`, and a long marker may wrap before a `<`.

GitHub-flavoured Markdown asks for `\\|` in a table cell even inside backticks, and renders it as `|`;
Python-Markdown keeps the backslash in a code span. With this hook the docs' tables are written once, the GFM
way (so they read right on GitHub too), and a reader copies `<|python_tag|>`, not `<\\|python_tag\\|>`.

A cell's code is kept whole (docs/stylesheets/extra.css: no break inside a word, so `qwen3_coder` never reads
`qwen3_code` / `r`); a chain of markers with no space in it (`<|tool_calls_section_begin|><|tool_call_begin|>…`)
gets a line-break opportunity (`<wbr>`, nothing a reader copies) before each `<` after its first character.
Registered in mkdocs.yml (`hooks:`); the file is kept out of the site by `exclude_docs`.
"""

from __future__ import annotations

import re
from typing import Any
from xml.etree.ElementTree import Element, SubElement

from markdown import Extension, Markdown
from markdown.treeprocessors import Treeprocessor
from markdown.util import AtomicString

# Code span text is already escaped here (Python-Markdown's code_escape): `<` is `&lt;`.
_MARKER = re.compile(r"(?=&lt;)")


class _TableCode(Treeprocessor):
    def run(self, root: Element) -> None:
        for cell in (*root.iter("td"), *root.iter("th")):
            for code in cell.iter("code"):
                if code.text and not len(code):
                    _wrap_before_markers(code, code.text.replace("\\|", "|"))


def _wrap_before_markers(code: Element, text: str) -> None:
    first, *rest = [piece for piece in _MARKER.split(text) if piece]
    code.text = AtomicString(first)
    for piece in rest:
        SubElement(code, "wbr").tail = AtomicString(piece)


class TableCode(Extension):
    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        # After the inline patterns (priority 20) have made the code spans.
        md.treeprocessors.register(_TableCode(md), "table_code", 5)


def on_config(config: Any) -> Any:
    config.markdown_extensions.append(TableCode())
    return config
