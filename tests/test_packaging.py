"""The wheel ships every package (pyproject lists packages explicitly, so a new one must be added there), and an
extra carries what its command imports."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_subpackage_is_listed_in_pyproject() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "streamparse").rglob("__init__.py")}
    assert on_disk <= listed, f"add {sorted(on_disk - listed)} to [tool.setuptools] packages"


def test_every_declared_grammar_is_a_packaged_file_or_derived_from_its_declaration() -> None:
    from streamparse.dialects import DIALECTS

    for dialect in DIALECTS.values():
        family = dialect.markup is not None or dialect.kv is not None  # (its grammar is written from its markup)
        assert family != (ROOT / "grammars" / f"{dialect.grammar}.lark").is_file(), dialect.name


def test_the_conformance_command_needs_no_pytest() -> None:
    """``pip install '.[conformance]'`` installs canitoolcall, not pytest: ``streamparse conformance`` must not import
    canitoolcall's pytest plugin (it did, and failed in a fresh venv with ModuleNotFoundError: pytest)."""
    code = ("import sys; sys.modules['pytest'] = None  # import pytest now raises ImportError\n"
            "from streamparse.cli import main; raise SystemExit(main(['conformance', '--family', 'llama']))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "llama" in run.stdout and "pass or soft pass:" in run.stdout
