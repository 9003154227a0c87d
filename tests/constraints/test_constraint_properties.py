"""Properties: any arguments that follow the schema, rendered by the dialect, are accepted and read back.

Hypothesis draws the values (any unicode text, quotes, backslashes, control characters; integers,
numbers, booleans, enums, nested lists), the engine is llguidance, and the read-back is the parser.
"""

from __future__ import annotations

import json
from typing import Any

import budget
from grammar_engine import accepts, compiles
from hypothesis import example, given, settings
from hypothesis import strategies as st

import streamparse as sp
from streamparse.constraints import build_constraint
from streamparse.dialects.render import render

SCHEMA = {"type": "object", "properties": {
    "text": {"type": "string"},
    "count": {"type": "integer"},
    "ratio": {"type": "number"},
    "flag": {"type": "boolean"},
    "unit": {"enum": ["c", "f"]},
    "tags": {"type": "array", "items": {"type": "string"}},
}, "required": ["text", "count"]}
TOOLS = [{"type": "function", "function": {"name": "record", "parameters": SCHEMA}}]
DIALECTS = ("hermes", "llama3_json", "pythonic", "qwen3_coder", "mistral", "kimi_k2")
GRAMMARS = {d: build_constraint(d, TOOLS).grammar for d in DIALECTS}


def _xml_safe(text: str) -> bool:
    """Raw XML text that reads back as written: one stripped line, never the closing tag."""
    return "</parameter>" not in text and "\n" not in text and "\r" not in text and text == text.strip()


@st.composite
def arguments(draw: Any, dialect: str) -> dict[str, Any]:
    text = st.text(max_size=30)
    if dialect == "qwen3_coder":
        text = text.filter(_xml_safe)
    args: dict[str, Any] = {"text": draw(text), "count": draw(st.integers(-10**12, 10**12))}
    if draw(st.booleans()):
        args["ratio"] = draw(st.floats(-1e6, 1e6, allow_nan=False).filter(lambda x: not float(x).is_integer()))
    if draw(st.booleans()):
        args["flag"] = draw(st.booleans())
    if draw(st.booleans()):
        args["unit"] = draw(st.sampled_from(["c", "f"]))
    if draw(st.booleans()):
        args["tags"] = draw(st.lists(st.text(max_size=8), max_size=3))
    return args


@settings(max_examples=budget.examples(200), deadline=None)
@given(st.sampled_from(DIALECTS).flatmap(lambda d: st.tuples(st.just(d), arguments(d))))
@example(("hermes", {"text": "", "count": 0, "ratio": 0.00014143940234484078}))  # 20 fraction digits, as repr writes it
def test_schema_valid_arguments_are_accepted_and_read_back(case: tuple[str, dict[str, Any]]) -> None:
    dialect, args = case
    text = "Calling.\n" + render(dialect, "record", args)
    assert accepts(GRAMMARS[dialect], text)
    result = sp.parse(text, TOOLS, dialects=[dialect])
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == [("record", args)]


_JUNK = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4)
    | st.sampled_from(["string", "integer", "number", "boolean", "object", "array", "null", "dict", "float", "tuple",
                       "any", "#/$defs/x", "#", "#/properties"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["type", "properties", "required", "enum", "const", "items", "anyOf", "oneOf", "allOf",
                         "additionalProperties", "$ref", "$defs", "x"]), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=budget.examples(300), deadline=None)
@given(schema=_JUNK, dialect=st.sampled_from(DIALECTS), name=st.text(min_size=1, max_size=6))
def test_any_schema_and_name_give_a_grammar_the_engine_reads(schema: Any, dialect: str, name: str) -> None:
    for choice in ("required", None):
        constraint = build_constraint(dialect, [{"name": name, "input_schema": schema}], tool_choice=choice)
        assert constraint is not None
        compiles(constraint.grammar)
    assert accepts(constraint.grammar, "Some prose.")
