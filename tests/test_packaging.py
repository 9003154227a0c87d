"""The wheel ships every package: pyproject lists packages explicitly, so a new one must be added there."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_subpackage_is_listed_in_pyproject() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "streamparse").rglob("__init__.py")}
    assert on_disk <= listed, f"add {sorted(on_disk - listed)} to [tool.setuptools] packages"


def test_every_declared_grammar_is_a_packaged_file() -> None:
    from streamparse.dialects import DIALECTS

    for dialect in DIALECTS.values():
        assert (ROOT / "grammars" / f"{dialect.grammar}.lark").is_file(), dialect.name
