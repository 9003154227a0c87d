"""Structural tags: the same tags as the GBNF grammar, in the JSON that xgrammar-based engines read.

Invariant: every tag's ``begin`` starts with exactly one of the listed triggers, and its content
holds the tool's parameters schema as written (``json_schema``; ``qwen_xml_parameter`` for
Qwen3-Coder bodies; a ``grammar`` for pythonic keyword arguments). Two shapes:

- the current one (vLLM ``response_format``, xgrammar ``StructuralTag``):
  ``{"type": "structural_tag", "format": {"type": "triggered_tags", "triggers", "tags",
  "at_least_one", "stop_after_first"}}``;
- the legacy one (SGLang, older vLLM): ``{"type": "structural_tag", "structures": [{"begin",
  "schema", "end"}], "triggers"}``, which holds JSON arguments only and no tool_choice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .forms import Tag
from .grammar import kwargs_ebnf, object_schema

__all__ = ["structural_tag", "legacy_structural_tag", "tag_trigger"]


def tag_trigger(tag: Tag) -> str:
    """The trigger a structural tag waits for: a line-start form has no line notion there, so it
    waits for its whole ``begin`` (name included) and prose with a bare ``[`` or ``{`` stays free."""
    return tag.begin if tag.line_start else tag.trigger


def _content(tag: Tag, schema: Any) -> dict[str, Any]:
    if tag.style == "json":
        return {"type": "json_schema", "json_schema": object_schema(schema)}
    if tag.style == "qwen_xml":
        return {"type": "qwen_xml_parameter", "json_schema": object_schema(schema)}
    return {"type": "grammar", "grammar": kwargs_ebnf(tag, schema)}


def _triggers(tags: Sequence[Tag]) -> list[str]:
    triggers = list(dict.fromkeys(tag_trigger(t) for t in tags))
    # a trigger that starts with another one is never reached: keep the shorter
    return [t for t in triggers if not any(o != t and t.startswith(o) for o in triggers)]


def structural_tag(tags: Sequence[Tag], schemas: Mapping[str, Any], *, required: bool, parallel: bool,
                   think: bool = True) -> dict[str, Any]:
    """The current structural tag (``format`` of type ``triggered_tags``).

    ``think`` adds ``<think>…</think>`` as a free tag, so reasoning may mention a trigger; it is
    left out when a call is required or only one is allowed (the tag would count as that call):
    there, run the engine with a reasoning parser, which constrains only after the reasoning.
    """
    items = [{"type": "tag", "begin": t.begin, "content": _content(t, schemas[t.tool]), "end": t.end} for t in tags]
    triggers = _triggers(tags)
    if think and not required and parallel:
        items.append({"type": "tag", "begin": "<think>", "content": {"type": "any_text"}, "end": "</think>"})
        triggers.append("<think>")
    return {"type": "structural_tag",
            "format": {"type": "triggered_tags", "triggers": triggers, "tags": items,
                       "at_least_one": required, "stop_after_first": not parallel}}


def legacy_structural_tag(tags: Sequence[Tag], schemas: Mapping[str, Any]) -> dict[str, Any] | None:
    """The legacy structures/triggers form, or None when a tag's arguments are not JSON."""
    if any(t.style != "json" for t in tags):
        return None
    return {"type": "structural_tag",
            "structures": [{"begin": t.begin, "schema": object_schema(schemas[t.tool]), "end": t.end} for t in tags],
            "triggers": _triggers(tags)}
