"""An mkdocs hook: a `\\|` inside a code span in a table cell renders as `|`.

GitHub-flavoured Markdown asks for `\\|` in a table cell even inside backticks, and renders it as `|`;
Python-Markdown keeps the backslash in a code span. With this hook the docs' tables are written once, the GFM
way (so they read right on GitHub too), and a reader copies `<|python_tag|>`, not `<\\|python_tag\\|>`.
Registered in mkdocs.yml (`hooks:`); the file is kept out of the site by `exclude_docs`.
"""

from __future__ import annotations

from typing import Any
from xml.etree.ElementTree import Element

from markdown import Extension, Markdown
from markdown.treeprocessors import Treeprocessor
from markdown.util import AtomicString


class _TableCodePipes(Treeprocessor):
    def run(self, root: Element) -> None:
        for cell in (*root.iter("td"), *root.iter("th")):
            for code in cell.iter("code"):
                if code.text and "\\|" in code.text:
                    code.text = AtomicString(code.text.replace("\\|", "|"))


class TableCodePipes(Extension):
    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        # After the inline patterns (priority 20) have made the code spans.
        md.treeprocessors.register(_TableCodePipes(md), "table_code_pipes", 5)


def on_config(config: Any) -> Any:
    config.markdown_extensions.append(TableCodePipes())
    return config
