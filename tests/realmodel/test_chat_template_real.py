"""Opt-in: a real ``llama-server --jinja`` behind ``streamparse serve`` with no flag: the proxy finds the model's
chat template (``GET /props``) at the first request, says so in its log and in ``/readyz``, and the template it found is the
one in the GGUF's metadata (read by ``streamparse.templates.sources``); then the canitoolcall probe through it
scores the same as through ``serve --dialect hermes``, the setting docs/backends.md documents for Qwen2.5-Coder.

Never part of the default run: marker ``realmodel``; it skips unless ``LLAMA_SERVER`` (or ``llama-server`` on the
PATH) and ``STREAMPARSE_GGUF`` (Qwen2.5-Coder-0.5B-Instruct Q4_K_M: tests/proxy/test_real_model_tools.py says
where it comes from) are there. The probe half needs the ``canitoolcall`` package too. Run::

    LLAMA_SERVER=/path/to/llama-server STREAMPARSE_GGUF=/path/to/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \\
        python -m pytest -m realmodel -s tests/realmodel/test_chat_template_real.py

About 2 minutes on 2 busy cores (two probe runs of 27 checks each: about 25 s apiece with llama.cpp 11434).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from llama_server import answers, gguf_model, llama_binary
from streamparse.proxy.runner import free_port, started_process
from streamparse.templates.sources import read_template_source

pytestmark = pytest.mark.realmodel

ROOT = Path(__file__).resolve().parents[2]
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
                                            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                           "required": ["city"]}}}


@pytest.fixture(scope="module")
def llama() -> Iterator[tuple[str, Path]]:
    binary, gguf = llama_binary(), gguf_model()
    port = free_port()
    cmd = [binary, "-m", str(gguf), "--jinja", "-c", "4096", "-t", "2", "--host", "127.0.0.1", "--port", str(port)]
    with started_process(cmd, lambda: answers(f"http://127.0.0.1:{port}/health"), timeout=600,
                         env={**os.environ, "OMP_NUM_THREADS": "2"}):
        yield f"http://127.0.0.1:{port}/v1", gguf


@contextmanager
def serve(upstream: str, log: Path, *flags: str) -> Iterator[str]:
    """``streamparse serve --upstream UPSTREAM`` (and ``flags``) in a process of its own, its log in ``log``."""
    port = free_port()
    cmd = [sys.executable, "-m", "streamparse", "serve", "--upstream", upstream, "--host", "127.0.0.1",
           "--port", str(port), "--log-level", "info", *flags]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            deadline = time.monotonic() + 60
            while not answers(f"http://127.0.0.1:{port}/healthz"):
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            proc.wait(timeout=60)


def test_serve_with_no_flag_finds_the_template(llama: tuple[str, Path], tmp_path: Path) -> None:
    upstream, gguf = llama
    expected = read_template_source(gguf)
    log = tmp_path / "serve.log"
    with serve(upstream, log) as base:
        assert "chat_templates" not in httpx.get(base + "/readyz", timeout=10).json()  # nothing asked yet
        answer = httpx.post(base + "/v1/chat/completions", timeout=600, json={
            "model": gguf.name, "temperature": 0, "seed": 7, "max_tokens": 120, "tools": [WEATHER],
            "messages": [{"role": "user", "content": "What is the weather in Paris? Use the tool."}]})
        assert answer.status_code == 200, answer.text
        shown = httpx.get(base + "/readyz", timeout=10).json()["chat_templates"]["default"]
    model = shown["models"][gguf.name]
    assert model["found"] is True and model["from"].startswith("GET /props (llama.cpp"), shown
    # llama.cpp's Jinja lexer drops one trailing newline from the source (as jinja2 does by default) and recent
    # builds' /props give that text: the same template, rendering the same.
    same = {expected.template, expected.template.removesuffix("\n")}
    assert model["sha256"] in {hashlib.sha256(text.encode()).hexdigest()[:16] for text in same}, model
    assert model["engine"] == "llamacpp" and model["decided"]["format"] == "hermes", model
    said = log.read_text()
    assert "chat template from GET /props" in said and "reads as hermes" in said, said[-3000:]
    assert "no chat template found" not in said


def _probe(base: str, model: str, out: Path) -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location("streamparse_bench_run_probe", ROOT / "bench" / "probe" / "run_probe.py")
    assert spec is not None and spec.loader is not None
    runner = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = runner
    spec.loader.exec_module(runner)
    done = subprocess.run([sys.executable, "-m", "canitoolcall", "probe", "--base-url", base + "/v1", "--model",
                           model, "--concurrency", "1", "--timeout", "300", "--json", str(out)],
                          capture_output=True, text=True, timeout=3600)
    assert out.is_file(), done.stderr[-2000:]
    summary: dict[str, Any] = runner.summarize(json.loads(out.read_text()))
    return summary


def test_the_probe_scores_as_with_the_documented_setting(llama: tuple[str, Path], tmp_path: Path) -> None:
    if importlib.util.find_spec("canitoolcall") is None:
        pytest.skip("the canitoolcall package is not installed")
    upstream, gguf = llama
    with serve(upstream, tmp_path / "found.log") as base:
        found = _probe(base, gguf.name, tmp_path / "found.json")
    with serve(upstream, tmp_path / "documented.log", "--dialect", "hermes", "--chat-template", "off") as base:
        documented = _probe(base, gguf.name, tmp_path / "documented.json")
    print(f"\nno flag (template found): {found['passed']}/{found['total']}; "
          f"--dialect hermes: {documented['passed']}/{documented['total']}")
    assert found["passed"] >= documented["passed"], (found["scenarios"], documented["scenarios"])
