"""Planning one chat request: what goes upstream, and how its answer is read.

Invariants: pure (a request, a backend and the backend's engine in, a plan out; no I/O). A request whose
``tool_choice`` demands a call is planned with the sentence to report when the answer has
none (``unmet``), and with the corrective message of the one retry when the backend allows it.
A constraint (``constrain``, with ``tool_prompt``) is merged only into a request whose answer is parsed,
that carries no decoding constraint of the client's own; ``drop_constraint`` gives back exactly the
request as it would have been planned without one. A backend with ``system_messages = "fold"`` gets every system
(and developer) message's text in one leading system message, folded before the tool instructions are added to it
(``prompting.fold_system``); with ``"inline"`` (the default) each stays in its place. Every front plans here.
Whether the answer starts inside reasoning (a template that opens ``<think>`` in the prompt) is decided here too,
from the backend's ``reasoning_start`` and what the request asked for (``opens_reasoning``); such an answer is
read even when nothing else is to be parsed, so its reasoning is split out on every front.
A streamed request to a backend known to be llama.cpp's server (``progress``: ``engines.Engines.llamacpp``) asks
for its prompt progress (``"return_progress": true``), unless the client set that field itself; the plan says so
(``progress``), and the answer's progress events are then life signs, never the client's (``rewrite``).
With what the backend's chat template decides for the request (``template``: a ``TemplateSetup``, read by
``chat_templates`` for the request's kwargs and the engine's own generation prompt), the template settles what the
operator did not write (``Backend.written``): the format (unless ``dialect(s)`` or ``tool_prompt``), whether the
answer starts inside reasoning (unless ``reasoning_start``) or a response channel (unless ``response_start``), and
the generation prompt the parser reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..constraints import Backend as Engine, Constraint, build_constraint
from ..prompting import ToolChoice, corrective_message, fold_system, prompt_request
from ..templates import TemplateSetup
from ..wire.openai import should_parse
from .config import Backend

__all__ = ["ChatPlan", "plan_chat", "client_constraint", "CLIENT_CONSTRAINTS", "opens_reasoning", "thinking_asked"]

# Request fields through which a client constrains decoding itself (OpenAI, llama.cpp, vLLM, SGLang):
# a request with one of them (or a ``guided_*`` field) is left unconstrained, since two constraints clash.
CLIENT_CONSTRAINTS = ("response_format", "grammar", "grammar_lazy", "grammar_triggers", "json_schema", "regex",
                      "ebnf", "structural_tag", "structured_outputs")


def client_constraint(payload: Mapping[str, Any]) -> str | None:
    """The first field of ``payload`` that constrains decoding already (None: there is none)."""
    return next((k for k, v in payload.items()
                 if v is not None and (k in CLIENT_CONSTRAINTS or (isinstance(k, str) and k.startswith("guided_")))),
                None)


@dataclass
class ChatPlan:
    """What goes upstream for one chat request, and how its answer is read."""

    upstream: dict[str, Any]  # the upstream request body
    tools: list[Any] | None  # what the answer is parsed against
    options: dict[str, Any] | None  # parser options; None: the answer needs no parsing
    unmet: str | None  # said when the answer holds no call although the request demanded one
    retry: str | None  # the corrective message for one retry (tool_prompt_retry), else None
    constraint: Constraint | None = None  # merged into ``upstream``
    unconstrained: dict[str, Any] | None = None  # ``upstream`` without the constraint
    why_unconstrained: str | None = None  # why a backend with ``constrain`` got none for this request
    reasoning_open: bool = False  # the prompt opened reasoning: the answer starts in it (``opens_reasoning``)
    response_open: bool = False  # the prompt opened a response channel instead (``response_start``)
    progress: bool = False  # the upstream request asks llama.cpp for its prompt progress (taken out of the answer)
    template: TemplateSetup | None = None  # what the backend's chat template decided for this request

    @property
    def relayable(self) -> bool:
        """The answer may go on as the upstream sent it: nothing to parse, and no span opened by the prompt."""
        return self.options is None and not self.reasoning_open and not self.response_open

    def drop_constraint(self) -> None:
        """From now on the upstream request is the one planned without the constraint."""
        if self.constraint is not None and self.unconstrained is not None:
            self.upstream, self.constraint, self.unconstrained = self.unconstrained, None, None

    def rewriter_options(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Keyword arguments for the rewriters. The plan has decided whether to parse: an answer that needs
        no parsing is read with no dialect and without the request, so only its reasoning is split out."""
        opened: dict[str, Any] = {"start_in_reasoning": True} if self.reasoning_open else \
            {"start_in_response": True} if self.response_open else {}
        if self.template is not None:  # decided here: the parser does not read the start from the template again
            opened = {"start_in_reasoning": self.reasoning_open, "start_in_response": self.response_open}
        if self.options is None:
            return {"request": None, "dialects": [], **opened}
        return {"request": request, **self.options, **opened}


def plan_chat(payload: Mapping[str, Any], backend: Backend, engine: Engine | None = None, *,
              progress: bool = False, template: TemplateSetup | None = None) -> ChatPlan:
    """The upstream request and parsing for ``payload`` on ``backend``; with ``engine`` (what the backend's
    ``constrain`` names, or what ``auto`` found) and ``tool_prompt``, decoding constrained to the prompted calls;
    with ``progress`` (the backend is llama.cpp's server), a streamed request asks for its prompt progress; with
    ``template`` (what the backend's chat template decides for this request), what the operator did not write is
    taken from it.

    Raises ValueError (``PromptError``) for a request the tool prompt cannot be written for.
    """
    if backend.system_messages == "fold" and isinstance(payload.get("messages"), list):
        payload = {**payload, "messages": fold_system(payload["messages"])}
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
    setup = template
    written = backend.written
    reasoning_open = opens_reasoning(payload, backend.reasoning_start) \
        if setup is None or "reasoning_start" in written else setup.start_in_reasoning
    response_open = (backend.response_start if setup is None or "response_start" in written
                     else setup.start_in_response) and not reasoning_open
    if setup is not None and options is not None:
        if setup.dialects is not None and backend.dialects is None and not backend.tool_prompt:
            options["dialects"] = list(setup.dialects)
        if setup.generation_prompt:
            options["generation_prompt"] = setup.generation_prompt  # (its last line may begin the answer's markup)
    asks = progress and upstream.get("stream") is True and "return_progress" not in upstream
    if asks:
        upstream["return_progress"] = True
    plan = ChatPlan(upstream, tools, options, unmet, retry, reasoning_open=reasoning_open,
                    response_open=response_open, progress=asks, template=setup)
    if engine is not None and backend.tool_prompt:
        _constrain(plan, payload, backend.tool_prompt, choice, engine)
    return plan


def thinking_asked(payload: Mapping[str, Any]) -> bool | None:
    """What a chat request says about thinking: True (on), False (off), None (nothing). Read, first to last:
    ``chat_template_kwargs.enable_thinking`` (Qwen3, GLM; the Anthropic front maps ``thinking`` to it) or
    ``.thinking`` (DeepSeek V3.1+), which the template itself sees; then ``reasoning_effort`` ("none" is off;
    the Responses front maps ``reasoning.effort`` to it)."""
    kwargs = payload.get("chat_template_kwargs")
    if isinstance(kwargs, Mapping):
        for key in ("enable_thinking", "thinking"):
            if isinstance(kwargs.get(key), bool):
                return bool(kwargs[key])
    effort = payload.get("reasoning_effort")
    return effort != "none" if isinstance(effort, str) else None


def opens_reasoning(payload: Mapping[str, Any], mode: str) -> bool:
    """Does the answer to ``payload`` start inside reasoning, on a backend whose ``reasoning_start`` is ``mode``?
    "open": always; "closed": never; "auto": unless the request turns thinking off (templates that think by
    default); "asked": only when the request turns it on (templates that think only when asked)."""
    if mode not in ("auto", "asked"):
        return mode == "open"
    asked = thinking_asked(payload)
    return asked if asked is not None else mode == "auto"


def _constrain(plan: ChatPlan, payload: Mapping[str, Any], dialect: str, choice: ToolChoice, engine: Engine) -> None:
    """Merge the constraint for ``dialect``'s calls into ``plan.upstream``, when one applies."""
    own = client_constraint(payload)
    if plan.options is None:
        plan.why_unconstrained = "nothing to parse (no tools, or tool_choice none)"
    elif own is not None:
        plan.why_unconstrained = f"the request sets {own!r} itself"
    else:
        try:
            constraint = build_constraint(dialect, plan.tools, tool_choice=choice, parallel_tool_calls=choice.parallel,
                                          backend=engine)
        except Exception as exc:  # noqa: BLE001 - a constraint never fails a request that works without one
            plan.why_unconstrained = f"no constraint could be built: {type(exc).__name__}: {exc}"
            return
        if constraint is None:
            plan.why_unconstrained = "no constraint applies"
            return
        plan.unconstrained = dict(plan.upstream)
        plan.upstream.update(constraint.request_fields())
        plan.constraint = constraint
