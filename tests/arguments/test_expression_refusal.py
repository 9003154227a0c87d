"""Expressions in decoded values: found with their parameter path, refused with details, never evaluated."""

from __future__ import annotations

from typing import Any

import pytest

from streamparse.arguments.relaxed_json import (Expression, ExpressionRefused, expression_paths, loads_relaxed,
                                                refuse_in_arguments)
from streamparse.arguments.schema import UnparsedArguments, arguments_from_text, call_from_object, loads_calls


def test_paths_name_members_and_elements_in_written_order() -> None:
    value, _ = loads_relaxed('{"a": 1, "b": {"c": [0, 2 * 3, {"d": x - 1}]}, "e": math.pi * 2}', expressions=True)
    assert expression_paths(value) == [("b.c[1]", "2 * 3"), ("b.c[2].d", "x - 1"), ("e", "math.pi * 2")]


def test_deep_nesting_costs_no_python_frame() -> None:
    value: Any = Expression("1 + 1")
    for _ in range(5000):
        value = {"k": [value]}
    assert len(expression_paths(value)) == 1


def test_refusal_names_the_tool_the_parameter_and_the_text() -> None:
    with pytest.raises(ExpressionRefused) as caught:
        refuse_in_arguments(" plot ", {"start": 0, "end": Expression("2 * math.pi")})
    assert caught.value.details == {"name": "plot", "parameter": "end", "expression": "2 * math.pi"}
    assert "'end'" in str(caught.value) and "'plot'" in str(caught.value) and "not evaluated" in str(caught.value)


def test_without_expressions_the_json_itself_is_refused() -> None:
    with pytest.raises(ExpressionRefused):
        loads_relaxed('{"end": 2 * math.pi}')
    assert loads_calls('{"end": 2 * math.pi}')[0]["end"].text == "2 * math.pi"


@pytest.mark.parametrize("text, expected", [
    ('{"end": 6.28}', {"end": 6.28}),
    ("{'end': 6.28,}", {"end": 6.28}),
    ("2 * 3", UnparsedArguments("2 * 3")),  # a bare expression: text, for the schema to place or report
    ("pasta with {tomato", UnparsedArguments("pasta with {tomato")),
    ("[1, 2]", UnparsedArguments("[1, 2]")),
])
def test_arguments_written_as_text(text: str, expected: Any) -> None:
    value, _ = arguments_from_text("f", text)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize("obj", [
    {"name": "f", "arguments": '{"end": 2 * math.pi}'},
    {"name": "f", "arguments": {"opts": {"end": 2 * 1}}},
])
def test_a_call_object_with_an_expression_in_its_arguments_is_refused(obj: dict[str, Any]) -> None:
    if isinstance(obj["arguments"], dict):
        obj["arguments"]["opts"]["end"] = Expression("2 * 1")
    with pytest.raises(ExpressionRefused) as caught:
        call_from_object(obj)
    assert caught.value.details["name"] == "f"


def test_an_expression_beside_the_arguments_is_ignored() -> None:
    assert call_from_object({"name": "f", "arguments": {"a": 1}, "response": Expression("2 * 3")}) == ("f", {"a": 1})
