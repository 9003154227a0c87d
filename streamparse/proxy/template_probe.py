"""Asking a serving engine for the chat template of the model it serves, and for the prompt it renders.

Where each engine tells (read in each engine's server code):

- llama.cpp: ``GET <root>/props`` gives ``chat_template`` (and ``chat_template_tool_use``, ``bos_token``,
  ``eos_token``, ``model_path``); ``POST <root>/apply-template`` renders a conversation (``prompt``).
- vLLM: ``GET <root>/tokenizer_info`` (served with ``--enable-tokenizer-info-endpoint``) gives the tokenizer's
  config with ``chat_template``; else its ``GET <base>/models`` entry's ``root`` (the model's folder or Hugging Face
  id) is read on this machine. ``POST <root>/tokenize`` (``messages``, ``add_generation_prompt``,
  ``chat_template_kwargs``) and ``POST <root>/detokenize`` render a conversation.
- SGLang: ``GET <root>/get_server_info`` (``chat_template``: a file given with ``--chat-template``) and
  ``GET <root>/get_model_info`` (``tokenizer_path``, ``model_path``), read on this machine. Its ``/tokenize``
  takes text, not messages, so it renders nothing.
- Ollama: ``POST <root>/api/show`` gives ``template``, a Go template (Ollama renders with it: it is not Jinja,
  the notes say so), ``capabilities``, and the modelfile whose ``FROM`` is the model's GGUF, whose metadata holds
  the Jinja template; read on this machine.
- LM Studio (``GET <root>/api/v0/models`` answers): no template over HTTP; the notes say to give the path.
- MLX (``mlx_lm.server``) and any other server: the served model's id, when it is an absolute path or a Hugging
  Face id in this machine's hub cache.

Invariants: each request waits at most ``PROBE_TIMEOUT`` and reads at most ``MAX_BODY`` bytes; a failure is a
``Found`` without a source saying why (or ``None`` for a rendering), never an exception; nothing here keeps state.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlencode
from dataclasses import dataclass, field
from typing import Any, Mapping

import anyio
import httpx

from ..templates.sources import TemplateSource, TemplateSourceError, model_folder, read_template_source
from .config import Backend
from .engines import server_root

__all__ = ["Found", "ask_template", "render_generation_prompt", "PROBE_TIMEOUT", "MAX_BODY", "PROBE_MARK"]

PROBE_TIMEOUT = 3.0  # seconds one request to the engine may take
MAX_BODY = 8 << 20  # bytes of one answer read (a /props with its template is a few KB)
MAX_ERROR_BODY = 64 << 10  # bytes of a refusal read (to its end, so its connection is used again)
PROBE_MARK = "streamparse-template-probe"  # the user message of a rendered probe conversation
_FROM = re.compile(r"^FROM\s+(\S.*?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Found:
    """What a backend told about the template of one model it serves."""

    source: TemplateSource | None  # the template (None: none was found)
    how: str  # what answered (or, without a source, why there is none)
    engine: str | None = None  # "llamacpp", "vllm", "sglang", "ollama", "lmstudio", or None
    identity: str | None = None  # what the backend serves (its model path or id): another one means another template
    renders: str | None = None  # how the engine renders a prompt: "apply-template" (llama.cpp), "tokenize" (vLLM)
    notes: tuple[str, ...] = field(default_factory=tuple)
    answered: bool = True  # did anything answer at all (False: ask again later)


class _Asker:
    """Bounded requests to one backend, each answer a JSON value or the reason there is none."""

    def __init__(self, client: httpx.AsyncClient, backend: Backend, headers: Mapping[str, str]):
        self.client, self.backend, self.headers = client, backend, dict(headers)
        self.root = server_root(backend.upstream)
        self.limit = min(PROBE_TIMEOUT, backend.connect_timeout, backend.read_timeout)
        self.seen: list[str] = []
        self.answered = False

    async def json(self, method: str, url: str, body: Any = None) -> Any:
        """The JSON a 200 answer holds; None (and a line in ``seen``) otherwise."""
        label = f"{method} {url[len(self.root):].partition('?')[0] or '/'}"
        try:
            with anyio.fail_after(self.limit + 1):
                async with self.client.stream(method, url, headers=self.headers, json=body,
                                              timeout=httpx.Timeout(self.limit)) as resp:
                    self.answered = True
                    data = bytearray()
                    async for piece in resp.aiter_bytes():  # (read to its end: the connection is used again)
                        data += piece
                        if len(data) > (MAX_BODY if resp.status_code == 200 else MAX_ERROR_BODY):
                            self.seen.append(f"{label}: {resp.status_code}, an answer too large")
                            return None
                    if resp.status_code != 200:
                        self.seen.append(f"{label}: {resp.status_code}")
                        return None
        except (httpx.HTTPError, TimeoutError) as exc:
            self.seen.append(f"{label}: {type(exc).__name__}")
            return None
        try:
            return json.loads(bytes(data))
        except (ValueError, RecursionError):
            self.seen.append(f"{label}: not JSON")
            return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


async def ask_template(client: httpx.AsyncClient, backend: Backend, model: str | None,
                       headers: Mapping[str, str]) -> Found:
    """Ask ``backend`` for the template of ``model`` (the upstream's name; None: the one it serves by default)."""
    ask = _Asker(client, backend, headers)
    query = "?" + urlencode({"model": model}) if model else ""  # (llama-server's router mode: the model's own)
    props = await ask.json("GET", f"{ask.root}/props{query}")
    if isinstance(props, dict) and _text(props.get("chat_template")):
        return _from_props(props)
    listing = await ask.json("GET", f"{backend.upstream}/models")
    entries = [e for e in listing.get("data", []) if isinstance(e, dict)] \
        if isinstance(listing, dict) and isinstance(listing.get("data"), list) else []
    entry = next((e for e in entries if e.get("id") == model), entries[0] if entries else {})
    owner = entry.get("owned_by")
    notes: list[str] = []
    if owner == "vllm":
        found = await _vllm(ask, entry, notes)
    elif owner == "sglang":
        found = await _sglang(ask, notes)
    else:
        found = await _ollama(ask, model or _text(entry.get("id")), notes)
        if found is None and await ask.json("GET", f"{ask.root}/api/v0/models") is not None:
            notes.append("LM Studio gives no chat template over HTTP: give the model file's path in chat_template")
            found = Found(None, "LM Studio (GET /api/v0/models)", "lmstudio", notes=tuple(notes))
        if found is None:
            found = _local(model or _text(entry.get("id")), "the served model's files", None, notes)
    if found is not None:
        return found
    why = ", ".join(ask.seen) or "nothing answered"
    return Found(None, why, notes=tuple(notes), answered=ask.answered)


def _from_props(props: Mapping[str, Any]) -> Found:
    """llama.cpp's ``/props``: the template (and the tool-use one), its turn tokens and the model file."""
    named = {"default": props["chat_template"]}
    if _text(props.get("chat_template_tool_use")):
        named["tool_use"] = props["chat_template_tool_use"]
    eos, bos = _text(props.get("eos_token")), _text(props.get("bos_token"))
    path, alias = _text(props.get("model_path")), _text(props.get("model_alias"))
    source = TemplateSource(named["default"], "GET /props: chat_template", named, bos, eos, (eos,) if eos else (),
                            alias or path)
    build = _text(props.get("build_info"))
    return Found(source, "GET /props" + (f" (llama.cpp {build})" if build else ""), "llamacpp",
                 path or alias, "apply-template")


def _local(name: str | None, what: str, engine: str | None, notes: list[str], renders: str | None = None,
           how: str | None = None) -> Found | None:
    """The template in the files of the model ``name`` on this machine (a path, or a Hugging Face id in the hub
    cache), or None (with a note) when they are not here or hold none."""
    if not name:
        return None
    folder = model_folder(name)
    if folder is None:
        notes.append(f"{what} ({name!r}) are not on this machine")
        return None
    try:
        source = read_template_source(folder)
    except TemplateSourceError as exc:
        notes.append(str(exc))
        return None
    return Found(source, how or f"{what} ({name})", engine, name, renders, tuple(notes))


async def _vllm(ask: _Asker, entry: Mapping[str, Any], notes: list[str]) -> Found | None:
    info = await ask.json("GET", f"{ask.root}/tokenizer_info")
    if isinstance(info, dict) and _text(info.get("chat_template")):
        eos, bos = _token(info.get("eos_token")), _token(info.get("bos_token"))
        source = TemplateSource(info["chat_template"], "GET /tokenizer_info: chat_template",
                                {"default": info["chat_template"]}, bos, eos, (eos,) if eos else ())
        return Found(source, "GET /tokenizer_info (vLLM)", "vllm", _text(entry.get("root")) or _text(entry.get("id")),
                     "tokenize", tuple(notes))
    root = _text(entry.get("root")) or _text(entry.get("id"))
    found = _local(root, "vLLM's model files", "vllm", notes, "tokenize", f"vLLM serves {root}: read on this machine")
    if found is None:
        notes.append("start vLLM with --enable-tokenizer-info-endpoint, or give the template's path in chat_template")
        return Found(None, "vLLM (GET /models), no template reachable", "vllm", root, "tokenize", tuple(notes))
    return found


async def _sglang(ask: _Asker, notes: list[str]) -> Found | None:
    server = await ask.json("GET", f"{ask.root}/get_server_info")
    given = _text(server.get("chat_template")) if isinstance(server, dict) else None
    if given and given.startswith("/"):
        found = _local(given, "SGLang's --chat-template file", "sglang", notes)
        if found is not None:
            return found
    info = await ask.json("GET", f"{ask.root}/get_model_info")
    paths = [_text(info.get(k)) for k in ("tokenizer_path", "model_path")] if isinstance(info, dict) else []
    for path in dict.fromkeys(p for p in paths if p):
        found = _local(path, "SGLang's model files", "sglang", notes)
        if found is not None:
            return found
    notes.append("give the template's path in chat_template (SGLang's /tokenize renders no conversation)")
    return Found(None, "SGLang, no template reachable", "sglang", paths[0] if paths else None, notes=tuple(notes))


async def _ollama(ask: _Asker, model: str | None, notes: list[str]) -> Found | None:
    if not model:
        return None
    shown = await ask.json("POST", f"{ask.root}/api/show", {"model": model})
    if not isinstance(shown, dict) or not ("template" in shown or "modelfile" in shown):
        return None
    notes.append("Ollama renders its own template (a Go template, not Jinja); the Jinja one in the model's GGUF "
                 "tells the format the model writes")
    capabilities = shown.get("capabilities")
    if isinstance(capabilities, list):
        notes.append("capabilities: " + ", ".join(str(c) for c in capabilities[:16]))
    match = _FROM.search(shown.get("modelfile") or "") if isinstance(shown.get("modelfile"), str) else None
    blob = match.group(1) if match else None
    found = _local(blob, "the model's GGUF", "ollama", notes, how=f"POST /api/show (Ollama): {blob}") \
        if blob and blob.startswith("/") else None
    if found is None:
        notes.append("give the model's GGUF (ollama show --modelfile names it) in chat_template")
        return Found(None, "POST /api/show (Ollama), no Jinja template reachable", "ollama", blob or model,
                     notes=tuple(notes))
    return found


def _token(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("content")
    return _text(value)


async def render_generation_prompt(client: httpx.AsyncClient, backend: Backend, found: Found, model: str | None,
                                   fields: Mapping[str, Any], headers: Mapping[str, str]) -> str | None:
    """The text the engine's prompt ends with when it opens the answer: its rendering of one user message with
    ``add_generation_prompt`` beyond the same without it, with the request's template ``fields``
    (``chat_template_kwargs``, ``reasoning_effort``). None when the engine renders nothing, or the two renderings
    do not differ by an ending: then the library renders the template itself."""
    if found.renders is None:
        return None
    ask = _Asker(client, backend, headers)
    messages = [{"role": "user", "content": PROBE_MARK}]
    named = {"model": model} if model else {}
    texts = []
    for opens in (True, False):
        body = {**named, "messages": messages, "add_generation_prompt": opens, **fields}
        if found.renders == "apply-template":
            answer = await ask.json("POST", f"{ask.root}/apply-template", body)
            text = answer.get("prompt") if isinstance(answer, dict) else None
        else:
            body.pop("reasoning_effort", None)  # (vLLM's /tokenize has no such field)
            tokens = await ask.json("POST", f"{ask.root}/tokenize", body)
            ids = tokens.get("tokens") if isinstance(tokens, dict) else None
            text = None
            if isinstance(ids, list) and all(isinstance(i, int) for i in ids):
                answer = await ask.json("POST", f"{ask.root}/detokenize", {**named, "tokens": ids})
                text = answer.get("prompt") if isinstance(answer, dict) else None
        if not isinstance(text, str):
            return None
        texts.append(text)
    opened, closed = texts
    written = opened[len(closed):] if opened.startswith(closed) and PROBE_MARK in closed else ""
    return written or None  # (none: a template that writes it either way, Command R7B's, is left to rendering)
