"""JSON Schema to GBNF: a tool's arguments as JSON, as Python keyword literals, or as XML parameter text.

Invariant: a value the grammar accepts is one the schema allows, read the way streamparse reads
it (``json.loads``; the pythonic decoder; ``coerce_xml_value``). Type names are normalised as
``arguments.schema`` normalises them (``dict``, ``float``, ``tuple``, ``any`` …). Objects follow
the declared property order, ``required`` keys are never skipped, and keys the schema does not
declare are only allowed where ``additionalProperties`` is true or a schema (xgrammar's strict
reading, which vLLM and SGLang use). What a grammar cannot hold exactly (``pattern``, ``format``,
numeric bounds, string lengths) is left free, never narrowed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Callable, Literal

from ..arguments.schema import TYPE_ALIASES
from .gbnf import Grammar, literal

__all__ = ["Values", "Style", "normalise_schema"]

Style = Literal["json", "python", "xml"]  # how values are written: JSON, Python literals, raw XML text

_WS = '[ \\t\\n]{0,20}'
_JSON_CHAR = '[^"\\\\\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})'
_PY_CHARS = {"'": "[^'\\\\\\n] | \"\\\\\" [^\\n]", '"': '[^"\\\\\\n] | "\\\\" [^\\n]'}
_INTEGER = '"-"? ("0" | [1-9] [0-9]{0,17})'
# (fraction digits: 17 significant ones after up to 6 zeros, as the shortest round-trip forms write a double
# positionally down to 1e-4 in Python, 1e-6 in JavaScript: 0.00014143940234484078)
_NUMBER = _INTEGER + ' ("." [0-9]{1,24})? ([eE] [-+]? [0-9]{1,3})?'
_LITERAL_KEYS = frozenset({"enum", "const", "default", "examples", "example", "required"})
_ANY_TYPES = ("string", "integer", "number", "boolean", "null", "object", "array")


def normalise_schema(schema: Any) -> Any:
    """``schema`` as the engines read it: type aliases spelled as JSON Schema (``dict`` → ``object``,
    ``float`` → ``number``, ``tuple`` → ``array``, ``any`` → no type), and ``additionalProperties: false``
    written out on every object that declares properties without saying (the strict reading)."""
    if isinstance(schema, list):
        return [normalise_schema(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {k: v if k in _LITERAL_KEYS else normalise_schema(v) for k, v in schema.items() if k != "type"}
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else None
    if names is not None:
        kinds = [TYPE_ALIASES.get(t.lower(), t.lower()) for t in names if isinstance(t, str)]
        if "any" not in kinds and kinds:
            out["type"] = kinds[0] if len(kinds) == 1 else kinds
    for key in ("properties", "$defs", "definitions"):
        if isinstance(schema.get(key), Mapping):
            out[key] = {k: normalise_schema(v) for k, v in schema[key].items()}
    if isinstance(out.get("properties"), Mapping) and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


class Values:
    """Writes value rules into one grammar; a schema seen again reuses its rule."""

    def __init__(self, grammar: Grammar, root: Mapping[str, Any] | None = None, *, xml_close: str = "") -> None:
        self.g = grammar
        self.root = root or {}
        self._anys: set[str] = set()
        self._seen: dict[tuple[str, str], str] = {}
        self._xml_close = xml_close
        self._xml_text = ""
        g = grammar
        self.ws = g.rule("ws", _WS)
        self.json_string = g.rule("json-string", f'"\\"" ({_JSON_CHAR})* "\\""')
        self.py_string = g.rule("py-string", " | ".join(f'"{q}" ({c})* "{q}"' if q == "'" else f"\"\\\"\" ({c})* \"\\\"\""
                                                          for q, c in _PY_CHARS.items()))
        self.integer = g.rule("integer", _INTEGER)
        self.number = g.rule("number", _NUMBER)

    # ----------------------------------------------------------------- entry points

    @property
    def xml_text(self) -> str:
        """Raw text up to the parameter's closing tag (which it never holds)."""
        if not self._xml_close:
            raise ValueError("XML parameter text asked for, but no parameter closer given (xml_close)")
        if not self._xml_text:
            self._xml_text = self.g.avoiding("xml-text", (self._xml_close,))
        return self._xml_text

    def value(self, schema: Any, style: Style, hint: str = "v") -> str:
        """The rule name for one value of ``schema`` written in ``style`` (``xml``: a parameter's text)."""
        ref = isinstance(schema, Mapping) and "$ref" in schema
        key = (json.dumps([schema, self.root if ref else None], sort_keys=True, default=str), style)
        if key not in self._seen:
            if ref:  # may recurse: name the rule before its body
                name = self._seen[key] = self.g.name(f"{hint}-ref")
                self.g.define(name, self._value(schema, style, hint))
            else:
                self._seen[key] = self._value(schema, style, hint)
        return self._seen[key]

    def _value(self, schema: Any, style: Style, hint: str) -> str:
        schema = self._deref(schema)
        if schema is False:
            return self.g.rule("nothing", '"\\x00" "\\x00"')  # no value is allowed: nothing a model writes
        if not isinstance(schema, Mapping):
            return self._any(style)
        if "const" in schema:
            return self._choices([schema["const"]], style, hint)
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self._choices(schema["enum"], style, hint)
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                parts = [self.value(s, style, hint) for s in schema[key]]
                return self.g.rule(hint, " | ".join(dict.fromkeys(parts)))
        if isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
            return self.value(schema["allOf"][0], style, hint)
        declared = schema.get("type")
        kinds = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else None
        if kinds is None:
            kinds = ["object"] if "properties" in schema else ["array"] if "items" in schema else list(_ANY_TYPES)
        parts = [self._typed(str(k), schema, style, hint) for k in kinds if k in _ANY_TYPES]
        return self.g.rule(hint, " | ".join(dict.fromkeys(parts))) if parts else self._any(style)

    def members(self, schema: Any, pair: Callable[[str, str], str], sep: str, style: Style, hint: str,
                extra_pair: str | None = None) -> str:
        """The rule for an object's members in declared order, ``sep`` between them.

        ``pair(name, value_rule)`` writes one member; ``extra_pair`` (a rule) is a member the
        schema does not declare, allowed after the declared ones when ``additionalProperties``
        allows it (its default: only an object that declares no properties).
        """
        schema = self._deref(schema)
        schema = schema if isinstance(schema, Mapping) else {}
        props = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
        listed = schema.get("required")
        required = {k for k in listed if isinstance(k, str)} if isinstance(listed, list) else set()
        extra = schema.get("additionalProperties", "properties" not in schema)
        members = [(pair(name, self.value(sub, style, f"{hint}-{name}")), name in required) for name, sub in props.items()]
        names = {(i, first): self.g.name(f"{hint}-m{i}{'f' if first else 'n'}")
                 for i in range(len(members) + 1) for first in (True, False)}
        for i in range(len(members), -1, -1):
            for first in (True, False):
                lead = "" if first else f"{sep} "
                if i < len(members):
                    text, needed = members[i]
                    take = f"{lead}{text} {names[(i + 1, False)]}"
                    body = take if needed else f"{take} | {names[(i + 1, first)]}"
                elif extra_pair and extra is not False and extra is not None:
                    body = f'"" | {lead}{extra_pair} ({sep} {extra_pair})*'
                else:
                    body = '""'
                self.g.define(names[(i, first)], body)
        return names[(0, True)]

    # ----------------------------------------------------------------- pieces

    def _deref(self, schema: Any) -> Any:
        for _ in range(8):
            if not (isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#")):
                return schema
            node: Any = self.root
            for part in [p for p in schema["$ref"][1:].split("/") if p]:
                node = node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(node, Mapping) else None
            schema = node
        return True

    def _choices(self, values: list[Any], style: Style, hint: str) -> str:
        texts = []
        for v in values:
            if style == "json":
                texts.append(json.dumps(v, ensure_ascii=False))
            elif style == "python":
                texts.append(_python_literal(v))
            else:
                texts.append(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
        alternatives = [literal(t) for t in dict.fromkeys(texts)]
        if style == "python":  # a string may be written with either quote
            alternatives += [literal(json.dumps(v, ensure_ascii=False)) for v in values
                             if isinstance(v, str) and "\\" not in json.dumps(v) and json.dumps(v) not in texts]
        return self.g.rule(f"{hint}-enum", " | ".join(dict.fromkeys(alternatives)))

    def _any(self, style: Style) -> str:
        name = f"any-{style}"
        if name not in self._anys:
            self._anys.add(name)
            if style == "xml":
                self.g.define(name, self.xml_text)
            else:
                self.g.define(name, " | ".join(self._typed(k, {}, style, name) for k in _ANY_TYPES))
        return name

    def _typed(self, kind: str, schema: Mapping[str, Any], style: Style, hint: str) -> str:
        g, ws = self.g, self.ws
        if kind == "string":
            if style == "xml":
                return g.rule("xml-text", '[^<]* ("<" [^/<] [^<]* | "</" [^p] [^<]*)*')
            return self.json_string if style == "json" else self.py_string
        if kind in ("integer", "number"):
            return self.integer if kind == "integer" else self.number
        if kind == "boolean":
            return g.rule(f"bool-{style}", '"True" | "False"' if style == "python" else '"true" | "false"')
        if kind == "null":
            return g.rule(f"null-{style}", '"None"' if style == "python" else '"null"')
        inner: Style = "python" if style == "python" else "json"  # XML holds nested values as JSON
        if kind == "array":
            items = schema.get("items", True)
            item = self.value(items if isinstance(items, (Mapping, bool)) else True, inner, f"{hint}-item")
            return g.rule(f"{hint}-array", f'"[" {ws} ({item} ({ws} "," {ws} {item})*)? {ws} "]"')
        string = self.json_string if inner == "json" else self.py_string
        extra = schema.get("additionalProperties", "properties" not in schema)
        other = None if extra is False or extra is None else g.rule(
            f"{hint}-pair", f'{string} {ws} ":" {ws} ' + self.value(extra if isinstance(extra, Mapping) else True,
                                                                  inner, f"{hint}-extra"))
        body = self.members(schema, lambda k, v: f'{literal(self._key(k, inner))} {ws} ":" {ws} {v}',
                            f'{ws} "," {ws}', inner, f"{hint}-o", other)
        return g.rule(f"{hint}-object", f'"{{" {ws} {body} {ws} "}}"')


    @staticmethod
    def _key(name: str, style: Style) -> str:
        return json.dumps(name, ensure_ascii=False) if style == "json" else repr(name)


def _python_literal(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_python_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_python_literal(k)}: {_python_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)
