"""Loading the Lark grammars in ``grammars/`` (installed as ``streamparse.grammars``).

Each grammar is built once per process (LALR tables are the costly part) and
then shared: Lark parsers are reusable and hold no per-parse state.

Invariant: a grammar is read and compiled at most once per process; callers get the shared
parser and never mutate it.
"""

from __future__ import annotations

import functools
from importlib import resources

from lark import Lark


_DEFINED: dict[str, str] = {}  # grammars a declaration writes (a family's, derived from its markup), by name


def define_grammar(name: str, text: str) -> None:
    """Make ``text`` the grammar called ``name`` (a declaration that derives its grammar, at import)."""
    if _DEFINED.get(name, text) != text:
        raise ValueError(f"grammar {name!r} is defined twice, differently")
    _DEFINED[name] = text


def defined_grammars() -> list[str]:
    """The names of the grammars declarations defined so far (those of the families imported)."""
    return sorted(_DEFINED)


def grammar_text(name: str) -> str:
    """A grammar's text: the one a declaration defined, else ``grammars/<name>.lark``."""
    defined = _DEFINED.get(name)
    if defined is not None:
        return defined
    return resources.files("streamparse.grammars").joinpath(f"{name}.lark").read_text(encoding="utf-8")


class _PackageImports:
    """Resolves ``%import relaxed_json.value`` to the packaged grammar file."""

    def __call__(self, base_path: object, grammar_path: str) -> tuple[str, str]:
        name = grammar_path.removesuffix(".lark")
        return name, grammar_text(name)


@functools.cache
def load_grammar(name: str) -> Lark:
    start = "value" if name == "relaxed_json" else "start"
    return Lark(grammar_text(name), parser="lalr", start=start, import_paths=[_PackageImports()])
