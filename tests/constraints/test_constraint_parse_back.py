"""The constraint and the parser agree: every text the grammar accepts here parses back to the same calls.

Parsed the way the proxy parses a prompted answer: ``prompt_request(...).parser_options()`` (the
prompted dialect first, then the others), with the client's tools.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from constraint_cases import COVERED, TEXT_VALUE_DIALECTS, TOOLS, VALID
from grammar_engine import accepts

import streamparse as sp
from streamparse.constraints import build_constraint
from streamparse.dialects.render import render
from streamparse.prompting.requests import prompt_request


def parsed(dialect: str, text: str) -> tuple[str, list[tuple[str, Any]]]:
    options = prompt_request({"messages": [], "tools": TOOLS}, dialect).parser_options()
    result = sp.parse(text, TOOLS, **options)
    return result.content, [(c.name, json.loads(c.arguments)) for c in result.tool_calls]


@pytest.mark.parametrize("dialect", COVERED)
def test_accepted_calls_parse_back_to_the_same_calls(dialect: str) -> None:
    grammar = build_constraint(dialect, TOOLS).grammar
    for name, args in VALID:
        if dialect in TEXT_VALUE_DIALECTS and (args.get("mode") == 3 or "extra" in args):
            continue  # raw text for a value that may be a string (enum ["fast", "safe", 3], type any) stays one
        text = "Let me look that up.\n" + render(dialect, name, args)
        assert accepts(grammar, text)
        content, calls = parsed(dialect, text)
        assert calls == [(name, args)], text
        assert content.strip() == "Let me look that up."


@pytest.mark.parametrize("between", ["\n", " "], ids=["on_lines", "on_one_line"])
@pytest.mark.parametrize("dialect", COVERED)
def test_accepted_parallel_calls_parse_back_in_order(dialect: str, between: str) -> None:
    """Calls one after another, on lines of their own or, as small models write them, "[f(..)] [f(..)]"."""
    first, second = VALID[1], VALID[4]
    text = render(dialect, *first) + between + render(dialect, *second)
    assert accepts(build_constraint(dialect, TOOLS).grammar, text)
    assert parsed(dialect, text)[1] == [first, second]


@pytest.mark.parametrize("dialect", ["hermes", "llama3_json"])
@pytest.mark.parametrize("form", ["fenced", "bare", "bare after text"])
def test_small_model_forms_parse_back(dialect: str, form: str) -> None:
    key = "arguments" if dialect == "hermes" else "parameters"
    name, args = VALID[7]
    body = json.dumps({"name": name, key: args}, ensure_ascii=False)
    text = {"fenced": f"```json\n{body}\n```", "bare": body, "bare after text": f"Calling it now.\n{body}"}[form]
    assert accepts(build_constraint(dialect, TOOLS).grammar, text)
    assert parsed(dialect, text)[1] == [(name, args)]


@pytest.mark.parametrize("dialect", COVERED)
def test_reasoning_then_call_parses_back(dialect: str) -> None:
    text = "<think>The user wants the weather.</think>\n" + render(dialect, "get_weather", {"city": "Oslo"})
    assert accepts(build_constraint(dialect, TOOLS, tool_choice="required").grammar, text)
    assert parsed(dialect, text)[1] == [("get_weather", {"city": "Oslo"})]
