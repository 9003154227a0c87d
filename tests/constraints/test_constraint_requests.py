"""The request fields each backend gets, their shapes, and the API around them.

Shapes are checked against the engines' own request models where they import on this CPU machine
(vLLM's and SGLang's protocol modules come with the engine comparators' install), and always against
the documented shapes written here: llama.cpp's server (``tools/server``: ``grammar_triggers`` items
``{"type": int, "value": str}``, type 1 word, 2 pattern, 3 full pattern), vLLM's
``StructuralTagResponseFormat`` (``type``, ``format``) or ``structured_outputs`` ``{"grammar"}`` when
the tag would be too big (test_constraint_size_bound), and SGLang's legacy one (``type``,
``structures`` of ``begin``/``schema``/``end``, ``triggers``; and ``ebnf``).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from typing import Any, Literal

import pytest
from constraint_cases import ANTHROPIC_TOOLS, COVERED, SCHEMAS, TOOLS
from pydantic import BaseModel, ConfigDict, Field

from streamparse.constraints import UNSUPPORTED, build_constraint, unsupported_reason
from streamparse.prompting.requests import PROMPT_DIALECTS


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class LlamaTrigger(_Strict):
    type: Literal[1, 2, 3]
    value: str


class LlamaFields(_Strict):
    grammar: str
    grammar_lazy: bool | None = None
    grammar_triggers: list[LlamaTrigger] | None = None
    preserved_tokens: list[str] | None = None


class VllmStructuralTag(_Strict):
    type: Literal["structural_tag"]
    format: dict[str, Any]


class VllmGrammar(_Strict):
    grammar: str


class VllmFields(_Strict):
    response_format: VllmStructuralTag | None = None
    structured_outputs: VllmGrammar | None = None


class SglangStructure(_Strict):
    begin: str
    schema_: dict[str, Any] = Field(alias="schema")
    end: str


class SglangStructuralTag(_Strict):
    type: Literal["structural_tag"]
    structures: list[SglangStructure]
    triggers: list[str]


class SglangFields(_Strict):
    response_format: SglangStructuralTag | None = None
    ebnf: str | None = None


CHOICES: list[Any] = [None, "auto", "required", {"type": "any"}, {"type": "function", "function": {"name": "note"}}]


@pytest.mark.parametrize("dialect", COVERED)
def test_llamacpp_fields_have_the_server_shape(dialect: str) -> None:
    for choice in CHOICES:
        for lazy in (False, True):
            fields = LlamaFields.model_validate(
                build_constraint(dialect, TOOLS, tool_choice=choice, lazy=lazy).request_fields())
            must_call = choice not in (None, "auto")
            assert fields.grammar_lazy is (True if lazy and not must_call else None)
            if fields.grammar_triggers:
                for trigger in fields.grammar_triggers:
                    assert trigger.type == 3 and trigger.value.startswith("^") and trigger.value.endswith("$")
                    re.compile(trigger.value)
                    # ECMAScript (std::regex) reads it the same: no Python-only syntax
                    assert not re.search(r"\(\?P|\(\?<|\\A|\\Z|\(\?[aiLmsux]", trigger.value)
                assert fields.preserved_tokens and "<think>" in fields.preserved_tokens


def test_llamacpp_preserved_tokens_hold_the_special_markers() -> None:
    fields = build_constraint("hermes", TOOLS, lazy=True).request_fields()
    assert {"<tool_call>", "</tool_call>"} <= set(fields["preserved_tokens"])
    fields = build_constraint("llama3_json", TOOLS, lazy=True).request_fields()
    assert "<|python_tag|>" in fields["preserved_tokens"]


@pytest.mark.parametrize("dialect", COVERED)
def test_vllm_and_sglang_fields_have_their_documented_shapes(dialect: str) -> None:
    for choice in CHOICES:
        for parallel in (True, False):
            constraint = build_constraint(
                dialect, TOOLS, tool_choice=choice, parallel_tool_calls=parallel, backend="vllm")
            vllm = VllmFields.model_validate(constraint.request_fields())
            assert (vllm.response_format is None) != (vllm.structured_outputs is None)
            if vllm.structured_outputs is not None:
                assert constraint.form == "grammar" and vllm.structured_outputs.grammar == constraint.grammar
            else:
                assert constraint.form == "structural_tag" and vllm.response_format is not None
                fmt = vllm.response_format.format
                assert fmt["type"] == "triggered_tags"
                assert fmt["at_least_one"] is (choice not in (None, "auto"))
                assert fmt["stop_after_first"] is (not parallel)
                for tag in fmt["tags"]:
                    assert any(tag["begin"].startswith(t) for t in fmt["triggers"])
            sglang = SglangFields.model_validate(build_constraint(
                dialect, TOOLS, tool_choice=choice, parallel_tool_calls=parallel, backend="sglang").request_fields())
            assert (sglang.response_format is None) != (sglang.ebnf is None)


def test_qwen3_coder_bodies_use_the_qwen_xml_format() -> None:
    fmt = build_constraint("qwen3_coder", TOOLS, backend="vllm").request_fields()["response_format"]["format"]
    contents = {t["content"]["type"] for t in fmt["tags"] if t["begin"] != "<think>"}
    assert contents == {"qwen_xml_parameter"}


def test_schemas_reach_the_engines_normalised() -> None:
    fmt = build_constraint("hermes", TOOLS, backend="vllm").request_fields()["response_format"]["format"]
    bfcl = next(t["content"]["json_schema"] for t in fmt["tags"] if '"bfcl_style"' in t["begin"])
    assert bfcl["type"] == "object" and bfcl["additionalProperties"] is False
    assert bfcl["properties"]["amount"] == {"type": "number"}
    assert bfcl["properties"]["pair"]["type"] == "array"
    assert "type" not in bfcl["properties"]["extra"]  # "any": no type at all
    assert bfcl["properties"]["options"] == {"type": "object"}


def _engine_request_model(module: str, name: str) -> Any:
    root = module.split(".")[0]
    if importlib.util.find_spec(root) is None:  # not importorskip: their __init__ may need a GPU stack
        pytest.skip(f"{root} is not installed (bench/requirements-engines.txt)")
    try:
        return getattr(importlib.import_module(module), name)
    except Exception as exc:  # noqa: BLE001 - an engine that does not import on CPU is a skip, not a failure
        pytest.skip(f"{module} does not import here: {exc}")


@pytest.mark.parametrize(("backend", "module"), [
    ("vllm", "vllm.entrypoints.openai.chat_completion.protocol"),
    ("vllm", "vllm.entrypoints.openai.protocol"),
    ("sglang", "sglang.srt.entrypoints.openai.protocol"),
])
def test_fields_validate_against_the_engines_own_request_models(backend: Any, module: str) -> None:
    request = _engine_request_model(module, "ChatCompletionRequest")
    for dialect in ("hermes", "qwen3_coder", "pythonic", "llama3_json"):
        for choice in (None, "required"):
            fields = build_constraint(dialect, TOOLS, tool_choice=choice, backend=backend).request_fields()
            parsed = request.model_validate({"model": "m", "messages": [{"role": "user", "content": "hi"}], **fields})
            assert parsed is not None


def test_nothing_to_constrain_gives_none() -> None:
    assert build_constraint("hermes", TOOLS, tool_choice="none") is None
    assert build_constraint("hermes", TOOLS, tool_choice={"type": "none"}) is None
    assert build_constraint("hermes", []) is None
    assert build_constraint("hermes", None) is None
    for dialect, reason in UNSUPPORTED.items():
        assert build_constraint(dialect, TOOLS) is None
        assert unsupported_reason(dialect) == reason
    assert build_constraint("no_such_dialect", TOOLS) is None
    assert "unknown dialect" in (unsupported_reason("no_such_dialect") or "")


def test_every_prompt_dialect_is_covered_or_says_why() -> None:
    for dialect in PROMPT_DIALECTS:
        constraint = build_constraint(dialect, TOOLS)
        assert (constraint is None) == (unsupported_reason(dialect) is not None), dialect
    assert {"hermes", "qwen3_coder", "pythonic", "llama3_json"} <= set(COVERED)


def test_tools_may_be_openai_or_anthropic_and_dialects_aliases() -> None:
    openai = build_constraint("hermes", TOOLS)
    anthropic = build_constraint("qwen25", ANTHROPIC_TOOLS)
    assert openai is not None and anthropic is not None
    assert openai.grammar == anthropic.grammar and anthropic.dialect == "hermes"


def test_a_named_tool_must_be_declared() -> None:
    with pytest.raises(ValueError, match="not in tools"):
        build_constraint("hermes", TOOLS, tool_choice={"type": "function", "function": {"name": "nope"}})
    with pytest.raises(ValueError, match="tool_choice"):
        build_constraint("hermes", TOOLS, tool_choice={"type": "function"})


def test_request_fields_are_a_fresh_copy_and_the_description_says_what() -> None:
    constraint = build_constraint("pythonic", TOOLS, tool_choice="required", parallel_tool_calls=False)
    assert constraint is not None
    constraint.request_fields()["grammar"] = "changed"
    assert constraint.request_fields()["grammar"] == constraint.grammar
    assert "pythonic" in constraint.description and "at least one" in constraint.description
    assert "at most one" in constraint.description
    for name in SCHEMAS:
        assert name in constraint.description


def test_the_prompting_tool_choice_is_read_too() -> None:
    from streamparse.prompting.requests import ToolChoice

    legacy = ToolChoice.from_request({"function_call": {"name": "note"}, "parallel_tool_calls": False})
    from_object = build_constraint("hermes", TOOLS, tool_choice=legacy, parallel_tool_calls=legacy.parallel)
    from_dict = build_constraint("hermes", TOOLS, tool_choice={"type": "function", "function": {"name": "note"}},
                                 parallel_tool_calls=False)
    assert from_object is not None and from_dict is not None
    assert from_object.grammar == from_dict.grammar
    assert build_constraint("hermes", TOOLS, tool_choice=ToolChoice("none")) is None
