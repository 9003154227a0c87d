"""A model's chat template as parser options: the format, the start state and the generation prompt it decides.

Invariant: settings the caller gives itself always win (``decide_setup``: a ``dialects`` list, an explicit
``start_in_reasoning`` / ``start_in_response``); the template fills only what was not given. ``read_template``
never raises for a template's sake and is pure, so its results are cached per (template, kwargs, generation
prompt, tools given or not): a request after the first costs a dict lookup. jinja2 is imported only when a
template is read for the first time (``template_reading``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..dialects.spec import Dialect

__all__ = ["read_template", "decide_setup", "resolved_start"]

_CACHE: dict[tuple[Any, ...], Any] = {}
_CACHE_SIZE = 128


def _key(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def read_template(chat_template: str, *, kwargs: Mapping[str, Any] | None = None, generation_prompt: str | None = None,
                  tools: Sequence[Mapping[str, Any]] | None = None) -> Any:
    """What ``chat_template`` says about reading its model's answers, for these ``kwargs`` (the request's
    ``chat_template_kwargs``): a ``streamparse.templates.TemplateSetup``. ``generation_prompt``: the text the
    rendered prompt ended with, when known (it wins over rendering). ``tools``: the request's tools (the generation
    prompt is rendered with them, as a template may write it otherwise with tools; the setup is kept per template,
    kwargs, generation prompt and whether there are tools, so a later request with other tools is given the same). Never raises for a
    template's sake: a template that fails leaves auto-detection, and the notes say why."""
    key = (chat_template, _key(kwargs or {}), generation_prompt, bool(tools))
    found = _CACHE.get(key)
    if found is None:
        from .template_reading import decide  # jinja2 is loaded only when a template is read

        found = decide(chat_template, dict(kwargs or {}), generation_prompt, tools)
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()
        _CACHE[key] = found
    return found


def decide_setup(tools: Sequence[Mapping[str, Any]] | None, chat_template: str | None,
                 chat_template_kwargs: Mapping[str, Any] | None, generation_prompt: str | None,
                 dialects: Iterable[str | Dialect] | None, start_in_reasoning: bool | None,
                 start_in_response: bool | None
                 ) -> tuple[Iterable[str | Dialect] | None, bool | None, bool | None, str | None]:
    """The parser's ``(dialects, start_in_reasoning, start_in_response, generation_prompt)`` once the template
    (and the generation prompt) filled what the caller did not give."""
    if chat_template is not None:
        setup = read_template(chat_template, kwargs=chat_template_kwargs, generation_prompt=generation_prompt,
                              tools=tools)
        if dialects is None and setup.dialects is not None:
            dialects = list(setup.dialects)
        if start_in_reasoning is None:
            start_in_reasoning = setup.start_in_reasoning
        if start_in_response is None:
            start_in_response = setup.start_in_response
        if generation_prompt is None:
            generation_prompt = setup.generation_prompt or None
    elif generation_prompt is not None and (start_in_reasoning is None or start_in_response is None):
        from ..templates.turns import prompt_state

        state = prompt_state(generation_prompt)
        if start_in_reasoning is None:
            start_in_reasoning = state.reasoning
        if start_in_response is None:
            start_in_response = state.response
    return dialects, start_in_reasoning, start_in_response, generation_prompt


def resolved_start(options: Mapping[str, Any], tools: Sequence[Mapping[str, Any]] | None = None) -> bool:
    """Will a parser made with ``options`` start inside reasoning (the template's or generation prompt's say
    included)? What a wire layer asks before it knows whether its engine split the reasoning out itself."""
    if options.get("chat_template") is None and options.get("generation_prompt") is None:
        return bool(options.get("start_in_reasoning"))
    _, reasoning, _, _ = decide_setup(tools, options.get("chat_template"), options.get("chat_template_kwargs"),
                                      options.get("generation_prompt"), options.get("dialects"),
                                      options.get("start_in_reasoning"), options.get("start_in_response"))
    return bool(reasoning)
