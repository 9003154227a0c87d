"""Tools and calls shared by the constraint tests: a table of schemas, valid calls, and wrong ones.

Invariant: every call in ``VALID`` follows its tool's schema; every call in ``INVALID`` breaks it
in exactly the way its label says (a wrong name, a missing required key, a wrong type, a value
outside an enum, an undeclared key where ``additionalProperties`` is false). ``list_block`` writes
several calls in one list block the way the dialect's renderer writes one.
"""

from __future__ import annotations

from typing import Any

from streamparse.constraints import UNSUPPORTED
from streamparse.constraints.forms import LISTS
from streamparse.dialects.render import RENDERERS, render

SCHEMAS: dict[str, dict[str, Any]] = {
    "get_weather": {"type": "object", "properties": {
        "city": {"type": "string", "description": "a city"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"]},
    "note": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
             "additionalProperties": False},
    "configure": {"type": "object", "properties": {
        "count": {"type": "integer"}, "ratio": {"type": "number"}, "enabled": {"type": "boolean"},
        "mode": {"enum": ["fast", "safe", 3]}},
        "required": ["count", "enabled"]},
    "search": {"type": "object", "properties": {
        "query": {"type": "string"},
        "filters": {"type": "object", "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "range": {"type": "object", "properties": {"low": {"type": "number"}, "high": {"type": "number"}},
                      "required": ["low"]}},
            "required": ["tags"]}},
        "required": ["query", "filters"]},
    "ping": {"type": "object", "properties": {}},
    "bfcl_style": {"type": "dict", "properties": {
        "amount": {"type": "float"}, "pair": {"type": "tuple", "items": {"type": "integer"}},
        "extra": {"type": "any"}, "options": {"type": "dict"}},
        "required": ["amount"]},
}
TOOLS = [{"type": "function", "function": {"name": n, "parameters": s}} for n, s in SCHEMAS.items()]
ANTHROPIC_TOOLS = [{"name": n, "input_schema": s} for n, s in SCHEMAS.items()]

VALID: list[tuple[str, dict[str, Any]]] = [
    ("get_weather", {"city": "Paris"}),
    ("get_weather", {"city": "São Paulo, 日本 😀", "unit": "celsius"}),
    ("note", {"text": 'He said "hi"\\ then left.\tTab, slash / and <b>tags</b>'}),
    ("note", {"text": "two\nlines"}),
    ("configure", {"count": 3, "ratio": 0.25, "enabled": True, "mode": "safe"}),
    ("configure", {"count": -7, "enabled": False}),
    ("configure", {"count": 0, "enabled": True, "mode": 3}),
    ("search", {"query": "llama", "filters": {"tags": ["a", "b c"], "range": {"low": 1.5, "high": 2.5}}}),
    ("search", {"query": "", "filters": {"tags": []}}),
    ("ping", {}),
    ("bfcl_style", {"amount": 12.5, "pair": [1, 2], "extra": {"any": [1, "x", None]}, "options": {"k": "v"}}),
    ("bfcl_style", {"amount": 3.75}),
]

INVALID: list[tuple[str, str, dict[str, Any]]] = [
    ("wrong name", "get_wether", {"city": "Paris"}),
    ("missing required", "get_weather", {"unit": "celsius"}),
    ("missing nested required", "search", {"query": "x", "filters": {"range": {"low": 1.5}}}),
    ("enum violation", "get_weather", {"city": "Paris", "unit": "kelvin"}),
    ("wrong type: string for integer", "configure", {"count": "three", "enabled": True}),
    ("wrong type: number for integer", "configure", {"count": 2.5, "enabled": True}),
    ("wrong type: string for boolean", "configure", {"count": 1, "enabled": "yes"}),
    ("wrong type: array item", "search", {"query": "x", "filters": {"tags": [1]}}),
    ("undeclared key", "note", {"text": "x", "color": "red"}),
    ("undeclared key in an empty tool", "ping", {"force": True}),
]

# Raw-text values: "3" is how both 3 and "3" are written, and the parser keeps a string where one is allowed.
TEXT_VALUE_DIALECTS = {"qwen3_coder", "seed_oss"}

COVERED = [d for d in RENDERERS if d not in UNSUPPORTED]

# Dialects whose block is a list of calls (``[f(a=1), g(b=2)]``), each with a grammar.
LIST_DIALECTS = [d for d in COVERED if d in LISTS]


def list_block(dialect: str, calls: list[tuple[str, dict[str, Any]]]) -> str:
    """One list block holding ``calls``: each rendered alone, its list's opener and closer cut
    off, joined by the dialect's separator inside one opener and closer."""
    opener, closer, joiner = LISTS[dialect]
    texts = [render(dialect, name, args) for name, args in calls]
    assert all(t.startswith(opener) and t.endswith(closer) for t in texts), texts
    return opener + joiner.join(t[len(opener): len(t) - len(closer)] for t in texts) + closer
