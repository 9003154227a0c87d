"""XML-style parameter values (Qwen3-Coder, Seed-OSS, GLM, MiniMax): raw text between tags, its layout taken off,
typed only by the tool's schema.

Invariant: the layout rule is one function (``settle_layout``), shared by the whole decode here and the streamed
values (``core.stream_tags``), so a value streamed equals the value decoded whole.
"""

from __future__ import annotations

from typing import Any, Mapping

from .schema import _PLAIN_INTEGER, coerce_value, declared_types

__all__ = ["strip_layout", "settle_layout", "coerce_xml_value"]


def strip_layout(raw: str) -> str:
    """Remove the layout around an XML-style value, keep what is inside it.

    The newline after the opening tag and the last newline with the indentation after it (before the closing
    tag) are layout; so is the closing tag's indentation at the start of every line, when every line that is not
    blank starts with it (the whole call indented: ``"\n    Dallas\n    "`` -> ``"Dallas"``, SGLang's test).
    Everything else is the value as written: indentation the closing tag does not share, blank lines, spaces
    around one line (``"\n    print(x)\n"`` -> ``"    print(x)"``, llama.cpp's test; vLLM #48753: one newline
    on each side is markup).
    """
    if raw[:1] == "\n" and raw[-1:] == "\n" and raw.count("\n") == 2 and "\r" not in raw:
        return raw[1:-1]  # (one line between the tags' own lines: what the rule below makes of it, sooner)
    return settle_layout(raw[1:] if raw.startswith("\n") else raw[2:] if raw.startswith("\r\n") else raw)


def settle_layout(value: str) -> str:
    """:func:`strip_layout` once the newline after the opening tag is gone: the closing tag's line and indentation."""
    nl = value.rfind("\n")
    if nl < 0 or value[nl + 1 :].strip(" \t"):
        return value
    indent = value[nl + 1 :]
    value = value[: nl - 1 if value[nl - 1 : nl] == "\r" else nl]
    lines = value.split("\n")
    if indent and all(line.startswith(indent) or not line.strip() for line in lines):
        value = "\n".join(line[len(indent):] if line.startswith(indent) else line.lstrip(" \t") for line in lines)
    return value


def coerce_xml_value(raw: str, schema: Mapping[str, Any] | None, layout: bool = True,
                     types: list[str] | None = None) -> Any:
    """An XML-style parameter value (Qwen3, GLM, Seed-OSS, MiniMax): raw text, typed only by the schema.

    Layout is removed first (:func:`strip_layout`), unless the dialect writes none (``layout=False``: the
    value is exactly what is between its tags, as GLM writes it). Without a schema, or when the
    schema allows a string, the text stays a string; ``null``/``None`` becomes JSON
    null when the schema allows null (``anyOf: [{type: string}, {type: null}]``). ``types``: the schema's
    :func:`declared_types`, when the caller has them already.
    """
    value = strip_layout(raw) if layout else raw
    if types is None:
        types = declared_types(schema)
    if "null" in types and value.strip().lower() in ("null", "none"):
        return None
    if not types or "string" in types:
        return value
    if ("integer" in types or "number" in types) and _PLAIN_INTEGER.fullmatch(value):
        return int(value)  # what coerce_value makes of it (integer is the first type it tries), without its walk
    return coerce_value(value, schema)
