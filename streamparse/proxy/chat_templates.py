"""Each backend's chat template (``chat_template``): found once, kept, and handed to each request with what the
request makes of it.

- ``"auto"`` (the default): the backend is asked (``template_probe``) at its first chat request, per model it
  serves, and the answer is kept (a proxy nobody uses asks nothing). A kept answer is used at once; once it is ``REFRESH_AFTER`` seconds old, the next
  request asks again, and a new model (another path or id, or another template) replaces it. A backend that did not
  answer is asked again ``RETRY_AFTER`` seconds later; meanwhile its requests go without a template.
- a path (a ``.jinja`` file, a model folder, a GGUF file): read when the proxy starts (``templates.sources``);
  the backend is never asked.
- ``"off"``: no template; auto-detection as before.

What a request makes of it (``template_fields``): its ``chat_template_kwargs`` and ``reasoning_effort``, which the
Anthropic front fills from ``thinking`` and the Responses front from ``reasoning``; the kwargs the template renders
with (``template_kwargs``, as llama.cpp maps them); and, where the engine renders prompts (llama.cpp, vLLM), the
generation prompt it renders for those fields, asked once per distinct fields and kept.

Invariants: no request waits longer than ``PROBE_BUDGET`` for an answer about the template (one waits at first use,
or when a failed backend is due again; the others use what is kept, or nothing); a failure is a state, never an
exception; at most ``MAX_MODELS`` models per backend and ``MAX_PROMPTS`` generation prompts per model are kept
(least recently used first out); each template found is logged once per backend, and so is a backend where none
is found (with how to give one); ``detail`` shows what is known (for ``/readyz``) without the template's text.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import anyio
import httpx

from ..templates import TemplateSetup
from ..templates.sources import TemplateSource, TemplateSourceError, read_template_source
from .checks import ConfigError
from .config import Backend
from .template_probe import Found, ask_template, render_generation_prompt

__all__ = ["ChatTemplates", "RequestTemplate", "template_fields", "template_kwargs", "decision", "RETRY_AFTER",
           "REFRESH_AFTER", "PROBE_BUDGET", "MAX_MODELS", "MAX_PROMPTS", "MAX_SETUPS", "HOW_TO_GIVE"]

log = logging.getLogger("streamparse.server")
RETRY_AFTER = 30.0  # seconds before a backend that did not answer is asked again
REFRESH_AFTER = 60.0  # seconds a found template is used before the backend is asked whether it still serves it
PROBE_BUDGET = 8.0  # seconds one search for a template (or one generation prompt) may take in all
MAX_MODELS = 16  # models remembered per backend
MAX_PROMPTS = 32  # generation prompts remembered per model (one per distinct chat_template_kwargs / effort)
MAX_SETUPS = 256  # what templates decided, per template, kwargs, generation prompt and tools offered or not
# A first reading costs up to a few hundred ms of CPU: at most this many in any minute (each in turn, one thread);
# past it, a request whose kwargs were never read is read as with no kwargs (one reading kept), and the log says so.
MAX_READS_PER_MINUTE = 30
HOW_TO_GIVE = ("give it as chat_template = \"/path/to/model.gguf\" (or a .jinja file, or the model's folder) in "
               "the backend's config, or serve --chat-template PATH")


def template_fields(payload: Mapping[str, Any]) -> dict[str, Any]:
    """What of a chat request its backend hands the chat template: ``chat_template_kwargs`` (an object) and
    ``reasoning_effort`` (a string), as the request sets them."""
    fields: dict[str, Any] = {}
    kwargs = payload.get("chat_template_kwargs")
    if isinstance(kwargs, Mapping) and kwargs:
        fields["chat_template_kwargs"] = dict(kwargs)
    if isinstance(payload.get("reasoning_effort"), str):
        fields["reasoning_effort"] = payload["reasoning_effort"]
    return fields


def template_kwargs(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The variables a template renders with for these request ``fields``, as llama.cpp's server sets them:
    ``reasoning_effort`` ``"none"`` turns thinking off (``enable_thinking: false``), another effort is passed on as
    ``reasoning_effort``; ``chat_template_kwargs`` are passed on as they are, and win."""
    kwargs: dict[str, Any] = {}
    effort = fields.get("reasoning_effort")
    if effort == "none":
        kwargs["enable_thinking"] = False
    elif isinstance(effort, str) and effort:
        kwargs["reasoning_effort"] = effort
    given = fields.get("chat_template_kwargs")
    if isinstance(given, Mapping):
        kwargs.update({k: v for k, v in given.items() if isinstance(k, str)})
    return kwargs


@dataclass(frozen=True)
class RequestTemplate:
    """The template one request renders with, and what it renders with."""

    template: str  # Jinja text (the tool-use template when the request offers tools and the model has one)
    kwargs: dict[str, Any]  # template_kwargs of the request
    generation_prompt: str | None  # what the engine's own prompt ends with for these kwargs (None: not asked)
    source: TemplateSource
    how: str  # where it came from (for logs and diagnostics)


class _Entry:
    """What one backend told about one model, and the generation prompts it rendered."""

    def __init__(self, found: Found):
        self.found = found
        self.at = time.monotonic()
        self.prompts: OrderedDict[str, str | None] = OrderedDict()
        self.lock = anyio.Lock()
        self.refreshing = False

    @property
    def key(self) -> str:
        """Another key: another model or template."""
        return f"{self.found.identity}|{_digest(self.found.source.template if self.found.source else '')}"


class ChatTemplates:
    """The chat template of each backend's models: asked, read from a path, or off (see the module docstring)."""

    def __init__(self, client: httpx.AsyncClient, backends: list[Backend], clean: Callable[[str], str] = str):
        """``clean``: a log line as it may be written (secrets masked). Raises ConfigError for a path that does not
        hold a template."""
        self.client = client
        self.clean = clean
        self._read: dict[str, Found] = {}  # backend -> the template read from its path
        self._models: dict[str, OrderedDict[str | None, _Entry]] = {b.name: OrderedDict() for b in backends}
        self._failed: dict[tuple[str, str | None], tuple[float, Found]] = {}
        self._locks: dict[tuple[str, str | None], anyio.Lock] = {}
        self._logged: set[tuple[str, str]] = set()
        self._settings = {b.name: b.chat_template for b in backends}
        self._decided: dict[str, dict[str, Any]] = {}  # template hash -> what the library reads from it (decision)
        self._setups: OrderedDict[tuple[str, str, str | None, bool], TemplateSetup] = OrderedDict()  # (setup_for)
        self._reads: list[float] = []  # when the last readings began (setup_for: MAX_READS_PER_MINUTE)
        self._reading = anyio.CapacityLimiter(1)  # one reading at a time: requests never take every worker thread
        self._said_busy = False
        for backend in backends:
            if backend.chat_template not in ("auto", "off"):
                self._read[backend.name] = self._load(backend)

    def _load(self, backend: Backend) -> Found:
        try:
            source = read_template_source(backend.chat_template)
        except TemplateSourceError as exc:
            raise ConfigError(f"backend {backend.name!r}: chat_template: {exc}") from None
        found = Found(source, f"chat_template = {os.path.basename(backend.chat_template.rstrip('/'))!r} "
                              f"({source.origin})", identity=backend.chat_template)
        self._decided[_digest(source.template)] = decision(source)  # (at start-up: no request waits)
        self._say_found(backend, found)
        return found

    async def for_request(self, backend: Backend, payload: Mapping[str, Any],
                          headers: Mapping[str, str] | None = None) -> RequestTemplate | None:
        """The template ``payload`` renders with on ``backend`` (None: off, or none found); ``headers``: the
        credentials its probes present (the forwarded request's)."""
        if backend.chat_template == "off":
            return None
        model = backend.upstream_model(payload.get("model"))
        model = model if isinstance(model, str) and model else None
        fields = template_fields(payload)
        kwargs = template_kwargs(fields)
        found = self._read.get(backend.name)
        prompt = None
        if found is None:
            entry = await self._entry(backend, model, dict(headers or {}))
            if entry is None:
                return None
            found = entry.found
            prompt = await self._prompt(backend, entry, model, fields, dict(headers or {}))
        assert found.source is not None
        template = found.source.for_tools(bool(payload.get("tools")))
        return RequestTemplate(template, kwargs, prompt, found.source, found.how)

    async def _entry(self, backend: Backend, model: str | None, headers: dict[str, str]) -> _Entry | None:
        """The kept answer for ``model`` on ``backend`` (asked first when there is none, or refreshed when it is
        old); None when nothing is known."""
        models = self._models.setdefault(backend.name, OrderedDict())
        entry = models.get(model)
        if entry is not None:
            models.move_to_end(model)
            if time.monotonic() - entry.at >= REFRESH_AFTER and not entry.refreshing:
                await self._refresh(backend, model, entry, headers)
            entry = models.get(model)
            return entry if entry is not None and entry.found.source is not None else None
        failed = self._failed.get((backend.name, model))
        if failed and time.monotonic() - failed[0] < (RETRY_AFTER if not failed[1].answered else REFRESH_AFTER):
            return None
        lock = self._locks.setdefault((backend.name, model), anyio.Lock())
        async with lock:
            if model in models:
                return await self._entry(backend, model, headers)
            found = await self._ask(backend, model, headers)
            if found.source is None:
                self._failed[(backend.name, model)] = (time.monotonic(), found)
                self._say_missing(backend, model, found)
                return None
            self._failed.pop((backend.name, model), None)
            entry = self._share(models, _Entry(found))
            self._keep(models, model, entry)
            await self._decide(found)
            self._say_found(backend, found)
            return entry

    async def _ask(self, backend: Backend, model: str | None, headers: dict[str, str]) -> Found:
        try:
            with anyio.move_on_after(PROBE_BUDGET):
                return await ask_template(self.client, backend, model, headers)
        except Exception as exc:  # noqa: BLE001 - an answer nothing here foresaw is a state, never a failed request
            log.exception("backend %r: asking for the chat template failed", backend.name)
            return Found(None, f"the answer could not be read ({type(exc).__name__})")
        return Found(None, f"no answer within {PROBE_BUDGET:.0f} s", answered=False)

    async def _refresh(self, backend: Backend, model: str | None, entry: _Entry, headers: dict[str, str]) -> None:
        """Ask again: the same model and template keep the entry (and its generation prompts); another replaces it;
        no answer keeps the old one for another while."""
        entry.refreshing = True
        try:
            found = await self._ask(backend, model, headers)
        finally:
            entry.refreshing = False
        entry.at = time.monotonic()
        if found.source is None:
            if found.answered:  # the backend answered, and serves no template now
                self._models[backend.name].pop(model, None)
                self._failed[(backend.name, model)] = (time.monotonic(), found)
                self._say_missing(backend, model, found)
            return
        fresh = _Entry(found)
        if fresh.key != entry.key:
            self._keep(self._models[backend.name], model, self._share(self._models[backend.name], fresh))
            await self._decide(found)
            self._say_found(backend, found, changed=True)

    @staticmethod
    def _share(models: OrderedDict[str | None, _Entry], entry: _Entry) -> _Entry:
        """The entry another model name already holds for the same model and template, else ``entry``."""
        return next((e for e in models.values() if e.key == entry.key), entry)

    @staticmethod
    def _keep(models: OrderedDict[str | None, _Entry], model: str | None, entry: _Entry) -> None:
        models[model] = entry
        models.move_to_end(model)
        while len(models) > MAX_MODELS:
            models.popitem(last=False)

    async def _prompt(self, backend: Backend, entry: _Entry, model: str | None, fields: dict[str, Any],
                      headers: dict[str, str]) -> str | None:
        """The engine's generation prompt for these request ``fields`` (asked once per distinct fields)."""
        if entry.found.renders is None:
            return None
        key = json.dumps(fields, sort_keys=True, default=str)
        if key in entry.prompts:
            entry.prompts.move_to_end(key)
            return entry.prompts[key]
        async with entry.lock:
            if key not in entry.prompts:
                prompt = None
                try:
                    with anyio.move_on_after(PROBE_BUDGET):
                        prompt = await render_generation_prompt(self.client, backend, entry.found, model, fields,
                                                                headers)
                except Exception:  # noqa: BLE001 - (as in _ask)
                    log.exception("backend %r: asking for a generation prompt failed", backend.name)
                entry.prompts[key] = prompt
                while len(entry.prompts) > MAX_PROMPTS:
                    entry.prompts.popitem(last=False)
                log.debug("backend %r: the engine's generation prompt for %s: %r", backend.name, key or "{}",
                          prompt if prompt is None else self.clean(prompt))
            return entry.prompts[key]

    async def _decide(self, found: Found) -> None:
        """What the library reads from a new template, worked out once in a worker thread (a first reading takes
        up to a few hundred ms), for the log and ``detail``."""
        assert found.source is not None
        digest = _digest(found.source.template)
        if digest not in self._decided:
            try:
                self._decided[digest] = await anyio.to_thread.run_sync(decision, found.source)
            except Exception as exc:  # noqa: BLE001 - the log and /readyz say so; requests go on without it
                log.exception("reading a chat template failed")
                self._decided[digest] = {"format": None, "derived": False, "start": "as text",
                                         "notes": [f"the template could not be read ({type(exc).__name__})"]}

    async def setup_for(self, template: RequestTemplate, tools: Any) -> TemplateSetup | None:
        """What ``template`` decides for its request (``core.chat_template.read_template``): read in a worker thread
        the first time for these kwargs and generation prompt, then kept (``MAX_SETUPS``). None (and the log says
        why) if it could not be read: the request goes on as without a template."""
        from ..core.chat_template import read_template

        key = (template.template, json.dumps(template.kwargs, sort_keys=True, default=str), template.generation_prompt,
               bool(tools))  # (the template's own text: a string keeps its hash, so no digest per request)
        kept = self._setups.get(key)
        if kept is not None:
            self._setups.move_to_end(key)
            return kept
        now = time.monotonic()
        self._reads = [t for t in self._reads if now - t < 60]
        if len(self._reads) >= MAX_READS_PER_MINUTE and (template.kwargs or template.generation_prompt):
            if not self._said_busy:
                self._said_busy = True
                log.warning("more than %d chat-template readings in a minute (new chat_template_kwargs on every "
                            "request?): further new kwargs are read as no kwargs until the minute passes",
                            MAX_READS_PER_MINUTE)
            return await self.setup_for(dataclasses.replace(template, kwargs={}, generation_prompt=None), tools)
        self._reads.append(now)
        try:
            setup: TemplateSetup = await anyio.to_thread.run_sync(functools.partial(
                read_template, template.template, kwargs=template.kwargs,
                generation_prompt=template.generation_prompt, tools=tools if tools else None), limiter=self._reading)
        except Exception:  # noqa: BLE001 - (read_template never raises for a template's sake; this is the rest)
            log.exception("reading the chat template for a request failed; the request goes on without it")
            return None
        self._setups[key] = setup
        while len(self._setups) > MAX_SETUPS:
            self._setups.popitem(last=False)
        return setup

    def _say_found(self, backend: Backend, found: Found, changed: bool = False) -> None:
        source = found.source
        assert source is not None
        mark = (backend.name, _Entry(found).key)
        if mark in self._logged:
            return
        self._logged.add(mark)
        named = ", ".join(n for n in source.named if n != "default")
        said = [f"{len(source.template):,} characters" + (f", also {named}" if named else "")]
        if source.stop_tokens:
            said.append("stop tokens " + " ".join(source.stop_tokens))
        decided = self._decided.get(_digest(source.template)) or decision(source)
        said.append(f"reads as {decided['format'] or 'auto-detection (no format decided)'}"
                    + (" (a format derived from the template)" if decided["derived"] else "")
                    + f"; answers start {decided['start']} (without kwargs)")
        said += list(found.notes) + list(decided["notes"])
        log.info("backend %r: %schat template from %s: %s", backend.name, "a new " if changed else "",
                 self.clean(found.how), self.clean("; ".join(said)))

    def _say_missing(self, backend: Backend, model: str | None, found: Found) -> None:
        mark = (backend.name, "missing" if found.answered else "silent")
        if mark in self._logged:  # (once per backend: a backend serving many models is told about once)
            log.debug("backend %r: no chat template for model %r either (%s)", backend.name, model,
                      self.clean(found.how))
            return
        self._logged.add(mark)
        if not found.answered:
            log.warning("backend %r: chat_template = \"auto\": the upstream did not answer (%s); asking again in "
                        "%.0f s, and parsing as before until then", backend.name, self.clean(found.how), RETRY_AFTER)
            return
        then = f"asking again in {REFRESH_AFTER:.0f} s"
        notes = "; ".join(found.notes)
        log.warning("backend %r: no chat template found%s (%s%s); parsing goes on as before (auto-detection, or "
                    "the dialect configured); %s; to use the model's own template, %s", backend.name,
                    f" for model {model!r}" if model else "", self.clean(found.how),
                    f"; {self.clean(notes)}" if notes else "", then, HOW_TO_GIVE)

    def detail(self) -> dict[str, Any]:
        """Each backend's template as ``/readyz`` shows it, for the backends where something is known (a path, a
        template found, or none found): where from, for which model, its size and hash, the stop tokens, what it
        decided and the notes; or why there is none. Never the template's text."""
        page: dict[str, Any] = {}
        for name, models in self._models.items():
            read = self._read.get(name)
            if read is not None:
                page[name] = {"setting": "path", **self._shown(read)}
                continue
            found = {str(model): self._shown(entry.found) for model, entry in models.items()}
            missing = {str(model): {"found": False, "why": f.how, "notes": list(f.notes)}
                       for (backend, model), (_, f) in self._failed.items() if backend == name}
            if found or missing:
                page[name] = {"setting": "auto", "models": {**missing, **found}}
        return page

    def _shown(self, found: Found) -> dict[str, Any]:
        source = found.source
        assert source is not None
        decided = self._decided.get(_digest(source.template))
        return {"found": True, "from": found.how, "engine": found.engine, "model": source.model,
                "characters": len(source.template), "sha256": _digest(source.template), "named": list(source.named),
                "stop_tokens": list(source.stop_tokens), "notes": list(found.notes),
                **({"decided": {k: decided[k] for k in ("format", "derived", "start")}} if decided else {})}


def decision(source: TemplateSource) -> dict[str, Any]:
    """What the library reads from ``source`` for a request with tools and no kwargs: the format (and whether it
    was derived from the template), where answers start, and its notes (``core.chat_template.read_template``,
    which never raises for a template's sake)."""
    from ..core.chat_template import read_template

    setup = read_template(source.for_tools(True), kwargs={}, tools=[_PROBE_TOOL])
    start = "in reasoning" if setup.start_in_reasoning else "in a response channel" if setup.start_in_response \
        else "as text"
    return {"format": setup.format_name, "derived": setup.derived is not None, "start": start,
            "notes": list(setup.notes)}


_PROBE_TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]
