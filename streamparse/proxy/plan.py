"""Planning one chat request: what goes upstream, and how its answer is read.

Invariants: pure (a request and a backend in, a plan out; no I/O). A request whose
``tool_choice`` demands a call is planned with the sentence to report when the answer has
none (``unmet``), and with the corrective message of the one retry when the backend allows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..prompting import ToolChoice, corrective_message, prompt_request
from ..wire.openai import should_parse
from .config import Backend

__all__ = ["ChatPlan", "plan_chat"]


@dataclass
class ChatPlan:
    """What goes upstream for one chat request, and how its answer is read."""

    upstream: dict[str, Any]  # the upstream request body
    tools: list[Any] | None  # what the answer is parsed against
    options: dict[str, Any] | None  # parser options; None: the answer needs no parsing
    unmet: str | None  # said when the answer holds no call although the request demanded one
    retry: str | None  # the corrective message for one retry (tool_prompt_retry), else None

    def rewriter_options(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Keyword arguments for the rewriters. The plan has decided whether to parse: an answer that needs
        no parsing is read with no dialect and without the request, so only its reasoning is split out."""
        return {"request": None, "dialects": []} if self.options is None else {"request": request, **self.options}


def plan_chat(payload: Mapping[str, Any], backend: Backend) -> ChatPlan:
    """The upstream request and parsing for ``payload`` on ``backend``.

    Raises ValueError (``PromptError``) for a request the tool prompt cannot be written for.
    """
    if backend.tool_prompt:
        prompted = prompt_request(payload, backend.tool_prompt, others=backend.dialects)
        upstream, tools, choice = prompted.payload, prompted.tools, prompted.choice
        options = {**backend.parser_options(), **prompted.parser_options()} if prompted.parse else None
    else:
        upstream, tools, choice = dict(payload), None, ToolChoice.from_request(payload)
        parse = should_parse(None, payload, parse_without_tools=backend.parse_without_tools)
        options = backend.parser_options() if parse else None
    if "model" in payload:
        upstream["model"] = backend.upstream_model(payload["model"])
    unmet = retry = None
    if choice.must_call and options is not None:
        wanted = f"a call to {choice.name!r}" if choice.mode == "named" else "a tool call"
        unmet = f"no_tool_call: tool_choice demanded {wanted}, and the model answered without one"
        if backend.tool_prompt and backend.tool_prompt_retry:
            retry = corrective_message(choice, backend.tool_prompt, tools or payload.get("tools"))
    if retry is not None:  # the answer is checked whole before anything is sent
        upstream.pop("stream_options", None)
        upstream["stream"] = False
    return ChatPlan(upstream, tools, options, unmet, retry)
