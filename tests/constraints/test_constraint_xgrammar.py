"""The constraints in xgrammar, the engine under vLLM and SGLang: its EBNF reader and its structural tags.

Skipped without xgrammar (see xgrammar_engine). List blocks holding several calls: test_constraint_lists.
"""

from __future__ import annotations

from typing import Any

import pytest
from constraint_cases import COVERED, INVALID, LIST_DIALECTS, SCHEMAS, TOOLS, VALID
from xgrammar_engine import accepts as matcher_accepts
from xgrammar_engine import from_vllm_fields, xgr

from streamparse.constraints import build_constraint, tags_for
from streamparse.dialects.render import render


def ebnf(dialect: str, **options: Any) -> Any:
    return xgr.Grammar.from_ebnf(build_constraint(dialect, TOOLS, **options).grammar)


def structural(dialect: str, **options: Any) -> Any:
    fields = build_constraint(dialect, TOOLS, backend="vllm", **options).request_fields()
    return from_vllm_fields(fields)


@pytest.mark.parametrize("dialect", COVERED)
def test_xgrammar_reads_the_gbnf_and_accepts_every_rendered_call(dialect: str) -> None:
    whole, required, single = ebnf(dialect), ebnf(dialect, tool_choice="required"), ebnf(dialect, parallel_tool_calls=False)
    for name, args in VALID:
        call = render(dialect, name, args)
        assert matcher_accepts(whole, "Let me check.\n" + call)
        assert matcher_accepts(required, call)
        assert matcher_accepts(single, call)
    two = render(dialect, "ping", {}) + "\n" + render(dialect, "get_weather", {"city": "Rome"})
    assert matcher_accepts(whole, two)
    assert not matcher_accepts(single, two)
    assert not matcher_accepts(required, "No call.")


@pytest.mark.parametrize("dialect", COVERED)
def test_xgrammar_rejects_wrong_calls_in_the_gbnf(dialect: str) -> None:
    required = ebnf(dialect, tool_choice="required")
    for _label, name, args in INVALID:
        assert not matcher_accepts(required, render(dialect, name, args)), _label


@pytest.mark.parametrize("dialect", COVERED)
def test_structural_tag_accepts_every_rendered_call_after_text(dialect: str) -> None:
    auto = structural(dialect)
    for name, args in VALID:
        assert matcher_accepts(auto, "Let me check.\n" + render(dialect, name, args)), (name, args)
    assert matcher_accepts(auto, "No call at all.")


@pytest.mark.parametrize("dialect", COVERED)
def test_structural_tag_rejects_wrong_calls_once_triggered(dialect: str) -> None:
    auto, required = structural(dialect), structural(dialect, tool_choice="required")
    begins_with_name = all(t.line_start or t.tool in t.trigger for t in tags_for(dialect, SCHEMAS, loose=False))
    for label, name, args in INVALID:
        call = render(dialect, name, args)
        assert not matcher_accepts(required, call), label
        if label != "wrong name" or not begins_with_name:  # a trigger spelling the name: a wrong one is text
            assert not matcher_accepts(auto, "So:\n" + call), label


@pytest.mark.parametrize("dialect", COVERED)
def test_structural_tag_choice_and_parallel(dialect: str) -> None:
    call, other = render(dialect, "ping", {}), render(dialect, "get_weather", {"city": "Rome"})
    required = structural(dialect, tool_choice={"type": "any"})
    assert not matcher_accepts(required, "Nothing to call.")
    assert matcher_accepts(required, call)
    named = structural(dialect, tool_choice={"type": "tool", "name": "ping"})
    assert matcher_accepts(named, call)
    assert not matcher_accepts(named, other)
    single = structural(dialect, parallel_tool_calls=False)
    assert matcher_accepts(single, "Sure.\n" + call)
    assert not matcher_accepts(single, call + "\n" + other)
    assert matcher_accepts(structural(dialect), call + "\n" + other)


@pytest.mark.parametrize("dialect", ["hermes", "qwen3_coder", "pythonic", "llama3_json"])
def test_structural_tag_leaves_reasoning_free(dialect: str) -> None:
    opener = tags_for(dialect, SCHEMAS)[0].begin
    text = f"<think>I could write {opener} here.</think>\n" + render(dialect, "ping", {})
    assert matcher_accepts(structural(dialect), text)


@pytest.mark.parametrize("dialect", [d for d in COVERED if d not in ("qwen3_coder", "seed_oss", *LIST_DIALECTS)])
def test_sglang_legacy_structural_tag_compiles_as_sglang_converts_it(dialect: str) -> None:
    legacy = build_constraint(dialect, TOOLS, backend="sglang").request_fields()["response_format"]
    items = [xgr.StructuralTagItem(begin=s["begin"], schema=s["schema"], end=s["end"]) for s in legacy["structures"]]
    grammar = xgr.Grammar.from_structural_tag(items, legacy["triggers"])
    for name, args in VALID:
        assert matcher_accepts(grammar, "Let me check.\n" + render(dialect, name, args))
    assert not matcher_accepts(grammar, render(dialect, "get_weather", {"city": "Rome", "unit": "kelvin"}))


@pytest.mark.parametrize("dialect", ["qwen3_coder", "pythonic"])
def test_sglang_gets_ebnf_where_the_legacy_form_cannot_say_it(dialect: str) -> None:
    fields = build_constraint(dialect, TOOLS, backend="sglang").request_fields()
    assert set(fields) == {"ebnf"}
    assert matcher_accepts(xgr.Grammar.from_ebnf(fields["ebnf"]), render(dialect, "ping", {}))


@pytest.mark.parametrize("dialect", ["hermes", "pythonic", "qwen3_coder", "name_tag"])
def test_xgrammar_reads_escaped_odd_values(dialect: str) -> None:
    odd = ['say "hi"', "back\\slash", "caret^[x]-y", "tab\tend", "日本 😀", "</tool_call>"]
    tools = [{"name": "svc.get-item_2", "input_schema": {"type": "object", "properties": {"v": {"enum": odd}}}}]
    grammar = xgr.Grammar.from_ebnf(build_constraint(dialect, tools, tool_choice="required").grammar)
    for value in odd:
        assert matcher_accepts(grammar, render(dialect, "svc.get-item_2", {"v": value})), value
    assert not matcher_accepts(grammar, render(dialect, "svc.get-item_2", {"v": "caret^[x]-z"}))


def test_a_dash_and_a_caret_in_a_class_mean_themselves_in_xgrammar() -> None:
    """xgrammar reads "\\x" hex digits greedily ("\\x2Dc" is U+02DC), so "-" and "^" are written unescaped."""
    tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
             for n in ("list-files", "list2", "caret^name")]
    grammar = xgr.Grammar.from_ebnf(build_constraint("name_tag", tools).grammar)
    assert matcher_accepts(grammar, "Sure. <list-files>{}</function>")
    assert not matcher_accepts(grammar, 'Sure. <list-files>{"zzz": 1}</function>')
    assert not matcher_accepts(grammar, 'Sure. <caret^name>{"zzz": 1}</function>')


def test_free_text_avoids_a_trigger_in_any_letter_case_in_xgrammar() -> None:
    grammar = ebnf("hermes")
    assert matcher_accepts(grammar, "Plain words, <b>bold</b> too.")
    for opener in ("<tool_call>", "<TOOL_CALL>", "<Tool_Call>"):
        assert not matcher_accepts(grammar, f'Sure. {opener}\n{{"name": "get_wether", "arguments": {{}}}}\n</tool_call>')
