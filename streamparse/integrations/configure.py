"""What a parser inside an engine is set to: its dialects and the state the answer starts in.

Invariant: explicit settings win (the ``STREAMPARSE_DIALECTS`` environment variable, a comma-separated list of
dialect names or aliases); otherwise the model's chat template, rendered with the request's
``chat_template_kwargs``, decides (``streamparse.core.chat_template.read_template``); a template that is missing
or cannot be read leaves auto detection (every dialect, the answer starting in prose), with a note saying why.
Never an exception for a template or kwargs: they are the model's and the client's input. An unknown name in
``STREAMPARSE_DIALECTS`` is the operator's error and raises ``ValueError`` naming it.

A template's reading is cached by (template, kwargs): an engine builds one parser per request, and rendering
a template costs far more than building a parser.
"""

from __future__ import annotations

import functools
import importlib
import json
import logging
import os
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..dialects import DIALECTS, SPANS, resolve

__all__ = ["ENV_DIALECTS", "EngineSetup", "engine_setup", "function_tools", "reasoning_markers"]

ENV_DIALECTS = "STREAMPARSE_DIALECTS"
log = logging.getLogger("streamparse.integrations")


@dataclass(frozen=True)
class EngineSetup:
    """``dialects``: the names to read (None: every dialect, auto detection); ``start_in_reasoning`` /
    ``start_in_response``: the generation prompt opened reasoning or a response channel; ``source``: where
    the setting came from (``"env"``, ``"template"``, ``"auto"``); ``notes``: why, in words."""

    dialects: tuple[str, ...] | None = None
    start_in_reasoning: bool = False
    start_in_response: bool = False
    source: str = "auto"
    notes: tuple[str, ...] = ()

    def parser_options(self, *, reasoning: bool = True) -> dict[str, Any]:
        """``StreamParser`` keyword arguments; ``reasoning=False``: the answer reaches this parser after its
        reasoning was taken out by another (so it starts in prose)."""
        return {"dialects": self.dialects,
                "start_in_reasoning": self.start_in_reasoning and reasoning,
                "start_in_response": self.start_in_response}


def engine_setup(chat_template: str | None, chat_template_kwargs: Mapping[str, Any] | None = None) -> EngineSetup:
    """The setup for one request: ``STREAMPARSE_DIALECTS`` if set, else what the template says."""
    named = os.environ.get(ENV_DIALECTS, "").strip()
    if named:
        names = tuple(resolve([n.strip() for n in named.split(",") if n.strip()]))
        from_template = _from_template(chat_template, _kwargs_key(chat_template_kwargs))
        return EngineSetup(names, from_template.start_in_reasoning, from_template.start_in_response, "env",
                           (f"{ENV_DIALECTS}={named}",))
    return _from_template(chat_template, _kwargs_key(chat_template_kwargs))


def _kwargs_key(kwargs: Mapping[str, Any] | None) -> str:
    if not kwargs:
        return ""
    try:
        return json.dumps(kwargs, sort_keys=True, default=repr)
    except (TypeError, ValueError):  # keys that are not strings: a kwargs json cannot spell
        return repr(sorted(kwargs.items(), key=repr))


@functools.lru_cache(maxsize=64)
def _from_template(chat_template: str | None, kwargs_key: str) -> EngineSetup:
    if not chat_template:
        return EngineSetup(notes=("no chat template: every dialect is read",))
    reader = _template_reader()
    if reader is None:
        return EngineSetup(notes=("this streamparse cannot read chat templates yet: every dialect is read",))
    kwargs = json.loads(kwargs_key) if kwargs_key.startswith("{") else {}
    try:
        found = reader(chat_template, kwargs=kwargs)
    except Exception as exc:  # noqa: BLE001 - the template is the model's code: a failure is a note
        note = f"the chat template could not be read ({type(exc).__name__}: {str(exc)[:200]}): every dialect is read"
        log.warning("streamparse: %s", note)
        return EngineSetup(notes=(note,))
    dialects = tuple(getattr(found, "dialects", None) or ()) or None
    return EngineSetup(dialects, bool(getattr(found, "start_in_reasoning", False)),
                       bool(getattr(found, "start_in_response", False)), "template" if dialects else "auto",
                       tuple(getattr(found, "notes", ()) or ()))


def _template_reader() -> Any:
    """``read_template`` of the chat-template issue, or None in a streamparse without it."""
    try:
        return importlib.import_module("streamparse.core.chat_template").read_template
    except (ImportError, AttributeError):
        return None


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


def reasoning_markers(dialects: Iterable[str] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The reasoning openers and the strings that end reasoning (its closers, and the openers of a content
    channel, which end it too) of the spans these dialects enable (None: every dialect's)."""
    names = set(DIALECTS) if dialects is None else set(dialects)
    spans = [s for s in SPANS if not s.dialect or s.dialect in names]
    openers = tuple(s.opener for s in spans if s.kind == "reasoning")
    enders = tuple(c for s in spans if s.kind == "reasoning" for c in s.closers) + \
        tuple(s.opener for s in spans if s.kind == "content")
    return openers, enders
