"""Scripted serving engines for the chat-template tests: loopback servers that answer the endpoints each engine's
own server has for its template (llama.cpp ``/props`` and ``/apply-template``; vLLM ``/tokenizer_info``,
``/tokenize`` and ``/detokenize``; SGLang ``/get_server_info`` and ``/get_model_info``; Ollama ``/api/show``; LM
Studio ``/api/v0/models``), in those servers' shapes, plus ``/v1/models`` and a chat endpoint that streams scripted
answers. Prompts are rendered from the REAL template given, in jinja2's sandbox with the globals transformers
gives a template (``raise_exception``, ``strftime_now``, ``tojson``); vLLM's "tokens" are the prompt's code points,
so ``/detokenize`` gives back exactly the rendered text. Every request is recorded (``hits``)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from datetime import datetime
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from streamparse.harness.replay import completion_chunks, sse_frames

ENGINES = ("llamacpp", "vllm", "sglang", "ollama", "lmstudio", "plain")


def render(template: str, messages: list[dict[str, Any]], *, add_generation_prompt: bool,
           kwargs: dict[str, Any] | None = None, tools: list[Any] | None = None) -> str:
    """A template rendered as transformers renders it (sandboxed jinja2, trim_blocks, lstrip_blocks)."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = lambda v, indent=None, ensure_ascii=False, separators=None, sort_keys=False: json.dumps(
        v, indent=indent, ensure_ascii=ensure_ascii, separators=separators, sort_keys=sort_keys)
    env.globals.update(raise_exception=raise_exception, strftime_now=lambda f: datetime(2026, 1, 15).strftime(f))
    context = {"messages": messages, "add_generation_prompt": add_generation_prompt, "tools": tools,
               "bos_token": "", "eos_token": "", **(kwargs or {})}
    return env.from_string(template).render(**context)


class ScriptedEngine:
    """One engine's template endpoints over a real template (see the module docstring). ``template`` may be
    changed while it runs (another model loaded); ``answer`` is what its chat endpoint streams."""

    def __init__(self, kind: str, template: str | None = None, *, model: str = "served-model",
                 root: str | None = None, blob: str | None = None, server_template: str | None = None,
                 tokenizer_info: bool = False, tool_use: str | None = None, eos: str = "<|im_end|>",
                 answer: str = "Hello."):
        assert kind in ENGINES, kind
        self.kind, self.template, self.model, self.root, self.blob = kind, template, model, root, blob
        self.server_template, self.tokenizer_info, self.tool_use, self.eos = server_template, tokenizer_info, tool_use, eos
        self.answer = answer
        self.lock = threading.Lock()
        self.hits: Counter[str] = Counter()
        self.bodies: list[tuple[str, Any]] = []
        self.chats: list[dict[str, Any]] = []

    def _record(self, request: Request, body: Any = None) -> None:
        with self.lock:
            self.hits[f"{request.method} {request.url.path}"] += 1
            self.bodies.append((request.url.path, body))

    def app(self) -> Starlette:
        routes = [Route("/v1/models", self.models, methods=["GET"]),
                  Route("/v1/chat/completions", self.chat, methods=["POST"])]
        if self.kind == "llamacpp":
            routes += [Route("/props", self.props, methods=["GET"]),
                       Route("/apply-template", self.apply_template, methods=["POST"])]
        elif self.kind == "vllm":
            routes += [Route("/tokenize", self.tokenize, methods=["POST"]),
                       Route("/detokenize", self.detokenize, methods=["POST"])]
            if self.tokenizer_info:
                routes.append(Route("/tokenizer_info", self.info, methods=["GET"]))
        elif self.kind == "sglang":
            routes += [Route("/get_server_info", self.server_info, methods=["GET"]),
                       Route("/get_model_info", self.model_info, methods=["GET"])]
        elif self.kind == "ollama":
            routes.append(Route("/api/show", self.show, methods=["POST"]))
        elif self.kind == "lmstudio":
            routes.append(Route("/api/v0/models", self.lmstudio_models, methods=["GET"]))
        return Starlette(routes=routes)

    # -- every engine ---------------------------------------------------------------------------------------------

    async def models(self, request: Request) -> Response:
        self._record(request)
        owner = {"llamacpp": "llamacpp", "vllm": "vllm", "sglang": "sglang", "ollama": "library",
                 "lmstudio": "organization_owner", "plain": "someone"}[self.kind]
        entry = {"id": self.model, "object": "model", "created": 1, "owned_by": owner}
        if self.kind == "vllm":
            entry["root"] = self.root or self.model
        return JSONResponse({"object": "list", "data": [entry]})

    async def chat(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self._record(request, body)
        with self.lock:
            self.chats.append(body)
        if not body.get("stream"):
            return JSONResponse({"id": "c1", "object": "chat.completion", "created": 1, "model": self.model,
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": self.answer}}]})
        return StreamingResponse(sse_frames(completion_chunks([self.answer], self.model)),
                                 media_type="text/event-stream")

    def _prompt(self, body: dict[str, Any]) -> str:
        kwargs = dict(body.get("chat_template_kwargs") or {})
        effort = body.get("reasoning_effort")
        if effort == "none":
            kwargs["enable_thinking"] = False
        elif isinstance(effort, str):
            kwargs["reasoning_effort"] = effort
        template = self.tool_use if body.get("tools") and self.tool_use else self.template
        assert template is not None
        return render(template, body["messages"], add_generation_prompt=body.get("add_generation_prompt", True),
                      kwargs=kwargs, tools=body.get("tools"))

    # -- llama.cpp ------------------------------------------------------------------------------------------------

    async def props(self, request: Request) -> Response:
        self._record(request, dict(request.query_params))
        page: dict[str, Any] = {"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1,
                                "model_alias": self.model, "model_path": f"/models/{self.model}.gguf",
                                "chat_template": self.template or "", "bos_token": "", "eos_token": self.eos,
                                "build_info": "b11434-515e855"}
        if self.tool_use:
            page["chat_template_tool_use"] = self.tool_use
        return JSONResponse(page)

    async def apply_template(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self._record(request, body)
        return JSONResponse({"prompt": self._prompt(body)})

    # -- vLLM -----------------------------------------------------------------------------------------------------

    async def info(self, request: Request) -> Response:
        self._record(request)
        return JSONResponse({"tokenizer_class": "Qwen2TokenizerFast", "eos_token": self.eos,
                             "chat_template": self.template})

    async def tokenize(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self._record(request, body)
        if body.get("model") not in (None, self.model):
            return JSONResponse({"error": {"message": "The model does not exist.", "code": 404}}, status_code=404)
        ids = [ord(c) for c in self._prompt(body)]
        return JSONResponse({"count": len(ids), "max_model_len": 4096, "tokens": ids, "token_strs": None})

    async def detokenize(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self._record(request, body)
        return JSONResponse({"prompt": "".join(chr(i) for i in body["tokens"])})

    # -- SGLang ---------------------------------------------------------------------------------------------------

    async def server_info(self, request: Request) -> Response:
        self._record(request)
        return JSONResponse({"model_path": self.root, "tokenizer_path": self.root, "tp_size": 1,
                             "chat_template": self.server_template, "version": "0.5.23"})

    async def model_info(self, request: Request) -> Response:
        self._record(request)
        return JSONResponse({"model_path": self.root, "tokenizer_path": self.root, "is_generation": True})

    # -- Ollama, LM Studio ----------------------------------------------------------------------------------------

    async def show(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self._record(request, body)
        if body.get("model") != self.model:
            return JSONResponse({"error": f"model '{body.get('model')}' not found"}, status_code=404)
        modelfile = f"# Modelfile generated by \"ollama show\"\nFROM {self.blob}\nTEMPLATE \"\"\"{{{{ .Prompt }}}}\"\"\"\n"
        return JSONResponse({"modelfile": modelfile, "template": "{{ .Prompt }}", "parameters": "stop \"<|im_end|>\"",
                             "details": {"format": "gguf", "family": "qwen2"}, "capabilities": ["completion", "tools"],
                             "model_info": {"general.architecture": "qwen2", "tokenizer.ggml.eos_token_id": 151645}})

    async def lmstudio_models(self, request: Request) -> Response:
        self._record(request)
        return JSONResponse({"object": "list", "data": [{"id": self.model, "object": "model", "type": "llm",
                                                         "arch": "qwen2", "compatibility_type": "gguf",
                                                         "state": "loaded"}]})
