"""What the command line is pointed at — model output files, stdin, tools files — read and checked.

Invariant: every function here returns usable input or raises ``CliError`` with a one-line
message naming the file; none lets an ``OSError``, a decoding error or a ``JSONDecodeError``
through. A tools file is accepted exactly when the parser (and so the proxy) accepts its tools.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from typing import Any

from ..arguments.schema import tool_schemas
from ..dialects import REGISTRY

__all__ = ["CliError", "read_text", "load_tools"]


class CliError(Exception):
    """A mistake in what the command was given: reported in one line, exit status 2."""


def _decode(data: bytes, name: str) -> str:
    if b"\0" in data:
        raise CliError(f"{name} looks like a binary file (it contains NUL bytes), not model output")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"{name} is not UTF-8 text (invalid byte at offset {exc.start})") from None


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except IsADirectoryError:
        raise CliError(f"{path!r} is a directory, not a file") from None
    except OSError as exc:
        raise CliError(f"cannot read {path!r}: {exc.strerror or exc}") from None


def read_text(path: str) -> str:
    """A UTF-8 text file, or stdin for ``-``."""
    if path != "-":
        return _decode(_read_bytes(path), repr(path))
    if sys.stdin is None:
        return ""
    buffer = getattr(sys.stdin, "buffer", None)
    return _decode(buffer.read(), "stdin") if buffer is not None else sys.stdin.read()


def load_tools(path: str) -> list[Any]:
    """A JSON list of tools, or an object with a ``tools`` list (a request body). Each tool is accepted
    exactly when the parser (and so the proxy) accepts it."""
    try:
        data = json.loads(_read_bytes(path))
    except (ValueError, RecursionError) as exc:
        raise CliError(f"{path!r} is not JSON: {exc}") from None
    in_body = isinstance(data, dict) and "tools" in data
    tools = data["tools"] if in_body else data
    if not isinstance(tools, list):
        raise CliError(f"{path!r}: expected a JSON list of tools, or an object with a 'tools' list; "
                       f"{'its tools are' if in_body else 'got'} {_short(tools)}")
    for i, tool in enumerate(tools):
        try:
            tool_schemas([tool])
        except ValueError:
            raise CliError(f"{path!r}: tool #{i} needs a 'function' object with a string 'name', "
                           f"as in {{\"type\": \"function\", \"function\": {{\"name\": ...}}}}; got {_short(tool)}") from None
    return tools


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dialect_name(value: str) -> str:
    """``--dialect`` values: a known name or alias; else an error that names the closest ones."""
    known = REGISTRY.known_names()
    if value in known:
        return value
    close = difflib.get_close_matches(value, known, n=3)
    hint = f"did you mean {' or '.join(repr(c) for c in close)}?" if close else f"known: {', '.join(known)}"
    raise argparse.ArgumentTypeError(f"unknown dialect {value!r} ({hint})")
