"""The proxy finds its backend's chat template (``proxy.chat_templates``, ``proxy.template_probe``): each engine's
own endpoints, served on loopback by scripted engines over REAL templates (llama.cpp's shipped ones, the Qwen2.5-
Coder GGUF's), asked once and kept; the engine's own generation prompt per request kwargs; a path instead; off;
nothing found (the log says how to give it); a backend that hangs or is gone (bounded, asked again later); another
model loaded (asked again, the new template used and logged)."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any, Iterator

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from budget import examples
from streamparse.proxy.template_probe import ask_template, render_generation_prompt

from streamparse.proxy import chat_templates as ct
from streamparse.proxy.chat_templates import ChatTemplates, template_fields, template_kwargs
from streamparse.proxy.config import Backend, ConfigError, ProxyConfig, load_config
from streamparse.proxy.runner import ServerThread, free_port
from streamparse.proxy.workers import config_from_settings
from template_engines import ScriptedEngine, render
from template_files import llama_cpp_template, llama_cpp_templates, qwen_gguf_head

pytest.importorskip("jinja2")  # (the scripted engines render templates as the engines do)
pytestmark = pytest.mark.anyio

ASK = {"messages": [{"role": "user", "content": "Hi"}]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


@pytest.fixture(scope="module")
def templates() -> Path:
    return llama_cpp_templates()


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[ServerThread] = []

    def start(app: Any) -> str:
        server = ServerThread(app).__enter__()
        started.append(server)
        return server.url

    yield start
    for server in started:
        server.__exit__(None, None, None)


def backend(url: str, **settings: Any) -> Backend:
    return Backend(name="b", upstream=url + "/v1", **settings)


async def ask(backend_: Backend, payload: dict[str, Any] | None = None, found: ChatTemplates | None = None) -> Any:
    async with httpx.AsyncClient() as client:
        templates = found or ChatTemplates(client, [backend_])
        templates.client = client
        return await templates.for_request(backend_, {"model": "served-model", **(payload or ASK)}), templates


# -- what a request hands its template ---------------------------------------------------------------------------

def test_the_request_decides_the_kwargs() -> None:
    assert template_fields({"messages": []}) == {} and template_kwargs({}) == {}
    payload = {"chat_template_kwargs": {"enable_thinking": True, "x": 1}, "reasoning_effort": "high", "tools": []}
    assert template_fields(payload) == {"chat_template_kwargs": {"enable_thinking": True, "x": 1},
                                        "reasoning_effort": "high"}
    assert template_kwargs(template_fields(payload)) == {"enable_thinking": True, "x": 1, "reasoning_effort": "high"}
    # llama.cpp's mapping: "none" turns thinking off; the request's own kwargs win.
    assert template_kwargs({"reasoning_effort": "none"}) == {"enable_thinking": False}
    assert template_kwargs({"reasoning_effort": "none", "chat_template_kwargs": {"enable_thinking": True}}) == \
        {"enable_thinking": True}
    assert template_fields({"chat_template_kwargs": "nope", "reasoning_effort": 3}) == {}


# -- llama.cpp ------------------------------------------------------------------------------------------------------

async def test_llamacpp_props_and_apply_template(serve: Any, templates: Path, caplog: pytest.LogCaptureFixture) -> None:
    qwen3 = llama_cpp_template("Qwen-Qwen3-0.6B.jinja")
    engine = ScriptedEngine("llamacpp", qwen3)
    url = serve(engine.app())
    b = backend(url)
    caplog.set_level(logging.INFO, "streamparse.server")
    async with httpx.AsyncClient() as client:
        found = ChatTemplates(client, [b])
        plain = await found.for_request(b, {"model": "served-model", **ASK})
        assert plain.template == qwen3 and plain.how == "GET /props (llama.cpp b11434-515e855)"
        assert plain.generation_prompt == "<|im_start|>assistant\n" and plain.kwargs == {}
        assert plain.source.stop_tokens == ("<|im_end|>",)
        off = await found.for_request(b, {"model": "served-model", **ASK,
                                          "chat_template_kwargs": {"enable_thinking": False}})
        assert off.generation_prompt == "<|im_start|>assistant\n<think>\n\n</think>\n\n"
        assert off.kwargs == {"enable_thinking": False}
        none = await found.for_request(b, {"model": "served-model", **ASK, "reasoning_effort": "none"})
        assert none.generation_prompt == off.generation_prompt and none.kwargs == {"enable_thinking": False}
        again = await found.for_request(b, {"model": "served-model", **ASK,
                                            "chat_template_kwargs": {"enable_thinking": False}})
        assert again == off
    # asked once; each distinct set of fields rendered twice (with and without the generation prompt), once
    assert engine.hits["GET /props"] == 1 and engine.hits["POST /apply-template"] == 6
    assert all(body.get("model") == "served-model" for path, body in engine.bodies if path == "/apply-template")
    said = [r.getMessage() for r in caplog.records if "chat template from" in r.getMessage()]
    assert len(said) == 1 and "GET /props" in said[0] and "stop tokens <|im_end|>" in said[0], said
    assert qwen3[:200] not in said[0]  # (the log names the template; it does not print it)


async def test_a_template_that_writes_the_prompt_either_way_is_left_to_rendering(serve: Any, templates: Path) -> None:
    """Command R7B's template ends with its generation prompt whether asked or not: the engine's two renderings
    are equal, so no generation prompt is taken from them (the library finds it by rendering)."""
    r7b = llama_cpp_template("CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja")
    engine = ScriptedEngine("llamacpp", r7b)
    got, _ = await ask(backend(serve(engine.app())))
    assert got.template == r7b and got.generation_prompt is None and engine.hits["POST /apply-template"] == 2


async def test_llamacpp_tool_use_template_for_a_request_with_tools(serve: Any, templates: Path) -> None:
    default = llama_cpp_template("CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja")
    tool_use = llama_cpp_template("CohereForAI-c4ai-command-r-plus-tool_use.jinja")
    url = serve(ScriptedEngine("llamacpp", default, tool_use=tool_use).app())
    b = backend(url)
    async with httpx.AsyncClient() as client:
        found = ChatTemplates(client, [b])
        with_tools = await found.for_request(b, {"model": "m", **ASK, "tools": TOOLS})
        without = await found.for_request(b, {"model": "m", **ASK})
    assert with_tools.template == tool_use and without.template == default
    assert list(with_tools.source.named) == ["default", "tool_use"]


async def test_another_model_loaded_is_found_and_said(serve: Any, templates: Path, caplog: pytest.LogCaptureFixture,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    engine = ScriptedEngine("llamacpp", llama_cpp_template("Qwen-Qwen2.5-7B-Instruct.jinja"))
    b = backend(serve(engine.app()))
    caplog.set_level(logging.INFO, "streamparse.server")
    async with httpx.AsyncClient() as client:
        found = ChatTemplates(client, [b])
        first = await found.for_request(b, {"model": "m", **ASK})
        monkeypatch.setattr(ct, "REFRESH_AFTER", 0.0)
        same = await found.for_request(b, {"model": "m", **ASK})  # asked again: the same model, kept as it was
        assert same.template == first.template and engine.hits["GET /props"] == 2
        engine.template, engine.model = llama_cpp_template("meta-llama-Llama-3.2-3B-Instruct.jinja"), "llama"
        changed = await found.for_request(b, {"model": "m", **ASK})
    assert changed.template == engine.template
    assert changed.generation_prompt == "<|start_header_id|>assistant<|end_header_id|>\n\n"
    said = [r.getMessage() for r in caplog.records if "chat template from" in r.getMessage()]
    assert len(said) == 2 and "a new chat template" in said[1]


async def test_model_names_are_bounded_and_share_one_answer(serve: Any, templates: Path,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    engine = ScriptedEngine("llamacpp", llama_cpp_template("Qwen-Qwen2.5-7B-Instruct.jinja"))
    b = backend(serve(engine.app()))
    caplog.set_level(logging.INFO, "streamparse.server")
    async with httpx.AsyncClient() as client:
        found = ChatTemplates(client, [b])
        for n in range(ct.MAX_MODELS + 4):
            assert (await found.for_request(b, {"model": f"name-{n}", **ASK})) is not None
        models = found.detail()["b"]["models"]
    assert len(models) == ct.MAX_MODELS and "name-0" not in models
    assert engine.hits["POST /apply-template"] == 2  # one served model, one answer: its prompts are shared
    assert len([r for r in caplog.records if "chat template from" in r.getMessage()]) == 1


# -- vLLM, SGLang, Ollama, LM Studio, MLX ------------------------------------------------------------------------------

async def test_vllm_tokenizer_info_and_tokenize(serve: Any, templates: Path) -> None:
    qwen3 = llama_cpp_template("Qwen-Qwen3-0.6B.jinja")
    engine = ScriptedEngine("vllm", qwen3, tokenizer_info=True, root="Qwen/Qwen3-0.6B")
    b = backend(serve(engine.app()))
    got, _ = await ask(b, {**ASK, "chat_template_kwargs": {"enable_thinking": False}})
    assert got.template == qwen3 and got.how == "GET /tokenizer_info (vLLM)"
    assert got.generation_prompt == "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert engine.hits["POST /tokenize"] == 2 and engine.hits["POST /detokenize"] == 2


def _hf_folder(root: Path, template: str) -> Path:
    root.mkdir(parents=True)
    (root / "tokenizer_config.json").write_text(json.dumps({"chat_template": template, "eos_token": "<|im_end|>"}))
    return root


async def test_vllm_root_read_on_this_machine(serve: Any, templates: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    qwen = llama_cpp_template("Qwen-Qwen2.5-7B-Instruct.jinja")
    folder = _hf_folder(tmp_path / "Qwen2.5-7B-Instruct", qwen)
    got, _ = await ask(backend(serve(ScriptedEngine("vllm", qwen, root=str(folder)).app())))
    assert got.template == qwen and got.how == f"vLLM serves {folder}: read on this machine"
    assert got.generation_prompt == "<|im_start|>assistant\n"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    snapshot = tmp_path / "hub" / "models--Qwen--Qwen2.5-7B-Instruct" / "snapshots" / "abc"
    _hf_folder(snapshot, qwen)
    got, _ = await ask(backend(serve(ScriptedEngine("vllm", qwen, root="Qwen/Qwen2.5-7B-Instruct").app())))
    assert got.template == qwen and got.source.eos_token == "<|im_end|>"


async def test_vllm_elsewhere_says_how_to_give_the_template(serve: Any, templates: Path,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    engine = ScriptedEngine("vllm", llama_cpp_template("Qwen-Qwen3-0.6B.jinja"), root="/nowhere/Qwen3-0.6B")
    b = backend(serve(engine.app()))
    caplog.set_level(logging.INFO, "streamparse.server")
    got, found = await ask(b)
    assert got is None
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "--enable-tokenizer-info-endpoint" in warned[0]
    assert 'chat_template = "/path/to/model.gguf"' in warned[0] and "--chat-template PATH" in warned[0]
    detail = found.detail()["b"]["models"]["served-model"]
    assert detail["found"] is False and "--enable-tokenizer-info-endpoint" in " ".join(detail["notes"])


async def test_sglang_model_path_and_its_chat_template_file(serve: Any, templates: Path, tmp_path: Path) -> None:
    glm = llama_cpp_template("GLM-4.6.jinja")
    folder = _hf_folder(tmp_path / "GLM-4.6", glm)
    got, _ = await ask(backend(serve(ScriptedEngine("sglang", root=str(folder)).app())))
    assert got.template == glm and got.generation_prompt is None  # (SGLang's /tokenize renders no conversation)
    given = tmp_path / "given.jinja"
    given.write_text(llama_cpp_template("Qwen3-Coder.jinja"))
    got, _ = await ask(backend(serve(ScriptedEngine("sglang", root=str(folder), server_template=str(given)).app())))
    assert got.template == given.read_text() and got.how == f"SGLang's --chat-template file ({given})"


async def test_ollama_show_points_at_the_gguf(serve: Any, templates: Path) -> None:
    gguf = qwen_gguf_head()
    engine = ScriptedEngine("ollama", model="qwen2.5-coder:0.5b", blob=str(gguf))
    got, found = await ask(backend(serve(engine.app())), {**ASK, "model": "qwen2.5-coder:0.5b"})
    assert got.template == llama_cpp_template("Qwen-Qwen2.5-7B-Instruct.jinja")
    assert got.how == f"POST /api/show (Ollama): {gguf}" and got.generation_prompt is None
    notes = " ".join(found.detail()["b"]["models"]["qwen2.5-coder:0.5b"]["notes"])
    assert "Go template, not Jinja" in notes and "capabilities: completion, tools" in notes
    assert engine.bodies[-1] == ("/api/show", {"model": "qwen2.5-coder:0.5b"})


async def test_ollama_elsewhere_and_lm_studio_say_why(serve: Any) -> None:
    got, found = await ask(backend(serve(ScriptedEngine("ollama", model="served-model", blob="/x/sha256-1").app())))
    assert got is None and "ollama show --modelfile" in " ".join(found.detail()["b"]["models"]["served-model"]["notes"])
    got, found = await ask(backend(serve(ScriptedEngine("lmstudio").app())))
    assert got is None and "LM Studio gives no chat template" in " ".join(
        found.detail()["b"]["models"]["served-model"]["notes"])


async def test_an_mlx_style_server_names_a_hub_model(serve: Any, templates: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    gemma = llama_cpp_template("google-gemma-2-2b-it.jinja")
    _hf_folder(tmp_path / "hub" / "models--mlx-community--gemma-2-2b-it-4bit" / "snapshots" / "r1", gemma)
    got, _ = await ask(backend(serve(ScriptedEngine("plain", model="mlx-community/gemma-2-2b-it-4bit").app())),
                       {**ASK, "model": "mlx-community/gemma-2-2b-it-4bit"})
    assert got.template == gemma and got.how == "the served model's files (mlx-community/gemma-2-2b-it-4bit)"


# -- nothing, gone, hanging ---------------------------------------------------------------------------------------

async def test_nothing_found_is_kept_and_said_once(serve: Any, caplog: pytest.LogCaptureFixture) -> None:
    engine = ScriptedEngine("plain")
    b = backend(serve(engine.app()))
    caplog.set_level(logging.INFO, "streamparse.server")
    async with httpx.AsyncClient() as client:
        found = ChatTemplates(client, [b])
        assert await found.for_request(b, {"model": "served-model", **ASK}) is None
        asked = sum(engine.hits.values())
        assert await found.for_request(b, {"model": "served-model", **ASK}) is None
    assert sum(engine.hits.values()) == asked  # not asked again before REFRESH_AFTER
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "no chat template found for model 'served-model'" in warned[0]
    assert "parsing goes on as before" in warned[0]


async def test_a_gone_backend_is_asked_again_later(caplog: pytest.LogCaptureFixture,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    b = backend(f"http://127.0.0.1:{free_port()}")
    caplog.set_level(logging.INFO, "streamparse.server")
    calls = []
    real_ask = ct.ask_template

    async def counted(*args: Any) -> Any:
        calls.append(1)
        return await real_ask(*args)

    monkeypatch.setattr(ct, "ask_template", counted)
    async with httpx.AsyncClient() as client:
        found = ChatTemplates(client, [b])
        assert await found.for_request(b, ASK) is None and await found.for_request(b, ASK) is None
        assert len(calls) == 1
        monkeypatch.setattr(ct, "RETRY_AFTER", 0.0)
        assert await found.for_request(b, ASK) is None and len(calls) == 2
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "did not answer" in warned[0] and "ConnectError" in warned[0]


async def test_a_hanging_backend_costs_a_bounded_wait(serve: Any) -> None:
    async def hang(request: Request) -> Response:
        await anyio.sleep(60)
        return Response()

    url = serve(Starlette(routes=[Route("/{p:path}", hang, methods=["GET", "POST"])]))
    b = backend(url, read_timeout=0.3, connect_timeout=0.3)
    started = time.monotonic()
    got, found = await ask(b)
    assert got is None and time.monotonic() - started < 6
    assert "ReadTimeout" in found.detail()["b"]["models"]["served-model"]["why"]


# -- a path, off, the config --------------------------------------------------------------------------------------

async def test_a_path_is_read_at_start_and_the_backend_never_asked(templates: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "streamparse.server")
    gguf = qwen_gguf_head()
    b = backend(f"http://127.0.0.1:{free_port()}", chat_template=str(gguf))
    async with httpx.AsyncClient() as client:
        found = ChatTemplates(client, [b])
        got = await found.for_request(b, ASK)
        assert got.template == llama_cpp_template("Qwen-Qwen2.5-7B-Instruct.jinja") and got.generation_prompt is None
        detail = found.detail()["b"]
    assert detail["setting"] == "path" and detail["characters"] == len(got.template) and "template" not in detail
    assert detail["stop_tokens"] == ["<|im_end|>"] and detail["model"] == "Qwen2.5 Coder 0.5B Instruct AWQ"
    said = [r.getMessage() for r in caplog.records if "chat template from" in r.getMessage()]
    assert len(said) == 1 and f"chat_template = '{gguf.name}'" in said[0]


async def test_off_asks_nothing(serve: Any, templates: Path) -> None:
    engine = ScriptedEngine("llamacpp", llama_cpp_template("Qwen-Qwen3-0.6B.jinja"))
    b = backend(serve(engine.app()), chat_template="off")
    got, found = await ask(b)
    assert got is None and not engine.hits and found.detail() == {}


async def test_detail_shows_only_what_is_known(serve: Any, templates: Path) -> None:
    engine = ScriptedEngine("llamacpp", llama_cpp_template("Qwen-Qwen3-0.6B.jinja"))
    auto, off = backend(serve(engine.app())), Backend(name="o", upstream="http://127.0.0.1:9/v1", chat_template="off")
    async with httpx.AsyncClient() as client:
        found = ChatTemplates(client, [auto, off])
        assert found.detail() == {} and not engine.hits  # nothing asked before a request
        await found.for_request(auto, {"model": "served-model", **ASK})
        shown = found.detail()
    assert list(shown) == ["b"] and shown["b"]["models"]["served-model"]["from"].startswith("GET /props")
    assert shown["b"]["models"]["served-model"]["decided"] == {"format": "hermes", "derived": False, "start": "as text"}


def test_a_path_that_holds_no_template_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.gguf").write_text("hello")
    b = backend("http://127.0.0.1:9", chat_template=str(tmp_path / "notes.gguf"))
    with pytest.raises(ConfigError, match="backend 'b': chat_template: .*notes.gguf: not a GGUF file"):
        ChatTemplates(httpx.AsyncClient(), [b])


def test_the_setting_is_checked_in_config_and_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    head = '[backends.a]\nupstream = "http://127.0.0.1:8000/v1"\n'
    path.write_text(head)
    assert load_config(str(path)).backends[0].chat_template == "auto"
    for value in ("off", "auto", str(tmp_path)):
        path.write_text(head + f'chat_template = "{value}"\n')
        assert load_config(str(path)).backends[0].chat_template == value
    path.write_text(head + 'chat_template = "of"\n')
    with pytest.raises(ConfigError, match="neither \"auto\", \"off\" nor a file .*did you mean 'off'"):
        load_config(str(path))
    path.write_text(head + "chat_template = 3\n")
    with pytest.raises(ConfigError, match="chat_template must be"):
        load_config(str(path))
    cli = config_from_settings({"upstream": "http://127.0.0.1:8000/v1", "backend": {"chat_template": "off"}})
    assert cli.backends[0].chat_template == "off" and "chat_template" in cli.backends[0].written
    assert ProxyConfig.single("http://127.0.0.1:8000/v1").backends[0].written == {"upstream", "default"}


def test_the_scripted_engine_renders_like_the_template(templates: Path) -> None:
    """(The engines above answer with the real template's own rendering.)"""
    qwen3 = llama_cpp_template("Qwen-Qwen3-0.6B.jinja")
    text = render(qwen3, [{"role": "user", "content": "Hi"}], add_generation_prompt=True,
                  kwargs={"enable_thinking": False})
    assert text == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"


# -- whatever a backend answers ------------------------------------------------------------------------------------

JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                                       max_size=4), max_leaves=12)
FIELDS = ["chat_template", "chat_template_tool_use", "eos_token", "model_path", "data", "owned_by", "root", "id",
          "modelfile", "template", "tokenizer_path", "prompt", "tokens", "capabilities"]
ANSWERS = st.one_of(JSON_VALUES, st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES | st.just("/tmp"), max_size=6),
                    st.builds(lambda e: {"data": [e]}, st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES, max_size=4)))


@pytest.fixture(scope="module")
def anything() -> Iterator[tuple[str, dict[str, Any]]]:
    """A server answering every path with whatever the test sets (status and JSON body) for that path."""
    answers: dict[str, Any] = {}

    async def answer(request: Request) -> Response:
        status, body = answers.get(request.url.path, (404, {"error": "no"}))
        return JSONResponse(body, status_code=status)

    with ServerThread(Starlette(routes=[Route("/{p:path}", answer, methods=["GET", "POST"])])) as server:
        yield server.url, answers


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(["/props", "/v1/models", "/api/show", "/api/v0/models", "/tokenizer_info",
                                        "/get_server_info", "/get_model_info", "/apply-template", "/tokenize",
                                        "/detokenize"]),
                       st.tuples(st.sampled_from([200, 200, 404, 500]), ANSWERS), max_size=10))
def test_no_answer_makes_the_ask_fail(anything: tuple[str, dict[str, Any]], pages: dict[str, Any]) -> None:
    url, answers = anything
    answers.clear()
    answers.update(pages)
    b = backend(url)

    async def both() -> Any:
        async with httpx.AsyncClient() as client:
            found = await ask_template(client, b, "m", {})
            for renders in ("apply-template", "tokenize"):
                prompt = await render_generation_prompt(client, b, ct.Found(None, "x", renders=renders), "m",
                                                        {"reasoning_effort": "low"}, {})
                assert prompt is None or isinstance(prompt, str)
            return found

    found = anyio.run(both)
    assert isinstance(found.how, str)
    assert found.source is None or (isinstance(found.source.template, str) and found.source.template.strip())


# -- what a stream of new kwargs costs ------------------------------------------------------------------------------

async def test_new_kwargs_on_every_request_are_read_a_bounded_number_of_times(
        templates: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A client sending fresh chat_template_kwargs each time cannot make the proxy read the template each time:
    past the minute's budget a new set is read as no kwargs (one reading, kept), and the log says so once."""
    import dataclasses

    from streamparse.core import chat_template
    from streamparse.proxy import chat_templates as module
    from streamparse.templates.sources import TemplateSource

    monkeypatch.setattr(module, "MAX_READS_PER_MINUTE", 3)
    readings: list[Any] = []
    original = chat_template.read_template

    def counted(*args: Any, **kwargs: Any) -> Any:
        readings.append(kwargs.get("kwargs"))
        return original(*args, **kwargs)

    monkeypatch.setattr(chat_template, "read_template", counted)
    text = llama_cpp_template("Qwen3.5-4B.jinja")
    first = module.RequestTemplate(text, {"n": 0}, None, TemplateSource(text, "test"), "test")
    caplog.set_level(logging.WARNING, "streamparse.server")
    async with httpx.AsyncClient() as client:
        found = ChatTemplates(client, [backend("http://127.0.0.1:9")])
        setups = [await found.setup_for(dataclasses.replace(first, kwargs={"n": k}), None) for k in range(20)]
    assert len(readings) == 4 and readings[-1] == {}  # three with their own kwargs, then one as none, kept
    assert all(s is not None and s.format_name == "qwen3_coder" for s in setups)
    assert sum("chat-template readings in a minute" in r.message for r in caplog.records) == 1
