"""What small real models write (issue 23), quoted from a 0.5B model's BFCL answers, read the lenient way.

Each case is a form that lost a call the model meant; the reader must take it, in every chunking, and
never evaluate anything.
"""

from __future__ import annotations

import json

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

import streamparse as sp
from helpers import assert_chunking_invariant, feed_chunks

FOREST: dict[str, Any] = {"type": "function", "function": {"name": "forest_growth_forecast", "parameters": {
    "type": "object", "properties": {"location": {"type": "string"}, "years": {"type": "integer"},
                                     "include_human_impact": {"type": "boolean"}}}}}
PLOT: dict[str, Any] = {"type": "function", "function": {"name": "plot_sine_wave", "parameters": {
    "type": "object", "properties": {"start_range": {"type": "number"}, "end_range": {"type": "number"},
                                     "label": {"type": "string"}, "extra": {"type": "object"}}}}}


def test_pythonic_with_json_literals() -> None:
    text = ("[forest_growth_forecast(location='Yellowstone National Park', years=5, "
            "include_human_impact=true)]")
    assert assert_chunking_invariant(text, [FOREST]) == ("", [("forest_growth_forecast", {
        "location": "Yellowstone National Park", "years": 5, "include_human_impact": True})])


def test_pythonic_json_and_python_literals_mixed_and_nested() -> None:
    text = "[plot_sine_wave(start_range=0, end_range=1.5, label=null, extra={'a': [true, False, None, null]})]"
    _, calls = assert_chunking_invariant(text, [PLOT])
    assert calls == [("plot_sine_wave", {"start_range": 0, "end_range": 1.5, "label": None,
                                         "extra": {"a": [True, False, None, None]}})]


@pytest.mark.parametrize("value", ["2 * math.pi", "math.pi", "true_value", "-x", "f(1)", "1 + 2"])
def test_an_expression_is_never_evaluated_the_block_stays_text(value: str) -> None:
    text = f"[plot_sine_wave(start_range=0, end_range={value})]"
    content, calls = assert_chunking_invariant(text, [PLOT])
    assert calls == [] and content == text


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("value, named", [("2 * math.pi", True), ("math.pi", True), ("2*math.pi", True),
                                          ("[0, 2 ** 10]", True), ("-x", False), ("f(1)", False)])
def test_the_refused_expression_is_reported_naming_its_parameter(value: str, named: bool, stream: bool) -> None:
    """Quoted: ``end_range=2 * math.pi``. A name or arithmetic is read as one opaque expression (as relaxed
    JSON reads it), so the diagnostic says which parameter; a form that does not parse is refused all the same."""
    text = f"[plot_sine_wave(start_range=0, end_range={value})]"
    diags = sp.ParseResult(feed_chunks(text, 5, [PLOT], stream_arguments=stream)).diagnostics
    assert [d.code for d in diags] == ["rejected"]
    assert ("'end_range" in diags[0].message and "not evaluated" in diags[0].message) == named


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("value", ["{2 * 3: 1}", "{x: 1}", "{math.pi: [1]}"])
def test_a_name_or_arithmetic_as_a_dict_key_is_refused_not_raised(value: str, stream: bool) -> None:
    text = f"[plot_sine_wave(extra={value})]"
    assert assert_chunking_invariant(text, [PLOT], stream_arguments=stream) == (text, [])
    assert [d.code for d in sp.ParseResult(feed_chunks(text, 5, [PLOT], stream_arguments=stream)).diagnostics] == [
        "rejected"]


@pytest.mark.parametrize("text", [
    "<function_calls>\nplot_sine_wave(start_range=0, end_range=2 * math.pi)\n</function_calls>",
    "<|tool_call_start|>[plot_sine_wave(end_range=2 * math.pi)]<|tool_call_end|>",
], ids=["olmo3", "lfm2"])
def test_pythonic_relatives_refuse_an_expression_the_same_way(text: str) -> None:
    assert assert_chunking_invariant(text, [PLOT]) == (text, [])
    diags = sp.ParseResult(feed_chunks(text, 5, [PLOT])).diagnostics
    assert [d.code for d in diags] == ["rejected"] and "'end_range'" in diags[0].message


# --------------------------------------------------------------------------- comments in JSON (issue 23)



LC: dict[str, Any] = {"type": "function", "function": {"name": "resonant_frequency", "parameters": {
    "type": "object", "properties": {"inductance": {"type": "number"}, "capacitance": {"type": "number"},
                                     "note": {"type": "string"}}}}}
_COMMENTED = ('{"name": "resonant_frequency", "arguments": {\n  "inductance": 50e-6, // in H\n'
              '  "capacitance": 100e-6 // in F\n}}')
_FORMS = [f"```json\n{_COMMENTED}\n```\nDone.", f"<tool_call>\n{_COMMENTED}\n</tool_call>"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("text", _FORMS, ids=["fenced", "tagged"])
def test_line_comments_are_dropped_and_the_call_kept(text: str, stream: bool) -> None:
    content, calls = assert_chunking_invariant(text, [LC], stream_arguments=stream)
    assert calls == [("resonant_frequency", {"inductance": 50e-6, "capacitance": 100e-6})]
    assert "//" not in content and "inductance" not in content


@pytest.mark.parametrize("text", _FORMS, ids=["fenced", "tagged"])
def test_the_repair_names_the_comments_it_removed(text: str) -> None:
    diags = [d for d in sp.ParseResult(feed_chunks(text, 5, [LC])).diagnostics if d.code == "repaired"]
    assert [d.details.get("removed") for d in diags] == [["// in H", "// in F"]]


def test_streamed_arguments_report_the_comments_too() -> None:
    diags = sp.ParseResult(feed_chunks(_FORMS[1], 5, [LC], stream_arguments=True)).diagnostics
    assert [d.details.get("removed") for d in diags if d.code == "repaired"] == [["// in H", "// in F"]]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_block_comments_and_comment_marks_inside_strings(stream: bool) -> None:
    text = ('<tool_call>{"name": "resonant_frequency", "arguments": {/* values in SI */ "inductance": 1e-3,'
            ' "note": "see http://x.org/a /* not a comment */", "capacitance": /* uF? no, F */ 2e-6}}</tool_call>')
    content, calls = assert_chunking_invariant(text, [LC], stream_arguments=stream)
    assert content == ""
    assert calls == [("resonant_frequency", {"inductance": 1e-3, "note": "see http://x.org/a /* not a comment */",
                                             "capacitance": 2e-6})]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_strict_json_with_slashes_in_strings_is_untouched(stream: bool) -> None:
    text = '<tool_call>{"name": "resonant_frequency", "arguments": {"note": "a // b"}}</tool_call>'
    events = feed_chunks(text, 3, [LC], stream_arguments=stream)
    result = sp.ParseResult(events)
    assert [json.loads(c.arguments) for c in result.tool_calls] == [{"note": "a // b"}]
    assert not [d for d in result.diagnostics if d.code == "repaired"]


_NOTE = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\n\r*/'\"\\`<{}[]"),
                max_size=12)  # the block scanner counts brackets and quotes in comments too (core/bodies.py)


@settings(max_examples=60, deadline=None)
@given(before=_NOTE, after=_NOTE, cuts=st.lists(st.integers(1, 200), max_size=6))
def test_any_comment_any_chunking_same_call_both_modes(before: str, after: str, cuts: list[int]) -> None:
    text = (f'<tool_call>{{"name": "resonant_frequency", "arguments": {{ // {before}\n"inductance": 2 /*{after}*/,'
            f' "capacitance": 3 // {after}\n}}}}</tool_call> tail')
    want = [("resonant_frequency", {"inductance": 2, "capacitance": 3})]
    for stream in (False, True):
        result = sp.ParseResult(feed_chunks(text, cuts, [LC], stream_arguments=stream))
        assert result.content == " tail"
        assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == want


# --------------------------------------------------------------------------- a Python list judged element by element

CIRCLE: dict[str, Any] = {"type": "function", "function": {"name": "draw_circle", "parameters": {
    "type": "object", "properties": {"radius": {"type": "integer"}, "unit": {"type": "string"}}}}}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_declared_call_leaves_invented_one_stays_text_in_place(stream: bool) -> None:
    text = "[draw_circle(radius=5, unit='m'), area(width=5, length=7)]\nThat is all."
    content, calls = assert_chunking_invariant(text, [CIRCLE], stream_arguments=stream)
    assert calls == [("draw_circle", {"radius": 5, "unit": "m"})]
    assert content == "area(width=5, length=7)\nThat is all."
    unknown = [d for d in sp.ParseResult(feed_chunks(text, 4, [CIRCLE], stream_arguments=stream)).diagnostics
               if d.code == "unknown_tool"]
    assert [d.details["names"] for d in unknown] == [["area"]] and "area" in unknown[0].message


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_elements_keep_their_order_text_between_calls(stream: bool) -> None:
    text = ("<|python_start|>[area(width=5), draw_circle(radius=1), perimeter(side=2), "
            "draw_circle(radius=2, unit=\"cm, really\")]<|python_end|> end")
    events = feed_chunks(text, 3, [CIRCLE], stream_arguments=stream)
    shape = [(e.type, e.text if isinstance(e, sp.TextDelta) else getattr(e, "name", "")) for e in events
             if isinstance(e, (sp.TextDelta, sp.ToolCall))]
    assert [s for s in shape if s[0] == "tool_call"] == [("tool_call", "draw_circle")] * 2
    assert sp.ParseResult(events).content == "area(width=5)perimeter(side=2) end"
    order = [e.name if isinstance(e, sp.ToolCall) else e.text for e in events
             if isinstance(e, sp.ToolCall) or (isinstance(e, sp.TextDelta) and e.text.strip())]
    joined = "|".join(order)
    assert joined.index("area") < joined.index("draw_circle") < joined.index("perimeter")
    assert_chunking_invariant(text, [CIRCLE], stream_arguments=stream)


def test_an_unreadable_element_stays_text_beside_a_good_call() -> None:
    text = "[draw_circle(radius=5), draw_circle(radius=2 * math.pi)]"
    content, calls = assert_chunking_invariant(text, [CIRCLE])
    assert calls == [("draw_circle", {"radius": 5})] and content == "draw_circle(radius=2 * math.pi)"


def test_a_list_with_no_declared_call_stays_whole_text() -> None:
    text = "<|python_start|>[area(width=5), perimeter(side=2)]<|python_end|>"
    assert assert_chunking_invariant(text, [CIRCLE]) == (text, [])


# --------------------------------------------------------------------------- enum and coercion, reported

CMP: dict[str, Any] = {"type": "function", "function": {"name": "compare", "parameters": {
    "type": "object", "properties": {"operator": {"type": "string", "enum": [">", "<", ">=", "<="]},
                                     "unit": {"type": "string", "enum": ["Celsius", "Kelvin"]},
                                     "age": {"type": "string"}}}}}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("text", [
    '<tool_call>{"name": "compare", "arguments": {"operator": "==", "unit": "celsius", "age": 25}}</tool_call>',
    "[compare(operator='==', unit='celsius', age=25)]",
    "<tool_call>\n<function=compare>\n<parameter=operator>\n==\n</parameter>\n<parameter=unit>\ncelsius\n</parameter>\n"
    "<parameter=age>\n25\n</parameter>\n</function>\n</tool_call>",
], ids=["json", "pythonic", "qwen3_xml"])
def test_enum_outside_kept_with_diagnostic_case_repaired(text: str, stream: bool) -> None:
    content, calls = assert_chunking_invariant(text, [CMP], stream_arguments=stream)
    assert content == "" and calls == [("compare", {"operator": "==", "unit": "Celsius", "age": "25"})]
    diags = sp.ParseResult(feed_chunks(text, 6, [CMP], stream_arguments=stream)).diagnostics
    assert [(d.details["parameter"], d.details["value"]) for d in diags if d.code == "enum_mismatch"] == [
        ("operator", '"=="')]


@pytest.mark.parametrize("text", [
    '<tool_call>{"name": "compare", "arguments": {"operator": ">", "unit": "celsius", "age": 25}}</tool_call>',
    "[compare(operator='>', unit='celsius', age=25)]",
], ids=["json", "pythonic"])
def test_case_repair_and_type_coercion_are_reported_by_parameter(text: str) -> None:
    diags = sp.ParseResult(feed_chunks(text, 6, [CMP])).diagnostics
    assert sorted((d.details["parameter"], d.details["written"], d.details["value"]) for d in diags
                  if d.code == "coerced") == [("age", "25", '"25"'), ("unit", '"celsius"', '"Celsius"')]
    assert not [d for d in diags if d.code == "enum_mismatch"]


def test_streamed_arguments_report_coercions_too() -> None:
    text = '<tool_call>{"name": "compare", "arguments": {"operator": ">", "unit": "celsius", "age": 25}}</tool_call>'
    diags = sp.ParseResult(feed_chunks(text, 6, [CMP], stream_arguments=True)).diagnostics
    assert sorted((d.details["parameter"], d.details["written"], d.details["value"]) for d in diags
                  if d.code == "coerced") == [("age", "25", '"25"'), ("unit", '"celsius"', '"Celsius"')]


def test_several_pythonic_lists_on_one_line_are_each_read() -> None:
    """Quoted from a 0.5B model's BFCL parallel answer: one list per call, separated by a space."""
    tool: dict[str, Any] = {"type": "function", "function": {"name": "ecology_data_precipitation_stats", "parameters": {
        "type": "object", "properties": {"location": {"type": "string"}, "time_frame": {"type": "string"}}}}}
    frames = ["six_months", "year", "five_years"]
    text = " ".join(f"[ecology_data_precipitation_stats(location='Amazon rainforest', time_frame='{f}')]" for f in frames)
    content, calls = assert_chunking_invariant(text, [tool])
    assert content.strip() == "" and [c[1]["time_frame"] for c in calls] == frames
    # Prose after a call still ends the line: a list there is prose, as auto-detection reads it elsewhere.
    content, calls = assert_chunking_invariant(text.replace("] [", "] and then [", 1), [tool])
    assert len(calls) == 1 and "and then [ecology" in content


# --------------------------------------------------------------------------- expressions in JSON (issue 23)

DENSITY: dict[str, Any] = {"type": "function", "function": {"name": "calculate_density", "parameters": {
    "type": "object", "properties": {"country": {"type": "string"}, "year": {"type": "string"},
                                     "population": {"type": "number"}, "land_area": {"type": "number"}}}}}
_WITH_RESULT = ('```json\n{\n  "name": "calculate_density",\n  "arguments": {\n    "country": "China",\n'
                '    "year": "2000",\n    "population": 1.267e9,\n    "land_area": 9.597e6\n  },\n'
                '  "response": {\n    "population_density_2000": 1.267e9 / 9.597e6,\n'
                '    "population_density_2010": 1.341e9 / 9.597e6\n  }\n}\n```')


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_an_expression_beside_the_arguments_does_not_cost_the_call(stream: bool) -> None:
    """Quoted from the model: the arguments are plain values; the arithmetic sits in a made-up
    "response" key, which is not read. The call leaves; nothing is evaluated."""
    content, calls = assert_chunking_invariant(_WITH_RESULT, [DENSITY], stream_arguments=stream)
    assert calls == [("calculate_density", {"country": "China", "year": "2000", "population": 1.267e9,
                                            "land_area": 9.597e6})]
    assert content == ""


@pytest.mark.parametrize("value", ["1.267e9 / 9.597e6", "2 * Math.PI", "(1 + 2) * 3", "2 ** 10", "10 - 3", "1-2"])
def test_an_expression_in_the_json_arguments_keeps_the_block_as_text(value: str) -> None:
    text = '{"name": "calculate_density", "arguments": {"country": "China", "population": %s}}' % value
    content, calls = assert_chunking_invariant(text, [DENSITY])
    assert calls == [] and content == text
    diags = sp.ParseResult(feed_chunks(text, 7, [DENSITY])).diagnostics
    assert any(d.code == "rejected" and "expression" in d.message and "not evaluated" in d.message for d in diags)


@pytest.mark.parametrize("value", ["1.267e9 / 9.597e6", "2 * Math.PI", "(1 + 2) * 3", "2 ** 10", "10 - 3", "1 -2"])
def test_streamed_arguments_leave_an_expression_out_and_invent_nothing(value: str) -> None:
    """With stream_arguments the call may have begun before the operator shows, so it cannot become text
    again: the member whose value is an expression is left out (never evaluated, never a key made of an
    operator), and a diagnostic names it."""
    for order in ('{"country": "China", "population": %s}', '{"population": %s, "country": "China"}'):
        text = '{"name": "calculate_density", "arguments": %s}' % (order % value)
        content, calls = assert_chunking_invariant(text, [DENSITY], stream_arguments=True)
        assert calls == [("calculate_density", {"country": "China"})] and content == ""
        diags = sp.ParseResult(feed_chunks(text, 3, [DENSITY], stream_arguments=True)).diagnostics
        assert [d.details.get("parameter") for d in diags if d.code == "rejected"] == ["population"]


# --------------------------------------------------------------------------- comments the body scanner skips

AB: dict[str, Any] = {"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("text", [
    '<tool_call>\n{"name": "f", "arguments": {"a": 1, // don\'t change\n "b": 2}}\n</tool_call>',
    '```json\n{"name": "f", "arguments": {"a": 1, /* it\'s } ] " */ "b": 2}}\n```',
    '[{"name": "f", "arguments": {"a": 1, // keep } and ] and \'\n "b": 2}}]',
], ids=["tagged-line", "fenced-block", "bare-array-line"])
def test_quotes_and_brackets_inside_a_comment_do_not_end_the_block(text: str, stream: bool) -> None:
    """A comment's apostrophe or bracket is not JSON: the body scanner skips comments as the repair does."""
    dialects = ["xlam"] if text.startswith("[") else None
    content, calls = assert_chunking_invariant(text, [AB], stream_arguments=stream, dialects=dialects)
    assert calls == [("f", {"a": 1, "b": 2})] and content == ""


# --------------------------------------------------------------------------- dotted tool names (BFCL's module.function)

FETCH: dict[str, Any] = {"type": "function", "function": {"name": "employee.fetch_data", "parameters": {
    "type": "object", "properties": {"id": {"type": "integer"}}}}}
FETCH_OFFERED = {"type": "function", "function": {**FETCH["function"], "name": "employee_fetch_data"}}  # BFCL's "_"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("text, content", [
    ("[employee.fetch_data(id=3)]", ""),
    ("Fetching it.\n[employee.fetch_data(id=3)]\nDone.", "Fetching it.\n\nDone."),
    ("<|python_start|>[employee.fetch_data(id=3)]<|python_end|>", ""),
    ('<tool_call>{"name": "employee.fetch_data", "arguments": {"id": 3}}</tool_call>', ""),
], ids=["bare", "after-prose", "python-tags", "hermes"])
def test_a_declared_dotted_name_is_a_call(text: str, content: str, stream: bool) -> None:
    """BFCL reads ``a.b(...)`` as the function ``a.b``; a tool declared with that name is called by it (vLLM's
    pythonic parser, which takes only a plain name, would keep the whole answer as text)."""
    assert assert_chunking_invariant(text, [FETCH, CIRCLE], stream_arguments=stream) == (
        content, [("employee.fetch_data", {"id": 3})])


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_dotted_name_judged_in_a_list_like_any_name(stream: bool) -> None:
    text = "[draw_circle(radius=1), employee.fetch_data(id=3), staff.fetch_data(id=4)]"
    content, calls = assert_chunking_invariant(text, [FETCH, CIRCLE], stream_arguments=stream)
    assert calls == [("draw_circle", {"radius": 1}), ("employee.fetch_data", {"id": 3})]
    assert content == "staff.fetch_data(id=4)"
    unknown = [d for d in sp.ParseResult(feed_chunks(text, 4, [FETCH, CIRCLE], stream_arguments=stream)).diagnostics
               if d.code == "unknown_tool"]
    assert [d.details["names"] for d in unknown] == [["staff.fetch_data"]]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_an_undeclared_dotted_name_is_never_renamed_to_an_offered_one(stream: bool) -> None:
    """BFCL offers ``employee.fetch_data`` as ``employee_fetch_data``; a model that writes the dotted name
    named no offered tool: the block stays text (no call under a name the model did not write), reported."""
    text = "<|python_start|>[employee.fetch_data(id=3)]<|python_end|>"
    assert assert_chunking_invariant(text, [FETCH_OFFERED], stream_arguments=stream) == (text, [])
    diags = sp.ParseResult(feed_chunks(text, 4, [FETCH_OFFERED], stream_arguments=stream)).diagnostics
    assert [(d.code, d.details.get("names")) for d in diags] == [("unknown_tool", ["employee.fetch_data"])]


@pytest.mark.parametrize("text", ["[employee.fetch_data(id=3)]", "[employee.fetch_data(id=3), draw_circle(radius=1)]"],
                         ids=["alone", "before-a-declared-call"])
def test_an_undeclared_bare_dotted_name_is_reported(text: str) -> None:
    events = feed_chunks(text, 4, [FETCH_OFFERED, CIRCLE])
    assert [d.details.get("names") for d in sp.ParseResult(events).diagnostics if d.code == "unknown_tool"] == [
        ["employee.fetch_data"]]


def test_the_declared_call_leaves_when_the_invented_one_comes_first() -> None:
    text = "[area(width=5, length=7), draw_circle(radius=5, unit='m')]"
    content, calls = assert_chunking_invariant(text, [CIRCLE])
    assert calls == [("draw_circle", {"radius": 5, "unit": "m"})] and content == "area(width=5, length=7)"


@pytest.mark.parametrize(("written", "value"), [("(2)", 2), ("((3))", 3), ("(2,)", [2]), ("()", []), ("(1, 2)", [1, 2]),
                                                 ("[1, (2)]", [1, 2])])
def test_python_parentheses_around_one_value_are_that_value_and_tuples_are_lists(written: str, value: Any) -> None:
    """As Python reads them: ``(2)`` is 2, ``(2,)`` a one-element tuple (a JSON list)."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    for text in (f"[f(a={written})]", f"<function_calls>\nf(a={written})\n</function_calls>"):
        result = sp.parse(text, tools)
        assert [json.loads(c.arguments) for c in result.tool_calls] == [{"a": value}], text
