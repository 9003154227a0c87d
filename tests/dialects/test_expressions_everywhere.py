"""An arithmetic expression in a call's arguments (issue 23), in every dialect that reads JSON.

The decision: never evaluated, and a call never carries one. Whole-call mode keeps the block as text
with a ``rejected`` diagnostic naming the parameter; a dialect whose arguments are decoded when the item
closes (Kimi, DeepSeek, harmony, generic, Cohere, Apertus) does the same with ``stream_arguments``, so
streaming equals whole-text there. Where arguments stream as they are written (a JSON call object), the
call may have begun before the operator shows: the member is left out instead, and the arguments stay
valid JSON.
"""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

import streamparse as sp
from budget import examples
from helpers import assert_chunking_invariant, feed_chunks, summary
from samples import RENDER, RENDER_SEVERAL
from streamparse.dialects.decoders import _python_string

WAVE: dict[str, Any] = {"type": "function", "function": {"name": "plot_wave", "parameters": {
    "type": "object", "properties": {"start": {"type": "number"}, "end": {"type": "number"},
                                     "label": {"type": "string"}, "opts": {"type": "object"},
                                     "points": {"type": "array"}},
    "required": ["end"]}}}

DECODED_WHOLE = ["kimi_k2", "harmony_channel", "harmony_role", "deepseek_v3", "deepseek_v31", "generic", "cohere",
                 "apertus"]
JSON_DIALECTS = ["hermes", *DECODED_WHOLE]


def _with_expression(dialect: str, expression: str = "2 * math.pi") -> str:
    text = RENDER[dialect]("plot_wave", {"start": 0, "end": 1})
    assert text.count('"end": 1') == 1
    return text.replace('"end": 1', f'"end": {expression}')


def _diagnostics(text: str, stream: bool) -> list[sp.Diagnostic]:
    return sp.ParseResult(feed_chunks(text, 5, [WAVE], stream_arguments=stream)).diagnostics


@pytest.mark.parametrize("dialect", JSON_DIALECTS)
def test_whole_call_mode_keeps_the_block_as_text_and_names_the_parameter(dialect: str) -> None:
    text = _with_expression(dialect)
    assert assert_chunking_invariant(text, [WAVE]) == (text, [])
    diags = _diagnostics(text, False)
    rejected = [d for d in diags if d.code == "rejected"]
    assert len(rejected) == 1
    assert "'end'" in rejected[0].message and "2 * math.pi" in rejected[0].message
    assert "not evaluated" in rejected[0].message
    assert not [d for d in diags if d.code == "missing_required"]  # no call was made of it, not even {}


@pytest.mark.parametrize("dialect", DECODED_WHOLE)
def test_streaming_equals_whole_text_where_arguments_are_decoded_whole(dialect: str) -> None:
    text = _with_expression(dialect, "1.267e9 / 9.597e6")
    assert assert_chunking_invariant(text, [WAVE], stream_arguments=True) == (text, [])
    assert [d.code for d in _diagnostics(text, True)] == [d.code for d in _diagnostics(text, False)] == ["rejected"]


def test_streamed_call_object_leaves_the_member_out_instead() -> None:
    text = _with_expression("hermes")
    assert assert_chunking_invariant(text, [WAVE], stream_arguments=True) == ("", [("plot_wave", {"start": 0})])
    assert [(d.code, d.details.get("parameter")) for d in _diagnostics(text, True) if d.code != "missing_required"] \
        == [("rejected", "end")]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_arguments_written_as_a_json_string_holding_an_expression(stream: bool) -> None:
    """Before: the string did not parse, so it became text arguments: ``{}`` and a missing ``end``."""
    text = '<tool_call>{"name": "plot_wave", "arguments": "{\\"end\\": 2 * math.pi}"}</tool_call>'
    assert assert_chunking_invariant(text, [WAVE], stream_arguments=stream) == (text, [])
    assert [d.code for d in _diagnostics(text, stream)] == ["rejected"]


@pytest.mark.parametrize("dialect", ["generic", "cohere"])
def test_an_expression_beside_the_arguments_costs_nothing(dialect: str) -> None:
    """A made-up key next to the arguments is not read, whatever it holds (as for a plain call object)."""
    call = {"name": "plot_wave", "arguments": {"end": 6.28}, "response": "@"}
    if dialect == "generic":
        text = json.dumps({"tool_call": call})
    else:
        text = "<|START_ACTION|>" + json.dumps([{"tool_call_id": "0", "tool_name": "plot_wave",
                                                 "parameters": {"end": 6.28}, "response": "@"}]) + "<|END_ACTION|>"
    text = text.replace('"@"', "2 * Math.PI")
    for stream in (False, True):
        assert assert_chunking_invariant(text, [WAVE], stream_arguments=stream) == ("", [("plot_wave", {"end": 6.28})])
        assert not [d for d in _diagnostics(text, stream) if d.code == "rejected"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_one_kimi_call_with_an_expression_does_not_cost_its_sibling(stream: bool) -> None:
    text = RENDER_SEVERAL["kimi_k2"]([("plot_wave", {"end": 3}), ("plot_wave", {"end": 4})])
    text = text.replace('"end": 4', '"end": 4 * math.pi')
    content, calls = assert_chunking_invariant(text, [WAVE], stream_arguments=stream)
    assert calls == [("plot_wave", {"end": 3})]
    assert "4 * math.pi" in content and "<|tool_call_argument_begin|>" in content


@pytest.mark.parametrize("dialect", ["hermes", "kimi_k2", "apertus"])
def test_the_nested_parameter_is_named_by_its_path(dialect: str) -> None:
    text = RENDER[dialect]("plot_wave", {"end": 1, "opts": {"scale": 1}}).replace('"scale": 1', '"scale": 2 ** 10')
    rejected = [d for d in _diagnostics(text, False) if d.code == "rejected"]
    assert len(rejected) == 1 and "'opts.scale'" in rejected[0].message


@pytest.mark.parametrize("dialect", JSON_DIALECTS)
def test_text_that_only_looks_like_arithmetic_is_a_plain_value(dialect: str) -> None:
    args = {"end": 6.28, "label": "2 * pi - 1", "start": -1e-3}
    text = RENDER[dialect]("plot_wave", args)
    for stream in (False, True):
        assert assert_chunking_invariant(text, [WAVE], stream_arguments=stream) == ("", [("plot_wave", args)])


# --------------------------------------------------------------------------- streamed arguments stay valid JSON

@pytest.mark.parametrize("written, kept, paths", [
    ('{"points": [1, 2 * 3, 4], "end": 1}', {"points": [1, 4], "end": 1}, ["points[]"]),
    ('{"points": [2 * 3, 4], "end": 1}', {"points": [4], "end": 1}, ["points[]"]),
    ('{"points": [1, 2 * 3], "end": 1}', {"points": [1], "end": 1}, ["points[]"]),
    ('{"opts": {"a": 1, "b": 1 - 2}, "end": 1}', {"opts": {"a": 1}, "end": 1}, ["opts.b"]),
    ('{"end": 2*Math.PI, "start": 0}', {"start": 0}, ["end"]),
    ('{"start": 0, "end": 1-2}', {"start": 0}, ["end"]),
    ('{"end": 10/2}', {}, ["end"]),
    ('{"end": math.pi}', {}, ["end"]),
    ('{"end": Math.PI*2, "points": [3, 6/2]}', {"points": [3]}, ["end", "points[]"]),
], ids=["array-middle", "array-first", "array-last", "nested", "no-spaces", "no-spaces-minus", "slash",
        "dotted-name", "several"])
def test_streamed_expression_is_left_out_and_the_rest_is_valid_json(written: str, kept: Any, paths: list[str]) -> None:
    """Before: an array element left a dangling comma (``[1, , 4]``) and ``2*Math.PI`` left as a string."""
    text = '<tool_call>{"name": "plot_wave", "arguments": %s}</tool_call>' % written
    assert assert_chunking_invariant(text, [WAVE], stream_arguments=True) == ("", [("plot_wave", kept)])
    diags = _diagnostics(text, True)
    assert [d.details["parameter"] for d in diags if d.code == "rejected"] == paths
    assert assert_chunking_invariant(text, [WAVE]) == (text, [])  # whole-call mode: text, as above


def test_streamed_expression_beside_the_arguments_is_not_reported() -> None:
    text = ('<tool_call>{"name": "plot_wave", "arguments": {"end": 1}, "response": {"area": 2 * 3}}</tool_call>')
    for stream in (False, True):
        assert assert_chunking_invariant(text, [WAVE], stream_arguments=stream) == ("", [("plot_wave", {"end": 1})])
        assert not [d for d in _diagnostics(text, stream) if d.code == "rejected"]


_OPERAND = st.sampled_from(["2", "1.5e3", "math.pi", "Math.PI", "(1 + 2)", "x"])
_EXPRESSION = st.builds(lambda a, op, b, sp1, sp2: f"{a}{sp1}{op}{sp2}{b}", _OPERAND, st.sampled_from("*/+-%"),
                        _OPERAND, st.sampled_from(["", " "]), st.sampled_from(["", " "]))
_VALUE = st.one_of(st.integers(-9, 9).map(str), st.just('"s"'), st.just("true"), _EXPRESSION)


@settings(max_examples=80, deadline=None)
@given(members=st.lists(_VALUE, min_size=1, max_size=4), elements=st.lists(_VALUE, max_size=4),
       cuts=st.lists(st.integers(1, 150), max_size=5))
def test_any_expressions_anywhere_streamed_arguments_are_json_without_them(members: list[str], elements: list[str],
                                                                          cuts: list[int]) -> None:
    arguments = ", ".join([f'"k{i}": {v}' for i, v in enumerate(members)] + [f'"points": [{", ".join(elements)}]'])
    text = '<tool_call>{"name": "plot_wave", "arguments": {%s}}</tool_call>' % arguments
    want_members = {f"k{i}": json.loads(v) for i, v in enumerate(members) if v in ("true", '"s"') or v.lstrip("-").isdigit()}
    want_points = [json.loads(v) for v in elements if v in ("true", '"s"') or v.lstrip("-").isdigit()]
    result = sp.ParseResult(feed_chunks(text, cuts, [WAVE], stream_arguments=True))
    assert result.content == ""
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == [
        ("plot_wave", {**want_members, "points": want_points})]
    left_out = len(members) + len(elements) - len(want_members) - len(want_points)
    assert len([d for d in result.diagnostics if d.code == "rejected"]) == left_out
    whole = summary(feed_chunks(text, len(text), [WAVE]))
    assert whole == ((text, []) if left_out else ("", [("plot_wave", {**want_members, "points": want_points})]))


# --------------------------------------------------------------------------- values declared JSON in tag formats

@pytest.mark.parametrize("dialect", ["deepseek_v32", "kimi_k3"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_value_declared_json_holding_arithmetic_keeps_the_block_as_text(dialect: str, stream: bool) -> None:
    """DSML ``string="false"`` and XTML's typed arguments are JSON: arithmetic there went through as the string
    "2 * math.pi" into a number parameter, unreported. A value declared a string keeps any text."""
    text = RENDER[dialect]("plot_wave", {"start": 0, "end": 1, "label": "2 * 3"})
    for written, path in (("2 * math.pi", "'end'"), ("[1, 2*3]", "'end[1]'")):
        block = text.replace(">1<", f">{written}<")
        assert block != text
        assert assert_chunking_invariant(block, [WAVE], stream_arguments=stream) == (block, [])
        rejected = [d for d in _diagnostics(block, stream) if d.code == "rejected"]
        assert len(rejected) == 1 and path in rejected[0].message
    assert assert_chunking_invariant(text, [WAVE], stream_arguments=stream) == (
        "", [("plot_wave", {"start": 0, "end": 1, "label": "2 * 3"})])
    unparsed = text.replace(">1<", ">Paris<")  # not JSON and not arithmetic: kept as written, as before
    assert assert_chunking_invariant(unparsed, [WAVE], stream_arguments=stream)[1] == [
        ("plot_wave", {"start": 0, "end": "Paris", "label": "2 * 3"})]


_SOUP = st.lists(st.sampled_from(["f", "(", ")", "[", "]", "{", "}", ",", ":", "=", "x", "2", "-", "*", "**", "/",
                                  "%", "+", "math.pi", "'s'", "True", "null", " ", "1e3", "(1, 2)"]),
                 min_size=1, max_size=12).map("".join)


@settings(max_examples=150, deadline=None)
@given(body=_SOUP, form=st.sampled_from(["pythonic", "olmo3", "dsml", "hermes"]), stream=st.booleans(),
       cuts=st.lists(st.integers(1, 120), max_size=4))
def test_names_and_operators_anywhere_in_a_value_never_raise(body: str, form: str, stream: bool,
                                                           cuts: list[int]) -> None:
    """Names and arithmetic are values of their own now (opaque expressions): wherever they land (a dict key,
    a nested list), the core refuses them or keeps them as written, and raises nothing."""
    text = {"pythonic": f"[plot_wave(opts={body})]",
            "olmo3": f"<function_calls>\nplot_wave(opts={body})\n</function_calls>",
            "dsml": RENDER["deepseek_v32"]("plot_wave", {"end": 1}).replace(">1<", f">{body}<"),
            "hermes": '<tool_call>{"name": "plot_wave", "arguments": {"opts": %s}}</tool_call>' % body}[form]
    result = sp.ParseResult(feed_chunks(text, cuts, [WAVE], stream_arguments=stream))
    for call in result.tool_calls:
        assert isinstance(json.loads(call.arguments), dict)
    if not result.tool_calls:
        assert result.content == text


# --------------------------------------------------------------------------- Python string literals

@settings(max_examples=examples(500), deadline=None)
@given(inner=st.text(st.characters(blacklist_categories=("Cs",)), max_size=12), quote=st.sampled_from(["'", '"']))
def test_a_python_string_literal_reads_as_python_reads_it(inner: str, quote: str) -> None:
    """Whatever way a string literal is read (a plain one-quote string by its text), its value is Python's."""
    token = quote + inner + quote
    try:
        expected = ast.literal_eval(token)
    except (ValueError, SyntaxError):
        return  # not a literal Python reads (the decoder's own reading of it is tested elsewhere)
    if "\\" not in inner:
        assert _python_string(token) == expected
