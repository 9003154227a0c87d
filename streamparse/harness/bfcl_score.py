"""BFCL's AST rule: is a list of calls a correct answer to one Berkeley Function Calling Leaderboard case?

Follows BFCL's own checker (``bfcl_eval/eval_checker/ast_eval/ast_checker.py``, Python cases): a call
is right when its name is the expected one, every required parameter is present, every given parameter
is declared *and* expected, each value has the declared type (an int passes for a float; a value of
the ground truth's own type passes as a "variable") and is among the allowed values, and every
expected parameter without ``""`` among its allowed values is given. Strings are compared after
BFCL's ``standardize_string`` (spaces and ``,./-_*^`` removed, lower case, ``'`` read as ``"``);
lists element by element, dicts key by key, lists of dicts dict by dict in order. ``simple`` and
``multiple`` want exactly one call; ``parallel`` wants as many calls as expected, matched one to one
in any order (a bijection: BFCL matches greedily, which can only be stricter); ``irrelevance`` is
right exactly when there is no call.

Function names: tools are offered with ``.`` replaced by ``_`` (OpenAI's name rule, as BFCL does for
its function-calling models), and expected names are compared the same way.

Invariant: pure functions of plain data; scoring never raises on any model output (arguments
that are not a JSON object are a failure of kind ``bad_arguments``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

__all__ = ["Verdict", "FAILURE_KINDS", "openai_tools", "json_schema", "tool_name", "score_case", "check_call",
           "standardize"]

# Failure kinds, in the order a report lists them.
FAILURE_KINDS = ("error", "no_call", "call_when_none", "extra_call", "too_few_calls", "wrong_name", "bad_arguments",
                 "missing_required", "unexpected_param", "type_error", "value_not_allowed", "missing_expected")

_PY_TYPES: dict[str, type] = {"string": str, "integer": int, "float": float, "number": float, "boolean": bool,
                              "array": list, "tuple": list, "dict": dict, "object": dict, "any": str}
_JSON_TYPES = {"dict": "object", "float": "number", "tuple": "array"}


@dataclass(frozen=True)
class Verdict:
    correct: bool
    kind: str = "ok"  # "ok" or one of FAILURE_KINDS
    detail: str = ""


OK = Verdict(True)


# --------------------------------------------------------------------------- schema

def tool_name(name: str) -> str:
    """The name a BFCL function is offered under (OpenAI allows no dots)."""
    return name.replace(".", "_")


def json_schema(schema: Any) -> Any:
    """BFCL's schema dialect as JSON Schema: ``dict`` -> object, ``float`` -> number, ``tuple`` -> array,
    ``any`` -> no type constraint. Everything else is kept as written."""
    if isinstance(schema, list):
        return [json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            if value == "any":
                continue
            out[key] = _JSON_TYPES.get(value, value)
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: json_schema(sub) for name, sub in value.items()}
        else:
            out[key] = json_schema(value)
    return out


def openai_tools(functions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """BFCL function descriptions as OpenAI ``tools``."""
    return [{"type": "function", "function": {"name": tool_name(f["name"]), "description": f.get("description", ""),
                                              "parameters": json_schema(f.get("parameters") or {})}}
            for f in functions]


# --------------------------------------------------------------------------- values

def standardize(text: str) -> str:
    """BFCL's ``standardize_string``."""
    return re.sub(r"[ ,./\-_*^]", "", text).lower().replace("'", '"')


def _std(value: Any) -> Any:
    return standardize(value) if isinstance(value, str) else value


def _answer_type(allowed: Sequence[Any]) -> type | None:
    return next((type(a) for a in allowed if a != ""), None)


def _type_ok(value: Any, allowed: Sequence[Any], expected: type | None, nested: type | None) -> tuple[bool, bool]:
    """(type acceptable, read as a variable) as BFCL's ``type_checker`` decides."""
    answer_type = _answer_type(allowed)
    variable = answer_type is not None and answer_type is not expected
    if expected is None:
        return True, False
    if type(value) is expected:
        if nested is None:
            return True, variable
        for item in allowed:
            if isinstance(item, list) and isinstance(value, list) and all(_type_ok(v, item, nested, None)[0] for v in value):
                return True, variable
    return (True, True) if answer_type is not None and type(value) is answer_type else (False, False)


def _dict_ok(value: Mapping[str, Any], allowed: Sequence[Any]) -> bool:
    for option in allowed:
        if option == "" or not isinstance(option, dict):
            continue
        if all(k in option and _std(v) in [_std(a) for a in option[k]] for k, v in value.items()) and \
                all(k in value or "" in v for k, v in option.items()):
            return True
    return False


def _value_ok(value: Any, allowed: Sequence[Any], expected: type | None, nested: type | None) -> bool:
    if expected is dict and isinstance(value, dict):
        return _dict_ok(value, allowed)
    if expected is list and nested is dict and isinstance(value, list):
        return any(isinstance(option, list) and len(option) == len(value)
                   and all(isinstance(v, dict) and _dict_ok(v, [o]) for v, o in zip(value, option))
                   for option in allowed)
    if expected is str and isinstance(value, str):
        return standardize(value) in [standardize(a) for a in allowed if isinstance(a, str)]
    if expected is list and isinstance(value, list):
        return [_std(v) for v in value] in [[_std(a) for a in option] for option in allowed if isinstance(option, list)]
    return value in allowed


# --------------------------------------------------------------------------- one call

def _arguments(raw: Any) -> dict[str, Any] | None:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return None
    return raw if isinstance(raw, dict) else None


def check_call(function: Mapping[str, Any], call: Mapping[str, Any], expected: Mapping[str, Any]) -> Verdict:
    """One call (``{"name", "arguments"}``, arguments a dict or JSON text) against one BFCL function
    description and its ground truth ``{name: {param: [allowed...]}}``."""
    ((gt_name, allowed_by_param),) = expected.items()
    if call.get("name") != tool_name(gt_name):
        return Verdict(False, "wrong_name", f"{call.get('name')!r} instead of {tool_name(gt_name)!r}")
    arguments = _arguments(call.get("arguments"))
    if arguments is None:
        return Verdict(False, "bad_arguments", f"arguments are not a JSON object: {str(call.get('arguments'))[:200]!r}")
    parameters = function.get("parameters") or {}
    declared = parameters.get("properties") or {}
    for name in parameters.get("required") or []:
        if name not in arguments:
            return Verdict(False, "missing_required", name)
    for name, value in arguments.items():
        if name not in declared or name not in allowed_by_param:
            return Verdict(False, "unexpected_param", name)
        spec = declared[name] if isinstance(declared[name], dict) else {}
        type_name = spec.get("type")
        if type_name == "float" and type(value) is int:
            value = float(value)
        expected_type = _PY_TYPES.get(type_name) if isinstance(type_name, str) else None
        items = spec.get("items")
        nested = None
        if type_name in ("array", "tuple") and isinstance(items, dict) and isinstance(items.get("type"), str):
            nested = _PY_TYPES.get(items["type"])
        allowed = allowed_by_param[name]
        type_ok, variable = _type_ok(value, allowed, expected_type, nested)
        if not type_ok:
            return Verdict(False, "type_error", f"{name}={value!r}: not {type_name}")
        if not (value in allowed if variable else _value_ok(value, allowed, expected_type, nested)):
            return Verdict(False, "value_not_allowed", f"{name}={value!r} not in {allowed!r}")
    for name, allowed in allowed_by_param.items():
        if name not in arguments and "" not in allowed:
            return Verdict(False, "missing_expected", name)
    return OK


# --------------------------------------------------------------------------- one case

def _find(functions: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any]:
    return next((f for f in functions if f.get("name") == name), functions[0] if functions else {})


def _bijection(ok: list[list[bool]]) -> bool:
    """Whether every expected call (row) matches a distinct received call (column)."""
    owner: dict[int, int] = {}

    def place(row: int, seen: set[int]) -> bool:
        for col, good in enumerate(ok[row]):
            if good and col not in seen:
                seen.add(col)
                if col not in owner or place(owner[col], seen):
                    owner[col] = row
                    return True
        return False

    return all(place(row, set()) for row in range(len(ok)))


def score_case(category: str, functions: Sequence[Mapping[str, Any]], calls: Sequence[Mapping[str, Any]],
               ground_truth: Sequence[Mapping[str, Any]] | None) -> Verdict:
    """Whether ``calls`` answer a case of ``category`` (simple_python, multiple, parallel, irrelevance)."""
    if category.startswith("irrelevance"):
        return OK if not calls else Verdict(False, "call_when_none", ", ".join(str(c.get("name")) for c in calls))
    expected = list(ground_truth or [])
    if not calls:
        return Verdict(False, "no_call")
    if len(calls) != len(expected):
        kind = "extra_call" if len(calls) > len(expected) else "too_few_calls"
        return Verdict(False, kind, f"{len(calls)} calls, {len(expected)} expected")
    table = [[check_call(_find(functions, next(iter(gt))), call, gt) for call in calls] for gt in expected]
    if _bijection([[v.correct for v in row] for row in table]):
        return OK
    # Explain with the closest miss: a call of the right name if there is one.
    for row in table:
        if not any(v.correct for v in row):
            named = [v for v in row if v.kind != "wrong_name"]
            return (named or row)[0]
    return Verdict(False, "value_not_allowed", "no one-to-one match")  # each matches, but not all at once
