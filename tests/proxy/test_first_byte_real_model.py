"""Opt-in: a real llama-server reading a long prompt for longer than ``read_timeout`` is not cut.

Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF) in llama.cpp's ``llama-server`` on two threads reads a prompt of
about 2,000 tokens in batches of 128 (``-b 128``), so its first data comes only after the prefill, measured here
straight from llama-server (recent builds send their response head at once, then a ``:`` comment every 30 s
until then). Through ``streamparse serve`` (in this process), with the real ``openai`` client:

- ``read_timeout`` 3 s (``first_byte_timeout`` its default): the answer comes, uncut;
- ``first_byte_timeout`` 8 s: the first request (the backend not known as llama.cpp yet) is cut at it (the
  message names it); once an answer's ``Server: llama.cpp`` header has said what the backend is, the proxy asks
  for its prompt progress, each batch's progress restarts the wait, and the same request is answered, no
  ``prompt_progress`` on the wire, the client's keep-alive pings flowing during the prefill.

The timeouts are fixed and the prefill (15 to 60 s here, as busy as the shared machine was) is measured only to
skip on a machine too fast for the point to be made.

Not part of the default test command (marker ``realmodel``). Needs ``LLAMA_SERVER`` (a llama-server binary,
else ``llama-server`` on PATH) and ``STREAMPARSE_GGUF`` (the model: see ``test_real_model_tools.py``)::

    LLAMA_SERVER=/path/to/llama-server STREAMPARSE_GGUF=/path/to/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \\
        python -m pytest -m realmodel -s tests/proxy/test_first_byte_real_model.py
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Iterator

import httpx
import openai
import pytest
from openai import OpenAI

from streamparse.proxy import pipeline
from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ProxyConfig
from streamparse.proxy.runner import ServerThread, free_port, started_process
from llama_server import answers, gguf_model, llama_binary

pytestmark = pytest.mark.realmodel

CONTEXT = 8192
BATCH = 128  # a progress event every 1/16 of the prefill: robust to a machine busy with other work
WORDS = ("harbor", "lantern", "meadow", "quartz", "willow", "ember", "falcon", "granite", "juniper", "orchid")
# About 2,000 tokens of numbered lines; the question at the end.
PROMPT = "\n".join(f"Line {n}: " + " ".join(WORDS[(n * 7 + k) % len(WORDS)] for k in range(12))
                   for n in range(80)) + "\n\nHow many lines are there? Answer with one number."
ASK = [{"role": "user", "content": PROMPT}]
BODY: dict[str, Any] = {"max_tokens": 8, "temperature": 0, "seed": 7, "cache_prompt": False}  # read all of it








@pytest.fixture(scope="module")
def llama() -> Iterator[str]:
    binary, model = llama_binary(), gguf_model()
    port = free_port()
    cmd = [binary, "-m", str(model), "--jinja", "-t", "2", "-tb", "2", "-c", str(CONTEXT), "-b", str(BATCH),
           "-ub", str(BATCH), "-np", "1", "--host", "127.0.0.1", "--port", str(port), "--no-webui"]
    with started_process(cmd, lambda: answers(f"http://127.0.0.1:{port}/health"), timeout=300,
                         env={**os.environ, "OMP_NUM_THREADS": "2"}):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def prefill(llama: str) -> float:
    """Seconds llama-server takes to the first data of its answer to the prompt."""
    tokens = len(httpx.post(llama + "/tokenize", json={"content": PROMPT}, timeout=60).json()["tokens"])
    start = time.monotonic()
    with httpx.stream("POST", llama + "/v1/chat/completions", timeout=600,
                      json={"model": "m", "messages": ASK, "stream": True, **BODY}) as resp:
        head = time.monotonic() - start
        assert resp.status_code == 200 and resp.headers["server"] == "llama.cpp"
        lines = resp.iter_lines()
        first = next(time.monotonic() - start for line in lines if line.startswith("data:"))
        for _ in lines:  # (the rest of the answer)
            pass
    progress = 0
    with httpx.stream("POST", llama + "/v1/chat/completions", timeout=600,
                      json={"model": "m", "messages": ASK, "stream": True, "return_progress": True, **BODY}) as resp:
        for line in resp.iter_lines():
            progress += line.startswith("data: {") and "prompt_progress" in json.loads(line[6:])
    print(f"\nllama-server: {tokens} prompt tokens, its head after {head:.1f} s, its first data after {first:.1f} s "
          f"({tokens / first:.0f} tokens/s), {progress} progress events when asked")
    assert progress >= 4  # (the start, then one per batch)
    return first


def _proxy(llama: str, **timeouts: float) -> ServerThread:
    return ServerThread(create_app(ProxyConfig([Backend("llama", llama + "/v1", default=True, **timeouts)])))


def _ask(url: str) -> tuple[str, float]:
    client = OpenAI(base_url=url + "/v1", api_key="k", max_retries=0, timeout=600)
    start = time.monotonic()
    text = "".join(chunk.choices[0].delta.content or "" for chunk in client.chat.completions.create(
        model="m", messages=ASK, stream=True, extra_body=BODY) if chunk.choices)  # type: ignore[arg-type]
    return text, time.monotonic() - start


# Fixed, well below this prompt's prefill on 2 threads (15 to 60 s measured, as busy as the machine was), so a
# machine busier than when ``prefill`` was measured only makes the point stronger.
READ_TIMEOUT = 3.0
FIRST_BYTE_TIMEOUT = 8.0  # past a batch of 128 tokens (about 1 s) even on a machine several times as busy


def test_a_prefill_longer_than_read_timeout_is_not_cut(llama: str, prefill: float) -> None:
    if prefill < 2 * READ_TIMEOUT:
        pytest.skip(f"this machine reads the prompt in {prefill:.1f} s: too fast to outlast read_timeout")
    with _proxy(llama, read_timeout=READ_TIMEOUT, total_timeout=3600) as px:  # first_byte_timeout: its default
        text, took = _ask(px.url)
    print(f"read_timeout {READ_TIMEOUT} s: answered {text!r} after {took:.1f} s")
    assert text.strip() and took > READ_TIMEOUT


def test_prompt_progress_carries_a_prefill_past_first_byte_timeout(llama: str, prefill: float,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    if prefill < 2 * FIRST_BYTE_TIMEOUT:
        pytest.skip(f"this machine reads the prompt in {prefill:.1f} s: too fast to outlast first_byte_timeout")
    monkeypatch.setattr(pipeline, "SSE_PING_SECONDS", 1.0)
    timeouts = {"read_timeout": READ_TIMEOUT, "first_byte_timeout": FIRST_BYTE_TIMEOUT, "total_timeout": 3600}
    with _proxy(llama, **timeouts) as px:
        start = time.monotonic()
        with pytest.raises(openai.APIError) as info:  # not known as llama.cpp yet: no progress asked
            _ask(px.url)  # (a 504 from a build that holds its head, else an error event after it)
        cut = time.monotonic() - start
        assert "first_byte_timeout" in str(info.value.message)
        client = OpenAI(base_url=px.url + "/v1", api_key="k", max_retries=0)
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=1)

        text, took = _ask(px.url)  # the Server header said llama.cpp: its progress keeps the wait alive
        assert text.strip() and took > FIRST_BYTE_TIMEOUT

        pieces: list[tuple[float, bytes]] = []
        start = time.monotonic()
        with httpx.stream("POST", px.url + "/v1/chat/completions", timeout=600,
                          json={"model": "m", "messages": ASK, "stream": True, **BODY}) as resp:
            for piece in resp.iter_raw():
                pieces.append((time.monotonic() - start, piece))
    wire = b"".join(piece for _, piece in pieces)
    first_data = next(at for at, piece in pieces if b"data:" in piece)
    pings = sum(1 for at, piece in pieces if piece.startswith(b": ping") and at < first_data)
    print(f"read_timeout {READ_TIMEOUT} s, first_byte_timeout {FIRST_BYTE_TIMEOUT} s: without progress cut after "
          f"{cut:.1f} s; with it answered {text!r} after {took:.1f} s; first data after {first_data:.1f} s, "
          f"{pings} pings before it")
    assert b"prompt_progress" not in wire and first_data > FIRST_BYTE_TIMEOUT and pings >= FIRST_BYTE_TIMEOUT - 2
