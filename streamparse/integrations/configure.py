"""What a parser inside an engine is set to: its dialects and the state the answer starts in.

Invariant: explicit settings win (the ``STREAMPARSE_DIALECTS`` environment variable, a comma-separated list of
dialect names or aliases, over the format; the start state still comes from the template); otherwise the model's
chat template, rendered with the request's ``chat_template_kwargs``, decides (``streamparse.core.chat_template.
read_template``, which caches per template and kwargs: an engine builds one parser per request); a template that
is missing or cannot be read leaves auto detection (every dialect, the answer starting in prose), with a note
saying why. Never an exception for a template or kwargs: they are the model's and the client's input. An unknown
name in ``STREAMPARSE_DIALECTS`` is the operator's error and raises ``ValueError`` naming it.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..core.chat_template import read_template
from ..dialects import DIALECTS, SPANS, Dialect, resolve

__all__ = ["ENV_DIALECTS", "EngineSetup", "engine_setup", "function_tools", "reasoning_markers"]

ENV_DIALECTS = "STREAMPARSE_DIALECTS"
log = logging.getLogger("streamparse.integrations")


@dataclass(frozen=True)
class EngineSetup:
    """``dialects``: what to read (names, or a declaration derived from the template; None: every dialect);
    ``start_in_reasoning`` / ``start_in_response``: the generation prompt opened reasoning or a response channel;
    ``generation_prompt``: the text the prompt ended with, as the template renders it; ``source``: where the
    format came from (``"env"``, ``"template"``, ``"auto"``); ``notes``: why, in words."""

    dialects: tuple[str | Dialect, ...] | None = None
    start_in_reasoning: bool = False
    start_in_response: bool = False
    generation_prompt: str = ""
    source: str = "auto"
    notes: tuple[str, ...] = ()

    def parser_options(self, *, reasoning: bool = True) -> dict[str, Any]:
        """``StreamParser`` keyword arguments; ``reasoning=False``: the answer reaches this parser after its
        reasoning was taken out by another (so it starts in prose, past the answer's beginning)."""
        options: dict[str, Any] = {"dialects": None if self.dialects is None else list(self.dialects),
                                   "start_in_reasoning": self.start_in_reasoning and reasoning,
                                   "start_in_response": self.start_in_response}
        if reasoning and self.generation_prompt:
            options["generation_prompt"] = self.generation_prompt
        return options

    @property
    def names(self) -> tuple[str, ...] | None:
        """The dialects' names (a derived declaration's own name)."""
        return None if self.dialects is None else tuple(d.name if isinstance(d, Dialect) else d for d in self.dialects)


def engine_setup(chat_template: str | None, chat_template_kwargs: Mapping[str, Any] | None = None) -> EngineSetup:
    """The setup for one request: ``STREAMPARSE_DIALECTS`` if set, else what the template says."""
    found = _from_template(chat_template, chat_template_kwargs)
    named = os.environ.get(ENV_DIALECTS, "").strip()
    if named:
        names = tuple(resolve([n.strip() for n in named.split(",") if n.strip()]))
        return EngineSetup(names, found.start_in_reasoning, found.start_in_response, found.generation_prompt, "env",
                           (f"{ENV_DIALECTS}={named}",) + found.notes)
    return found


def _from_template(chat_template: str | None, kwargs: Mapping[str, Any] | None) -> EngineSetup:
    if not chat_template:
        return EngineSetup(notes=("no chat template: every dialect is read",))
    try:
        found = read_template(chat_template, kwargs=dict(kwargs or {}))
    except Exception as exc:  # noqa: BLE001 - read_template says it never raises; a template is never an error here
        note = f"the chat template could not be read ({type(exc).__name__}: {str(exc)[:200]}): every dialect is read"
        log.warning("streamparse: %s", note)
        return EngineSetup(notes=(note,))
    dialects = tuple(found.dialects) if found.dialects else None
    return EngineSetup(dialects, found.start_in_reasoning, found.start_in_response, found.generation_prompt,
                       "template" if dialects else "auto", tuple(found.notes))


def function_tools(tools: Iterable[Any] | None) -> list[dict[str, Any]] | None:
    """The named function tools among an engine's request tools (pydantic models or dicts, in the Chat
    Completions, Responses or Anthropic shape) as plain dicts; tools with no name (a server tool such as
    web search) are left out. None when the request declared none."""
    if not tools:
        return None
    found: list[dict[str, Any]] = []
    for tool in tools:
        data = tool.model_dump(exclude_none=True) if hasattr(tool, "model_dump") else tool
        if not isinstance(data, Mapping):
            continue
        fn = data.get("function", data)
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
            found.append(dict(data))
    return found or None


def reasoning_markers(dialects: Iterable[str | Dialect] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The reasoning openers and the strings that end reasoning (its closers, and the openers of a content
    channel, which end it too) of the spans these dialects enable (None: every dialect's)."""
    names = set(DIALECTS) if dialects is None else {d.name if isinstance(d, Dialect) else d for d in dialects}
    spans = [s for s in SPANS if not s.dialect or s.dialect in names]
    openers = tuple(s.opener for s in spans if s.kind == "reasoning")
    enders = tuple(c for s in spans if s.kind == "reasoning" for c in s.closers) + \
        tuple(s.opener for s in spans if s.kind == "content")
    return openers, enders
