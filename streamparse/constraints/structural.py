"""Structural tags: the same tags as the GBNF grammar, in the JSON that xgrammar-based engines read.

Invariant: every tag's ``begin`` starts with exactly one of the listed triggers, and its content
holds the tool's parameters schema as written (``json_schema``; ``qwen_xml_parameter`` for
Qwen3-Coder bodies; a ``grammar`` for pythonic keyword arguments). A list block (``Tag.joiner``:
``[f(a=1), g(b=2)]``) holds one call with ``parallel`` off and any number of calls to the
declared tools, joined by the joiner as the renderer writes it, with ``parallel`` on. Two shapes:

- the current one (vLLM ``response_format``, xgrammar ``StructuralTag``):
  ``{"type": "structural_tag", "format": {"type": "triggered_tags", "triggers", "tags",
  "at_least_one", "stop_after_first"}}``; list blocks use only the formats every xgrammar with
  this shape compiles (``tag``, ``sequence``, ``const_string``, ``tags_with_separator``);
- the legacy one (SGLang, older vLLM): ``{"type": "structural_tag", "structures": [{"begin",
  "schema", "end"}], "triggers"}``, which holds JSON arguments only, no tool_choice and no list
  block (its structures end where a call ends, so a list would be cut after its first call).

A line-start list form with ``parallel`` on repeats every tool's call after each tool's first
call, so its JSON grows with the square of the tool count; the dicts share that part, and
``json_size`` measures the JSON without writing it (the caller bounds it: ``build``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .forms import THINK, THINK_END, Tag
from .grammar import kwargs_ebnf, object_schema

__all__ = ["structural_tag", "legacy_structural_tag", "tag_trigger", "json_size"]


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


def _tag(begin: str, content: dict[str, Any], end: str) -> dict[str, Any]:
    return {"type": "tag", "begin": begin, "content": content, "end": end}


def _list_items(tags: Sequence[Tag], schemas: Mapping[str, Any], parallel: bool) -> list[dict[str, Any]]:
    """The tags of one list form (same opener, closer, joiner and line rule).

    When the trigger stands inside the opener, one tag: the opener, the calls joined by the
    joiner (one with ``parallel`` off), the closer. A line-start form waits for a declared
    name, so each tool gets its own tag, ``begin`` up to its first call's arguments, and the
    calls after it (``joiner`` + a call) follow inside the content.
    """
    opener, closer, joiner, _line_start = tags[0].list_key
    calls = [(t, *t.inner) for t in tags]
    if all(opener.startswith(tag_trigger(t)) for t in tags):
        inner = [_tag(b, _content(t, schemas[t.tool]), e) for t, b, e in calls]
        return [_tag(opener, {"type": "tags_with_separator", "tags": inner, "separator": joiner,
                              "at_least_one": True, "stop_after_first": not parallel}, closer)]
    if not parallel:
        return [_tag(t.begin, _content(t, schemas[t.tool]), t.end) for t in tags]
    following = [_tag(joiner + b, _content(t, schemas[t.tool]), e) for t, b, e in calls]
    items = []
    for tag, _begin, end in calls:
        parts = [_content(tag, schemas[tag.tool])]
        parts += [{"type": "const_string", "value": end}] if end else []
        parts.append({"type": "tags_with_separator", "tags": following, "separator": ""})
        items.append(_tag(tag.begin, {"type": "sequence", "elements": parts}, closer))
    return items


def _items(tags: Sequence[Tag], schemas: Mapping[str, Any], parallel: bool) -> list[dict[str, Any]]:
    """Every tag, in the order of ``tags`` (a list form where its first tool stands)."""
    items: list[dict[str, Any]] = []
    done: set[tuple[str, str, str, bool]] = set()
    for tag in tags:
        if not tag.joiner:
            items.append(_tag(tag.begin, _content(tag, schemas[tag.tool]), tag.end))
        elif (key := tag.list_key) not in done:
            done.add(key)
            items += _list_items([t for t in tags if t.joiner and t.list_key == key], schemas, parallel)
    return items


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
    items = _items(tags, schemas, parallel)
    triggers = _triggers(tags)
    if think and not required and parallel:
        items.append(_tag(THINK, {"type": "any_text"}, THINK_END))
        triggers.append(THINK)
    return {"type": "structural_tag",
            "format": {"type": "triggered_tags", "triggers": triggers, "tags": items,
                       "at_least_one": required, "stop_after_first": not parallel}}


def legacy_structural_tag(tags: Sequence[Tag], schemas: Mapping[str, Any]) -> dict[str, Any] | None:
    """The legacy structures/triggers form, or None when a tag's arguments are not JSON or its
    block is a list (the caller then sends the whole-answer grammar)."""
    if any(t.style != "json" or t.joiner for t in tags):
        return None
    return {"type": "structural_tag",
            "structures": [{"begin": t.begin, "schema": object_schema(schemas[t.tool]), "end": t.end} for t in tags],
            "triggers": _triggers(tags)}


def json_size(value: Any) -> int:
    """``len(json.dumps(value))``, in time linear in the distinct dicts and lists of ``value``.

    A dict or list that stands several times (the calls shared by a list form's tags) is measured
    once; ``json.dumps`` would write it out each time, which is what the size counts.
    """
    memo: dict[int, int] = {}

    def size(item: Any) -> int:
        if isinstance(item, dict):
            if id(item) not in memo:
                if not all(isinstance(k, str) for k in item):
                    memo[id(item)] = len(json.dumps(item))
                else:
                    memo[id(item)] = (2 + 2 * max(len(item) - 1, 0)
                                      + sum(len(json.dumps(k)) + 2 + size(v) for k, v in item.items()))
            return memo[id(item)]
        if isinstance(item, (list, tuple)):
            if id(item) not in memo:
                memo[id(item)] = 2 + 2 * max(len(item) - 1, 0) + sum(size(v) for v in item)
            return memo[id(item)]
        return len(json.dumps(item))

    return size(value)
