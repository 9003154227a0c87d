"""``build_constraint``: from a dialect, the tools and the client's choice, the fields a backend decodes under.

Invariant: pure (no I/O), and never a wrong constraint: a dialect without a grammar, no tools, or
``tool_choice`` ``none`` give None (``unsupported_reason`` says why). Names come only from the
declared tools (one, when ``tool_choice`` names it); ``required``/``any``/a named tool is not lazy
and holds at least one call; ``parallel_tool_calls`` false holds at most one. The vLLM fields stay
within ``VLLM_TAG_LIMIT`` whenever the whole-answer grammar is smaller: above it, vLLM gets that
grammar (``structured_outputs.grammar``, read by xgrammar's EBNF reader) instead of the structural
tag, and ``Constraint.form`` and ``description`` say so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..arguments.schema import tool_schemas
from ..dialects import resolve
from .forms import THINK, THINK_END, UNSUPPORTED, Tag, supported, tags_for
from .grammar import build_gbnf, json_tokens
from .structural import json_size, legacy_structural_tag, structural_tag

__all__ = ["Backend", "Constraint", "build_constraint", "unsupported_reason", "choice_mode",
           "TRIGGER_WORD", "TRIGGER_PATTERN", "TRIGGER_PATTERN_FULL", "VLLM_TAG_LIMIT"]

Backend = Literal["llamacpp", "vllm", "sglang"]

# llama.cpp's common_grammar_trigger_type, as its server reads "grammar_triggers" (an integer "type").
TRIGGER_WORD, TRIGGER_PATTERN, TRIGGER_PATTERN_FULL = 1, 2, 3
_REGEX_SPECIAL = set("\\^$.|?*+()[]{}")
_MARKER = re.compile(r"<\|[^|<>\s]+\|>|<｜[^｜]+｜>|\[[A-Z_]+\]|</?[A-Za-z_][\w:]*>")
# reasoning stays free: a trigger counts after a leading <think>…</think>, never inside an open one
_THINK_GUARD = rf"^(?:\s*{re.escape(THINK)}[\s\S]*?{re.escape(THINK_END)}|(?!\s*{re.escape(THINK)}))[\s\S]*?"

VLLM_TAG_LIMIT = 64 * 1024
"""Most bytes of JSON a vLLM structural tag may take before the whole-answer grammar is sent instead
(when that grammar is smaller). Every request carries it, vLLM parses and validates it per request,
and xgrammar compiles each distinct one. A line-start list form with parallel calls (pythonic, xlam,
phi4_mini) repeats every tool after each tool's first call, so its tag grows with the square of
the tool count (pythonic: 95 KiB for 6 tools, 5.6 MiB for 50), while the grammar grows linearly
(9 KiB, 36 KiB). 64 KiB keeps the tag of the other dialects up to about 50 tools with real schemas
(hermes: 55 KiB for 50), where it is the better constraint: text after a call stays free there."""


@dataclass(frozen=True)
class Constraint:
    """What to merge into an upstream request so its decoder only writes well-formed calls."""

    backend: Backend
    dialect: str
    description: str
    fields: dict[str, Any] = field(default_factory=dict)
    grammar: str = ""  # the GBNF text (llama.cpp ``grammar``, SGLang ``ebnf``, vLLM grammar), when one is sent
    # which form the fields hold: "gbnf", "gbnf_lazy" (llama.cpp), "structural_tag", "grammar" (vLLM),
    # "legacy_structural_tag", "ebnf" (SGLang); ``description`` says why when it is not the usual one
    form: str = ""

    def request_fields(self) -> dict[str, Any]:
        """The request body fields to set (a fresh copy each time)."""
        import copy

        return copy.deepcopy(self.fields)


def unsupported_reason(dialect: str) -> str | None:
    """Why ``dialect`` gets no constraint, or None when it gets one."""
    try:
        names = resolve(dialect)
    except ValueError as exc:
        return str(exc)
    if len(names) != 1:
        return f"{dialect!r} names several dialects"
    return None if supported(names[0]) else UNSUPPORTED.get(names[0], f"no constraint written for {names[0]!r}")


def choice_mode(tool_choice: Any) -> tuple[str, str | None]:
    """``(mode, tool name)`` of an OpenAI or Anthropic ``tool_choice`` (or of an object with ``mode`` and
    ``name``, as ``prompting.ToolChoice``, which also reads the legacy ``function_call``): auto, none,
    required or named."""
    if tool_choice is None:
        return "auto", None
    mode = getattr(tool_choice, "mode", None)
    if mode in ("auto", "none", "required", "named"):
        name = getattr(tool_choice, "name", None)
        if mode == "named" and not (isinstance(name, str) and name):
            raise ValueError("a named tool_choice needs the tool's name")
        return str(mode), name if mode == "named" else None
    shape = tool_choice if isinstance(tool_choice, Mapping) else {"type": tool_choice}
    kind = shape.get("type")
    if kind in ("auto", "none", "required"):
        return str(kind), None
    if kind == "any":
        return "required", None
    fn = shape.get("function")
    name = fn.get("name") if isinstance(fn, Mapping) else shape.get("name")
    if isinstance(name, str) and name:
        return "named", name
    raise ValueError(f"tool_choice must be auto, none, required or name a tool, not {tool_choice!r}")


def _regex(text: str) -> str:
    """``text`` as a regex that ECMAScript (llama.cpp's std::regex) and Python read alike."""
    return "".join("\\" + c if c in _REGEX_SPECIAL else "\\n" if c == "\n" else "\\t" if c == "\t" else c
                   for c in text)


def _begin_regex(tag: Tag) -> str:
    """A line-start tag's ``begin`` as a regex; JSON tokens may be spaced as the grammar allows."""
    if tag.style != "json":
        return _regex(tag.begin)
    return "\\s*".join(_regex(t) for t in json_tokens(tag.begin) if t.strip())


def llamacpp_triggers(tags: Sequence[Tag]) -> list[dict[str, Any]]:
    """One full-text pattern trigger: the first trigger outside a reasoning span.

    llama.cpp feeds the grammar from the first non-empty capture group. A fixed opener is its own
    group; a line-start form needs a newline (or the text start) before it and waits for a
    declared tool's whole ``begin``, so the text replayed into the grammar always fits it.
    """
    words = sorted({t.trigger for t in tags if not t.line_start}, key=lambda w: (-len(w), w))
    lines = sorted({_begin_regex(t) for t in tags if t.line_start}, key=lambda w: (-len(w), w))
    options = []
    if words:
        options.append("(" + "|".join(_regex(w) for w in words) + ")")
    if lines:
        options.append("(?:^|\\n)(" + "|".join(lines) + ")")
    return [{"type": TRIGGER_PATTERN_FULL, "value": _THINK_GUARD + "(?:" + "|".join(options) + ")[\\s\\S]*$"}]


def _preserved(tags: Sequence[Tag]) -> list[str]:
    found: list[str] = [THINK, THINK_END]
    for tag in tags:
        found += _MARKER.findall(tag.begin) + _MARKER.findall(tag.end)
    return list(dict.fromkeys(found))  # (a head holding a tool's name, as <function=NAME>, is no _MARKER)


def build_constraint(dialect: str, tools: Iterable[Mapping[str, Any]] | None, *, tool_choice: Any = None,
                     parallel_tool_calls: bool = True, backend: Backend = "llamacpp", lazy: bool = False,
                     loose: bool = True) -> Constraint | None:
    """The constraint for calls in ``dialect`` to ``tools`` (OpenAI, bare or Anthropic tool dicts).

    llama.cpp: by default the grammar itself holds the free text before the first call (its
    ``/v1/chat/completions`` keeps a client's ``grammar`` but sets ``grammar_lazy`` and
    ``grammar_triggers`` from the chat template, so lazy fields sent there are dropped and a lazy
    grammar would bind from the first token). ``lazy=True`` sends ``grammar_lazy``, the triggers
    and ``preserved_tokens`` with a grammar that starts at a call, for ``/completion``. ``loose`` adds the forms small models write instead of
    the taught opener (hermes, llama3_json). None: nothing to constrain (see module invariant).
    """
    mode, named = choice_mode(tool_choice)
    schemas = tool_schemas(tools) or {}
    if mode == "none" or not schemas or unsupported_reason(dialect) is not None:
        return None
    if named is not None:
        if named not in schemas:
            raise ValueError(f"tool_choice names {named!r}, which is not in tools")
        schemas = {named: schemas[named]}
    canonical = resolve(dialect)[0]
    tags = tags_for(canonical, schemas, loose=loose)
    if not tags:
        return None
    required = mode in ("required", "named")
    what = (f"{canonical} calls to {', '.join(schemas)}" + ("; at least one" if required else "")
            + ("" if parallel_tool_calls else "; at most one"))
    if backend == "llamacpp":
        is_lazy = lazy and not required
        grammar = build_gbnf(tags, schemas, required=required, parallel=parallel_tool_calls, lazy=is_lazy)
        fields: dict[str, Any] = {"grammar": grammar}
        if is_lazy:
            fields |= {"grammar_lazy": True, "grammar_triggers": llamacpp_triggers(tags),
                       "preserved_tokens": _preserved(tags)}
        return Constraint(backend, canonical, f"llama.cpp GBNF ({'lazy' if is_lazy else 'whole answer'}): {what}",
                          fields, grammar, "gbnf_lazy" if is_lazy else "gbnf")
    if backend == "vllm":
        return _vllm(canonical, tags, schemas, what, required=required, parallel=parallel_tool_calls)
    if backend == "sglang":
        legacy = legacy_structural_tag(tags, schemas) if not required and parallel_tool_calls else None
        if legacy is not None:
            return Constraint(backend, canonical, f"SGLang structural tag (legacy): {what}", {"response_format": legacy},
                              form="legacy_structural_tag")
        grammar = build_gbnf(tags, schemas, required=required, parallel=parallel_tool_calls, lazy=False)
        return Constraint(backend, canonical, f"SGLang EBNF (whole answer): {what}", {"ebnf": grammar}, grammar, "ebnf")
    raise ValueError(f"backend must be llamacpp, vllm or sglang, not {backend!r}")


def _vllm(dialect: str, tags: Sequence[Tag], schemas: Mapping[str, Any], what: str, *, required: bool,
          parallel: bool) -> Constraint:
    """The structural tag, or the whole-answer grammar when the tag's JSON is over ``VLLM_TAG_LIMIT``
    and the grammar's is smaller (the tag is built with its repeated parts shared, so measuring it
    costs no more than the grammar)."""
    fields: dict[str, Any] = {"response_format": structural_tag(tags, schemas, required=required, parallel=parallel)}
    size = json_size(fields)
    if size > VLLM_TAG_LIMIT:
        grammar = build_gbnf(tags, schemas, required=required, parallel=parallel, lazy=False)
        whole = {"structured_outputs": {"grammar": grammar}}
        if json_size(whole) < size:
            why = f"the structural tag would take {size} bytes, over {VLLM_TAG_LIMIT}"
            return Constraint("vllm", dialect, f"vLLM grammar (whole answer; {why}): {what}", whole, grammar, "grammar")
    return Constraint("vllm", dialect, f"vLLM structural tag: {what}", fields, form="structural_tag")
