"""BFCL's AST rule (streamparse.harness.bfcl_score) on cases written here, in BFCL's own format."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamparse.harness.bfcl_score import check_call, json_schema, openai_tools, score_case, standardize

AREA = {"name": "geometry.area", "description": "Area of a shape.", "parameters": {
    "type": "dict", "properties": {
        "shape": {"type": "string", "description": "circle or square"},
        "size": {"type": "float", "description": "radius or side"},
        "count": {"type": "integer", "description": "how many"},
        "exact": {"type": "boolean", "description": "no rounding"},
        "tags": {"type": "array", "items": {"type": "string"}, "description": "labels"},
        "options": {"type": "dict", "properties": {"unit": {"type": "string"}, "digits": {"type": "integer"}}},
        "point": {"type": "tuple", "items": {"type": "integer"}},
        "anything": {"type": "any"},
    }, "required": ["shape", "size"]}}
TRUTH = {"geometry.area": {"shape": ["circle"], "size": [2.0], "count": ["", 1], "exact": ["", False],
                           "tags": ["", ["Red", "blue"]], "options": ["", {"unit": ["cm", "m"], "digits": ["", 2]}],
                           "point": ["", [1, 2]], "anything": ["", "x"]}}


def call(name: str = "geometry_area", **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": json.dumps(arguments)}


def kind(c: dict[str, Any]) -> str:
    return check_call(AREA, c, TRUTH).kind


def test_the_schema_dialect_becomes_json_schema() -> None:
    (tool,) = openai_tools([AREA])
    fn = tool["function"]
    assert fn["name"] == "geometry_area"  # OpenAI allows no dots, as BFCL offers it
    props = fn["parameters"]["properties"]
    assert fn["parameters"]["type"] == "object" and props["size"]["type"] == "number"
    assert props["options"]["type"] == "object" and props["point"]["type"] == "array"
    assert "type" not in props["anything"]  # "any": no constraint
    assert props["tags"] == {"type": "array", "items": {"type": "string"}, "description": "labels"}
    # a parameter named "type" is a property, not a type keyword
    assert json_schema({"type": "dict", "properties": {"type": {"type": "float"}}}) == \
        {"type": "object", "properties": {"type": {"type": "number"}}}


def test_a_right_call_passes_with_an_int_for_a_float_and_optional_parameters_left_out() -> None:
    assert kind(call(shape="circle", size=2)) == "ok"
    assert kind(call(shape="circle", size=2.0, count=1, exact=False)) == "ok"


def test_strings_are_standardized_as_bfcl_does() -> None:
    assert standardize(" New-York, N.Y. ") == "newyorkny"
    assert kind(call(shape=" Circle ", size=2)) == "ok"
    assert kind(call(shape="CIRC_LE", size=2)) == "ok"  # BFCL drops _ too
    assert kind(call(shape="circles", size=2)) == "value_not_allowed"


def test_name_required_declared_and_expected() -> None:
    assert kind(call("geometry.area", shape="circle", size=2)) == "wrong_name"
    assert kind(call("area", shape="circle", size=2)) == "wrong_name"
    assert kind(call(shape="circle")) == "missing_required"
    assert kind(call(shape="circle", size=2, colour="red")) == "unexpected_param"


def test_a_parameter_expected_without_an_empty_option_must_be_given() -> None:
    truth = {"geometry.area": {**TRUTH["geometry.area"], "count": [3]}}
    assert check_call(AREA, call(shape="circle", size=2), truth).kind == "missing_expected"
    assert check_call(AREA, call(shape="circle", size=2, count=3), truth).kind == "ok"


def test_declared_but_not_in_the_ground_truth_is_unexpected() -> None:
    truth = {"geometry.area": {"shape": ["circle"], "size": [2.0]}}
    assert check_call(AREA, call(shape="circle", size=2, count=1), truth).kind == "unexpected_param"


def test_types_are_checked_before_values() -> None:
    assert kind(call(shape="circle", size="2")) == "type_error"
    assert kind(call(shape="circle", size=2, count=1.0)) == "type_error"
    assert kind(call(shape="circle", size=2, count=True)) == "type_error"  # a bool is not an integer
    assert kind(call(shape="circle", size=2, exact=0)) == "type_error"
    assert kind(call(shape="circle", size=2, count=2)) == "value_not_allowed"


def test_lists_compare_element_by_element_with_strings_standardized() -> None:
    assert kind(call(shape="circle", size=2, tags=["red", "Blue "])) == "ok"
    assert kind(call(shape="circle", size=2, tags=["blue", "red"])) == "value_not_allowed"  # order matters
    assert kind(call(shape="circle", size=2, tags=["red"])) == "value_not_allowed"
    assert kind(call(shape="circle", size=2, point=[1, 2])) == "ok"  # a tuple arrives as a JSON array


def test_dicts_compare_key_by_key() -> None:
    assert kind(call(shape="circle", size=2, options={"unit": "CM"})) == "ok"
    assert kind(call(shape="circle", size=2, options={"unit": "m", "digits": 2})) == "ok"
    assert kind(call(shape="circle", size=2, options={"unit": "km"})) == "value_not_allowed"
    assert kind(call(shape="circle", size=2, options={"digits": 2})) == "value_not_allowed"  # unit has no ""
    assert kind(call(shape="circle", size=2, options={"unit": "m", "style": "x"})) == "value_not_allowed"


def test_any_is_read_as_a_string() -> None:
    assert kind(call(shape="circle", size=2, anything="X")) == "ok"
    assert kind(call(shape="circle", size=2, anything=5)) == "type_error"


def test_a_ground_truth_of_another_type_is_a_variable_compared_as_is() -> None:
    # BFCL writes a variable name as a string where the parameter is a number.
    truth = {"geometry.area": {"shape": ["circle"], "size": ["r"]}}
    assert check_call(AREA, call(shape="circle", size="r"), truth).kind == "ok"
    assert check_call(AREA, call(shape="circle", size="R"), truth).kind == "value_not_allowed"


def test_arguments_that_are_not_a_json_object() -> None:
    assert kind({"name": "geometry_area", "arguments": "{shape: circle"}) == "bad_arguments"
    assert kind({"name": "geometry_area", "arguments": "[1]"}) == "bad_arguments"
    assert kind({"name": "geometry_area", "arguments": {"shape": "circle", "size": 2}}) == "ok"


SQUARE = {"name": "square", "description": "x squared", "parameters": {
    "type": "dict", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}
CUBE = {"name": "cube", "description": "x cubed", "parameters": {
    "type": "dict", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}


def test_simple_and_multiple_want_exactly_one_call() -> None:
    truth = [{"square": {"x": [3]}}]
    assert score_case("simple_python", [SQUARE], [call("square", x=3)], truth).correct
    assert score_case("simple_python", [SQUARE], [], truth).kind == "no_call"
    assert score_case("simple_python", [SQUARE], [call("square", x=3)] * 2, truth).kind == "extra_call"
    assert score_case("multiple", [CUBE, SQUARE], [call("square", x=3)], truth).correct
    assert score_case("multiple", [CUBE, SQUARE], [call("cube", x=3)], truth).kind == "wrong_name"


def test_parallel_matches_calls_one_to_one_in_any_order() -> None:
    truth = [{"square": {"x": [3]}}, {"square": {"x": [4]}}, {"cube": {"x": [3, 4]}}]
    functions = [SQUARE, CUBE]
    good = [call("cube", x=4), call("square", x=4), call("square", x=3)]
    assert score_case("parallel", functions, good, truth).correct
    assert score_case("parallel", functions, good[:2], truth).kind == "too_few_calls"
    assert score_case("parallel", functions, [*good, call("cube", x=3)], truth).kind == "extra_call"
    twice = [call("cube", x=4), call("square", x=4), call("square", x=4)]
    assert not score_case("parallel", functions, twice, truth).correct  # one call cannot answer two
    wrong = [call("cube", x=4), call("square", x=5), call("square", x=3)]
    assert score_case("parallel", functions, wrong, truth).kind == "value_not_allowed"


def test_parallel_finds_a_matching_that_a_greedy_pass_would_miss() -> None:
    truth = [{"cube": {"x": [3, 4]}}, {"cube": {"x": [3]}}]
    # greedy: the first expected takes x=3, then x=4 is left for the second, which wants 3
    assert score_case("parallel", [CUBE], [call("cube", x=3), call("cube", x=4)], truth).correct


@pytest.mark.parametrize("calls, correct", [([], True), ([call("square", x=1)], False)])
def test_irrelevance_is_right_only_without_a_call(calls: list[dict[str, Any]], correct: bool) -> None:
    verdict = score_case("irrelevance", [SQUARE], calls, None)
    assert verdict.correct is correct
    assert verdict.kind == ("ok" if correct else "call_when_none")
