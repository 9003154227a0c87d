"""The BFCL report's analysis: what-if repairs on raw model text, and reading what llama.cpp sent."""

from __future__ import annotations

import json
from typing import Any, Collection

from streamparse.harness.bfcl import upstream_answer
from streamparse.harness.bfcl_report import REPAIRS, analyse, report

FOREST = {"name": "forest_growth_forecast", "description": "Forecast forest growth.", "parameters": {
    "type": "dict", "properties": {"location": {"type": "string"}, "years": {"type": "integer"},
                                   "include_human_impact": {"type": "boolean"}}, "required": ["location", "years"]}}
CASE: dict[str, Any] = {"id": "simple_python_1", "question": [[{"role": "user", "content": "Forest in Yellowstone in 5 years?"}]],
        "function": [FOREST], "ground_truth": [{"forest_growth_forecast": {
            "location": ["Yellowstone National Park"], "years": [5], "include_human_impact": [True]}}]}
LITERAL = "[forest_growth_forecast(location='Yellowstone National Park', years=5, include_human_impact=true)]"


def repair(name: str, text: str, names: Collection[str] = ()) -> str:
    return REPAIRS[name](text, set(names))


def test_json_literals_become_python_in_a_pythonic_call_only() -> None:
    assert repair("json_literals_in_pythonic", LITERAL).endswith("include_human_impact=True)]")
    prose = "It is true that null values exist."
    assert repair("json_literals_in_pythonic", prose) == prose


def test_line_and_block_comments_go_but_not_a_url() -> None:
    text = '{"inductance": 50e-6, // in H\n "capacitance": 100e-6 /* F */, "url": "http://x.org"}'
    assert repair("comments_in_json", text) == '{"inductance": 50e-6,\n "capacitance": 100e-6 , "url": "http://x.org"}'


def test_undeclared_calls_leave_a_pythonic_list() -> None:
    text = "[draw_circle(radius=5, unit='m'), area(width=5, length=7)]"
    assert repair("undeclared_call_in_list", text, {"draw_circle"}) == "[draw_circle(radius=5, unit='m')]"
    assert repair("undeclared_call_in_list", "[a(x=[1, 2])]", {"a"}) == "[a(x=[1, 2])]"


def test_arithmetic_values_are_computed_for_the_what_if_only() -> None:
    assert repair("expression_as_value", "[f(start=0, end_range=2 * math.pi)]") == \
        "[f(start=0, end_range=6.283185307179586)]"
    assert repair("expression_as_value", '{"end_range": 2 * Math.PI}') == '{"end_range": 6.283185307179586}'
    assert repair("expression_as_value", "[f(x=2 * y)]") == "[f(x=2 * y)]"  # a name is not a number
    assert repair("expression_as_value", '{"d": 1.5e9 / 3e6, "n": 4}') == '{"d": 500.0, "n": 4}'
    assert repair("expression_as_value", '{"date": "2024-01-02"}') == '{"date": "2024-01-02"}'  # inside a string


def _record(config: str, raw: str, **extra: Any) -> dict[str, Any]:
    return {"config": config, "category": "simple_python", "id": CASE["id"], "raw": raw, "content": raw,
            "calls": [], "correct": False, "kind": "no_call", "detail": "", "seconds": 1.0, **extra}


def test_a_failure_a_lenient_reader_would_fix_is_marked_parser_lost() -> None:
    analysis = analyse(_record("prompt:pythonic", LITERAL), CASE)
    assert analysis["recoverable_by"] == "json_literals_in_pythonic"
    assert analysis["verdict"] == "parser_lost"


def test_a_wrong_value_faithfully_read_is_the_model_s_fault() -> None:
    raw = '<tool_call>\n{"name": "forest_growth_forecast", "arguments": {"location": "Yosemite", "years": 5}}\n</tool_call>'
    calls = [{"name": "forest_growth_forecast", "arguments": '{"location": "Yosemite", "years": 5}'}]
    analysis = analyse(_record("prompt:hermes", raw, calls=calls, kind="value_not_allowed"), CASE)
    assert analysis["verdict"] == "model_wrong" and analysis["recoverable_by"] is None


def test_the_report_has_the_table_and_groups_failures() -> None:
    good = {**_record("template", ""), "id": "simple_python_2", "correct": True, "kind": "ok"}
    text = report([good, _record("template", LITERAL)], {CASE["id"]: CASE})
    assert "simple_python" in text and "1/2" in text
    assert "parser_lost:json_literals_in_pythonic: 1 (template 1)" in text
    assert report([good, good], {}).count("1/1") == 1  # the same case asked twice counts once


def test_what_llama_cpp_streamed_is_read_back() -> None:
    events = [{"choices": [{"delta": {"content": "Hi "}}]},
              {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "{\"a\""}}]}}]},
              {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}}]},
              {"choices": [{"delta": {}, "finish_reason": "tool_calls"}], "timings": {"predicted_per_second": 9.5}}]
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    entry = {"request": json.dumps({"tools": [{}]}).encode(), "status": 200, "body": [body[:17].encode(), body[17:].encode()]}
    out = upstream_answer(entry)
    assert out["text"] == "Hi " and out["calls"] == [{"name": "f", "arguments": "{\"a\": 1}"}]
    assert out["tools_upstream"] is True and out["timings"] == {"predicted_per_second": 9.5}
    whole = {"request": b"{}", "status": 200, "body": [json.dumps({"choices": [{"message": {"content": "ok"}}]}).encode()]}
    assert upstream_answer(whole)["text"] == "ok"


def test_a_call_written_where_no_dialect_reads_one_is_flagged_not_blamed_on_the_model() -> None:
    raw = "```python\nforest_growth_forecast(location='Yellowstone National Park', years=5)\n```"
    analysis = analyse(_record("prompt:pythonic", raw), CASE)
    assert analysis["call_like_spots"] == 1 and analysis["verdict"] == "unparsed_call_like_text"
    prose = "You could use the `forest_growth_forecast` tool for that."
    assert analyse(_record("prompt:pythonic", prose), CASE)["verdict"] == "model_wrong"


def test_pythonic_lists_on_one_line_are_split_for_the_what_if() -> None:
    assert repair("pythonic_lists_on_one_line", "[f(x='a')] [f(x='b')]") == "[f(x='a')]\n[f(x='b')]"
    assert repair("pythonic_lists_on_one_line", "see [1] [f(x=1)]") == "see [1] [f(x=1)]"


def test_a_dotted_name_maps_to_the_offered_name_only_when_offered() -> None:
    text = '[employee.fetch_data(id=1)] {"name": "employee.fetch_data"} math.pi(2)'
    assert repair("dotted_name_for_offered_underscore_name", text, {"employee_fetch_data"}) == \
        '[employee_fetch_data(id=1)] {"name": "employee_fetch_data"} math.pi(2)'
