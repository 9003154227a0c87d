"""What small real models write (issue 23), quoted from a 0.5B model's BFCL answers, read the lenient way.

Each case is a form that lost a call the model meant; the reader must take it, in every chunking, and
never evaluate anything.
"""

from __future__ import annotations

from typing import Any

import pytest

from helpers import assert_chunking_invariant

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
