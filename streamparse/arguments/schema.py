"""Arguments: a call's name and arguments from a decoded object, and values typed by the tool's schema.

JSON itself (strict first, repaired second) is ``relaxed_json``; its names are
re-exported here, where the dialect decoders look for them, as is ``tool_schemas``
(a request's tools are read in ``tools``).

Invariant: coercion only ever changes a value to the type its schema declares
when the text says exactly that value, or a string to its enum's spelling when they differ
only in case; anything else is kept as it was written, and every such change (and every
value outside its enum) is reported by ``review_values``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping  # isinstance against these is much cheaper than typing's
from typing import Any

from .relaxed_json import ArgumentError, ExpressionRefused, RelaxedJsonToPython, refuse_in_arguments, close_open_brackets, decode_string_token, first_line, loads_relaxed, number_value, strip_fences
from .tools import tool_schemas

__all__ = ["ArgumentError", "ExpressionRefused", "RelaxedJsonToPython", "UnparsedArguments", "arguments_from_text",
           "call_from_object", "close_open_brackets", "loads_calls",
           "coerce_value", "decode_string_token", "first_line", "loads_relaxed", "missing_required",
           "number_value", "resolve_unparsed", "strip_fences", "tool_schemas",
           "Note", "brief", "enum_spelling", "review_values", "review_arguments", "mistyped"]


class UnparsedArguments(str):
    """Arguments the model wrote as text that is not a JSON object (``"arguments": "hello"``).

    Kept, never dropped: :func:`resolve_unparsed` gives it to the tool's only string
    parameter when the schema makes that unambiguous; else the block is not a call we can
    represent, and stays text (``ArgumentError``). Blank text is no arguments (``{}``, said).
    """


_ARGUMENT_KEYS = ("arguments", "parameters", "input", "args")
_CALL_KEYS = frozenset({"name", "type", "id", "index", "call_id", "function"})  # beside the name, not arguments


def loads_calls(text: str) -> tuple[Any, bool]:
    """A JSON block that holds calls -> ``(value, repaired)``: every JSON-bodied decoder reads its block
    here. An arithmetic expression stays an opaque :class:`Expression` in the value, so that one written
    beside the arguments (a made-up ``"response"`` key) costs nothing; the arguments themselves are refused
    when they hold one (:func:`call_from_object`, :func:`arguments_from_text`, ``refuse_in_arguments``)."""
    return loads_relaxed(text, expressions=True)


def arguments_from_text(name: str, text: str) -> tuple[dict[str, Any] | UnparsedArguments, bool]:
    """Arguments written as JSON text (the string value of ``"arguments"``, or the text after a name in
    Kimi, DeepSeek, harmony) -> ``(object, repaired)``. Text that is not a JSON object is kept as
    :class:`UnparsedArguments` (the schema decides later); an object holding an expression raises
    :class:`ExpressionRefused`, naming the parameter, as the same object written inline would."""
    try:
        value, repaired = loads_calls(text)
    except ArgumentError:
        return UnparsedArguments(text), True
    if not isinstance(value, dict):
        return UnparsedArguments(text), True  # a bare expression (``2 * 3``) too: text, never evaluated
    refuse_in_arguments(name, value)
    return value, repaired


def call_from_object(obj: Any) -> tuple[str, dict[str, Any] | UnparsedArguments]:
    """Read ``(name, arguments)`` out of a decoded call object.

    Understands ``{"name", "arguments"|"parameters"|"input"|"args"}`` and the
    OpenAI shape ``{"type": "function", "function": {"name", "arguments"}}``.
    Arguments given as a JSON string holding an object are decoded. Arguments holding an
    expression are refused (:class:`ExpressionRefused`); one beside them is ignored with its key.
    """
    if isinstance(obj, dict) and isinstance(obj.get("function"), dict) and "name" not in obj:
        obj = obj["function"]
    if not isinstance(obj, dict):
        raise ArgumentError("a call must be a JSON object")
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ArgumentError("a call needs a non-empty string 'name'")
    args: Any = {}
    for key in _ARGUMENT_KEYS:
        if key in obj:
            args = obj[key]
            break
    else:
        unread = sorted(str(k) for k in obj if k not in _CALL_KEYS)
        if unread:  # something was written beside the name, and none of it is read as the arguments
            raise ArgumentError(f"call {name.strip()!r} has no arguments key; unread key(s) {unread[:5]}")
    if isinstance(args, str):
        return name.strip(), (arguments_from_text(name, args)[0] if args.strip() else {})
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ArgumentError(f"arguments of {name!r} must be an object, not {type(args).__name__}")
    refuse_in_arguments(name, args)
    return name.strip(), args


# --------------------------------------------------------------------------- schema coercion

# Type names models and tool authors use beside JSON Schema's own (as the serving engines accept them).
TYPE_ALIASES = {
    "int": "integer", "long": "integer", "short": "integer", "uint": "integer", "int32": "integer", "int64": "integer",
    "float": "number", "double": "number", "decimal": "number", "num": "number", "float32": "number", "float64": "number",
    "bool": "boolean", "str": "string", "text": "string", "char": "string", "varchar": "string", "dict": "object",
    "map": "object", "list": "array", "tuple": "array", "none": "null",
}


def declared_types(schema: Mapping[str, Any] | None) -> list[str]:
    if not isinstance(schema, Mapping):
        return []
    declared = schema.get("type")
    if isinstance(declared, str):
        return [TYPE_ALIASES.get(declared.lower(), declared.lower())]
    if isinstance(declared, list):
        return [TYPE_ALIASES.get(t.lower(), t.lower()) for t in declared if isinstance(t, str)]
    types: list[str] = []
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or []:
            types.extend(declared_types(sub))
    if not types and "enum" in schema:
        types = sorted({_json_type(v) for v in schema["enum"]})
    return types


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


_PLAIN_INTEGER = re.compile(r"-?[0-9]{1,18}")  # a decimal integer well inside int()'s limits
_NUM_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NO_VALUE = object()


def _from_string(text: str, target: str) -> Any:
    """Convert one string to ``target`` JSON type, or return _NO_VALUE."""
    s = text.strip()
    low = s.lower()
    if target in ("integer", "number") and _NUM_RE.fullmatch(s):
        try:
            value = number_value(s)
        except ArgumentError:
            return _NO_VALUE  # kept as the string it was
        if target == "number" or isinstance(value, int):
            return value
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
    elif target == "boolean":
        if low in ("true", "false"):
            return low == "true"
    elif target == "null":
        if low in ("null", "none", ""):
            return None
    elif target in ("object", "array"):
        try:
            value, _ = loads_relaxed(s)
        except ArgumentError:
            return _NO_VALUE
        if _json_type(value) == target:
            return value
    return _NO_VALUE


def coerce_value(value: Any, schema: Mapping[str, Any] | None) -> Any:
    """Bring one value to the type its schema declares, when that is unambiguous.

    Strings are converted to integer/number/boolean/null/object/array; numbers
    and booleans declared as strings become their text. A value whose type
    is already allowed (or that cannot be converted) is returned unchanged.
    Objects and arrays are coerced member by member.
    """
    types = declared_types(schema)
    actual = _json_type(value)
    if types and actual not in types and not (actual == "integer" and "number" in types):
        if actual == "string":
            for target in ("integer", "number", "boolean", "null", "object", "array"):
                if target in types:
                    converted = _from_string(value, target)
                    if converted is not _NO_VALUE:
                        value, actual = converted, _json_type(converted)
                        break
        elif "string" in types and actual in ("integer", "number", "boolean"):
            return json.dumps(value)
    if isinstance(schema, Mapping):
        if actual == "object" and isinstance(schema.get("properties"), Mapping):
            props = schema["properties"]
            return {k: coerce_value(v, props.get(k)) for k, v in value.items()}
        if actual == "array" and isinstance(schema.get("items"), Mapping):
            return [coerce_value(v, schema["items"]) for v in value]
    return value


def resolve_unparsed(text: str, schema: Mapping[str, Any] | None) -> tuple[dict[str, Any], str | None]:
    """Arguments that were text, not a JSON object: ``({the only string parameter: text}, None)``
    when the schema has exactly one string property; ``({}, why)`` when the text is blank (the model wrote no
    arguments); else ``ArgumentError``: a call with ``{}`` would drop what the model wrote."""
    props = (schema or {}).get("properties") if isinstance(schema, Mapping) else None
    if isinstance(props, Mapping):
        strings = [k for k, v in props.items() if "string" in declared_types(v)]
        if len(props) == 1 and len(strings) == 1:
            return {strings[0]: text}, None
    if not text.strip():
        return {}, f"arguments were text, not a JSON object: {text[:200]!r}"
    raise ArgumentError(f"arguments were text, not a JSON object, and the tool has no one string parameter to "
                        f"give it to: {text[:200]!r}; kept as text")


def missing_required(args: Mapping[str, Any], schema: Mapping[str, Any] | None) -> list[str]:
    """Names the schema requires that the call did not give."""
    if not isinstance(schema, Mapping):
        return []
    return [k for k in schema.get("required") or [] if isinstance(k, str) and k not in args]


# --------------------------------------------------------------------------- what the schema rules out

Note = tuple[str, str, dict[str, Any]]  # (diagnostic code, parameter path, details): what typing changed or found
_UNSEEN = object()  # no written value to compare with (XML-style text, typed by the schema as a matter of course)


def brief(value: Any, limit: int = 80) -> str:
    """A value as short JSON text, for a diagnostic."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    if isinstance(a, (int, float)) != isinstance(b, (int, float)) or isinstance(a, str) != isinstance(b, str):
        return False
    return bool(a == b)


def enum_spelling(value: Any, schema: Mapping[str, Any] | None) -> Any:
    """The schema's enum spelling of a string that differs from exactly one enum string only in case; else
    ``value`` unchanged."""
    enum = schema.get("enum") if isinstance(schema, Mapping) else None
    if not isinstance(value, str) or not isinstance(enum, list) or any(_same(value, e) for e in enum):
        return value
    low = value.casefold()
    matches = [e for e in enum if isinstance(e, str) and e.casefold() == low]
    return matches[0] if len(matches) == 1 else value


def review_values(written: Any, typed: Any, schema: Mapping[str, Any] | None, path: str = "",
                  fix_case: bool = True) -> tuple[Any, list[Note]]:
    """``typed`` (``coerce_value`` of ``written``) with case-only enum mismatches spelled as the enum spells
    them, and what to report: a value whose type changed to the declared one or whose spelling was fixed
    (``coerced``), a value outside its enum (``enum_mismatch``, kept as written). Walks the schema's
    ``properties`` and ``items`` only, so its depth is the schema's, never the model's. ``fix_case=False``:
    the values can no longer change (they have been sent), so a case-only mismatch is an ``enum_mismatch``."""
    if not isinstance(schema, Mapping):
        return typed, []
    notes: list[Note] = []
    if written is not _UNSEEN and path and written is not typed and _json_type(written) != _json_type(typed):
        notes.append(("coerced", path, {"written": brief(written), "value": brief(typed)}))
    enum = schema.get("enum")
    if isinstance(enum, list) and not any(_same(typed, e) for e in enum):
        spelled = enum_spelling(typed, schema) if fix_case else typed
        if spelled is not typed:
            notes.append(("coerced", path, {"written": brief(typed), "value": brief(spelled),
                                            "reason": "enum spelling"}))
            typed = spelled
        else:
            notes.append(("enum_mismatch", path, {"value": brief(typed), "enum": [brief(e) for e in enum[:20]]}))
    props, items = schema.get("properties"), schema.get("items")
    if isinstance(typed, dict) and isinstance(props, Mapping):
        out = {}
        for k, v in typed.items():
            w = written.get(k, _UNSEEN) if isinstance(written, dict) else _UNSEEN
            out[k], sub = review_values(w, v, props.get(k), f"{path}.{k}" if path else k, fix_case)
            notes += sub
        typed = out
    elif isinstance(typed, list) and isinstance(items, Mapping):
        out_items = []
        for i, v in enumerate(typed):
            w = written[i] if isinstance(written, list) and i < len(written) else _UNSEEN
            fixed, sub = review_values(w, v, items, f"{path}[{i}]", fix_case)
            out_items.append(fixed)
            notes += sub
        typed = out_items
    return typed, notes


def mistyped(value: Any, schema: Mapping[str, Any] | None, path: str = "") -> list[Note]:
    """Values whose JSON type is not one their schema declares (``type_mismatch``: the call keeps them as
    written, as coercion could not make them fit). An integer fits ``number``, an integral float ``integer``;
    a schema with no ``type`` (or an ``enum`` only: checked by :func:`review_values`) allows any. Walks the
    schema's ``properties`` and ``items`` only, so its depth is the schema's, never the model's."""
    if not isinstance(schema, Mapping):
        return []
    notes: list[Note] = []
    types = checked_types(schema)
    if not fits_types(value, types):
        notes.append(("type_mismatch", path, {"value": brief(value), "type": " or ".join(types)}))
        return notes
    props, items = schema.get("properties"), schema.get("items")
    if isinstance(value, dict) and isinstance(props, Mapping):
        for k, v in value.items():
            notes += mistyped(v, props.get(k), f"{path}.{k}" if path else k)
    elif isinstance(value, list) and isinstance(items, Mapping):
        for i, v in enumerate(value):
            notes += mistyped(v, items, f"{path}[{i}]")
    return notes


def checked_types(schema: Mapping[str, Any]) -> list[str]:
    """The types :func:`mistyped` holds a value of ``schema`` to: its declared ones (none for an enum-only schema,
    whose values :func:`review_values` checks)."""
    return declared_types(schema) if schema.get("type") is not None or "enum" not in schema else []


def fits_types(value: Any, types: list[str]) -> bool:
    """Is ``value`` of one of ``types`` (:func:`checked_types`)? No types, or one JSON Schema does not know
    ("any", "tuple" unaliased …), rules nothing out."""
    actual = _json_type(value)
    if not types or actual in types or any(t not in _JSON_TYPES for t in types):
        return True
    return (actual == "integer" and "number" in types) or (
        actual == "number" and "integer" in types and float(value).is_integer())


_JSON_TYPES = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})


def review_arguments(written: Any, typed: dict[str, Any], schema: Mapping[str, Any] | None,
                     text_values: bool = False, fix_case: bool = True) -> tuple[dict[str, Any], list[Note]]:
    """:func:`review_values` of a call's arguments. ``text_values``: the values were text (XML-style), so a
    type given by the schema is their reading, not a repair: only enums are checked."""
    reviewed, notes = review_values(_UNSEEN if text_values else written, typed, schema, "", fix_case)
    return (reviewed if isinstance(reviewed, dict) else typed), notes
