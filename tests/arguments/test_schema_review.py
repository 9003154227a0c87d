"""What typing by schema changed or found: coercions and enum checks, reported, never silent."""

from __future__ import annotations

from typing import Any

from streamparse.arguments.schema import coerce_value, enum_spelling, review_arguments, review_values

SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "op": {"type": "string", "enum": [">", "<", "!="]},
    "unit": {"type": "string", "enum": ["Metric", "imperial"]},
    "age": {"type": "string"},
    "level": {"enum": [1, 2, 3]},
    "tags": {"type": "array", "items": {"type": "string", "enum": ["Red", "green"]}},
    "opts": {"type": "object", "properties": {"mode": {"type": "string", "enum": ["fast", "slow"]}}},
}}


def _review(written: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    fixed, notes = review_arguments(written, coerce_value(written, SCHEMA), SCHEMA)
    return fixed, [(code, path) for code, path, _ in notes]


def test_value_outside_the_enum_is_kept_and_named() -> None:
    fixed, notes = _review({"op": "=="})
    assert fixed == {"op": "=="} and notes == [("enum_mismatch", "op")]


def test_case_only_mismatch_takes_the_enum_spelling_and_says_so() -> None:
    fixed, notes = review_arguments({"unit": "METRIC"}, {"unit": "METRIC"}, SCHEMA)
    assert fixed == {"unit": "Metric"}
    assert notes == [("coerced", "unit", {"written": '"METRIC"', "value": '"Metric"', "reason": "enum spelling"})]


def test_a_number_given_to_a_string_parameter_is_reported() -> None:
    fixed, notes = _review({"age": 25})
    assert fixed == {"age": "25"} and notes == [("coerced", "age")]


def test_enum_equality_is_json_equality() -> None:
    assert _review({"level": 2})[1] == []
    assert _review({"level": 2.0})[1] == []
    assert _review({"level": True})[1] == [("enum_mismatch", "level")]


def test_nested_values_are_named_by_their_path() -> None:
    fixed, notes = _review({"tags": ["red", "blue"], "opts": {"mode": "FAST"}})
    assert fixed == {"tags": ["Red", "blue"], "opts": {"mode": "fast"}}
    assert notes == [("coerced", "tags[0]"), ("enum_mismatch", "tags[1]"), ("coerced", "opts.mode")]


def test_ambiguous_case_is_not_guessed() -> None:
    schema = {"type": "string", "enum": ["On", "ON"]}
    assert enum_spelling("on", schema) == "on"
    value, notes = review_values("x", "on", schema, "p")
    assert value == "on" and [n[0] for n in notes] == ["enum_mismatch"]


def test_after_values_were_sent_a_case_mismatch_is_only_reported() -> None:
    fixed, notes = review_arguments({"unit": "metric"}, {"unit": "metric"}, SCHEMA, text_values=True, fix_case=False)
    assert fixed == {"unit": "metric"} and [n[:2] for n in notes] == [("enum_mismatch", "unit")]


def test_xml_text_typed_by_schema_is_not_a_coercion_to_report() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert review_arguments({"n": "7"}, {"n": 7}, schema, text_values=True) == ({"n": 7}, [])
