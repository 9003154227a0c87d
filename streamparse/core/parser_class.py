"""The parser class, as ``core.parser`` registers it, for the code that trial-reads templates with it.

Invariant: ``core.parser`` registers ``StreamParser`` when it is imported (``streamparse.core`` imports it first,
so the class is there before anything here is asked). Reading a template needs the parser, and the parser takes a
template: this registration is how the one reaches the other without the two modules importing each other.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["register_parser", "parser_class"]

_REGISTERED: list[Callable[..., Any]] = []


def register_parser(cls: Callable[..., Any]) -> None:
    _REGISTERED[:] = [cls]


def parser_class() -> Callable[..., Any]:
    return _REGISTERED[0]  # (streamparse.core's own import registered it)
