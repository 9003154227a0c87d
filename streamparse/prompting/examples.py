"""Example arguments for a tool's JSON schema: the values the tool prompt's example calls show.

Invariant: pure and total: any schema (or none) gives a dict, in bounded depth and size, and never
raises. Each value is one the schema allows where the schema says what it allows (``const``,
``enum``, ``minimum``/``maximum``, ``format``); ``variant=1`` gives a second example that differs from
the first wherever the schema leaves room, so a "several calls" example never teaches a duplicate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["example_arguments"]

_MAX_DEPTH = 4  # example values nest at most this deep
_MAX_KEYS = 4  # properties shown in an example object
_FORMATS = {"date-time": ("2025-01-01T12:00:00Z", "2025-02-01T12:00:00Z"), "date": ("2025-01-01", "2025-02-01"),
            "email": ("user@example.com", "other@example.com"), "uri": ("https://example.com", "https://example.org"),
            "url": ("https://example.com", "https://example.org")}


def example_arguments(schema: Mapping[str, Any] | None, variant: int = 0) -> dict[str, Any]:
    """A plausible arguments object for a JSON schema; ``variant`` 1 is a second, different one."""
    return _example_object(schema, schema, 0, variant) if isinstance(schema, Mapping) else {}


def _example_object(schema: Mapping[str, Any], root: Any, depth: int, variant: int) -> dict[str, Any]:
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    required = schema.get("required")
    keys = [k for k in required if isinstance(k, str)] if isinstance(required, list) else []
    keys = (keys or [k for k in props if isinstance(k, str)])[:_MAX_KEYS]
    return {k: _example_value(props.get(k), root, depth + 1, k, variant) for k in keys}


def _deref(schema: Mapping[str, Any], root: Any) -> Any:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    node = root
    for part in [p for p in ref[1:].split("/") if p]:
        node = node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(node, Mapping) else None
    return node


def _number(schema: Mapping[str, Any], kind: str, variant: int) -> int | float:
    def bound(word: str) -> float | None:
        value = schema.get(word)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and -1e9 < value < 1e9
        return value if ok else None

    low, high = bound("minimum"), bound("maximum")
    number = (low if low is not None else 1) + (0 if kind == "integer" else 0.5)
    if variant and (high is None or number + variant <= high):
        number += variant
    elif high is not None and number > high:
        number = high
    return int(number) if kind == "integer" else number


def _example_value(schema: Any, root: Any, depth: int, key: str, variant: int) -> Any:
    for _ in range(_MAX_DEPTH):  # follow $ref and anyOf/oneOf/allOf a bounded number of steps
        if not isinstance(schema, Mapping):
            return (f"another {key}" if variant else f"example {key}").strip() if schema is not False else None
        if "const" in schema:
            return schema["const"]
        if not variant:  # a default or an example is a first example; a second one is made below
            for word in ("default", "example"):
                if word in schema:
                    return schema[word]
        for word in ("enum", "examples"):
            choices = schema.get(word)
            if isinstance(choices, list) and choices:
                return choices[variant % len(choices)]
        alternatives = next((schema[w] for w in ("anyOf", "oneOf", "allOf") if isinstance(schema.get(w), list)), None)
        if "$ref" in schema:
            schema = _deref(schema, root)
        elif alternatives:
            usable = [a for a in alternatives if not (isinstance(a, Mapping) and a.get("type") == "null")]
            schema = (usable or alternatives)[0]
        else:
            break
    else:
        return None
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "object":
        return _example_object(schema, root, depth, variant) if depth < _MAX_DEPTH else {}
    if kind == "array":
        items = schema.get("items")
        deeper = depth < _MAX_DEPTH and isinstance(items, Mapping)
        return [_example_value(items, root, depth + 1, key, variant)] if deeper else []
    if kind in ("integer", "number"):
        return _number(schema, kind, variant)
    if kind == "boolean":
        return not variant
    if kind == "null":
        return None
    fmt = _FORMATS.get(str(schema.get("format")))
    return fmt[variant % 2] if fmt else (f"another {key}" if variant else f"example {key}").strip()
