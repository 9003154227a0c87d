"""Fallback across backends, readiness per backend, and models named twice: real upstreams on 127.0.0.1 (uvicorn in
threads), one killed mid-run, one answering 503, one breaking after its first byte; the openai client where a client
talks to the proxy."""

from __future__ import annotations

import json
from typing import Iterator

import httpx
import pytest
from openai import OpenAI

from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ConfigError, ProxyConfig, load_config
from streamparse.proxy.runner import ServerThread, free_port
from upstreams import FaultLog, RecordingModel, faulty_upstream, metric

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
ASK = [{"role": "user", "content": "weather?"}]


def _dead() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there


@pytest.fixture
def two() -> Iterator[tuple[RecordingModel, ServerThread, RecordingModel, ServerThread]]:
    a, b = RecordingModel("from a " + CALL), RecordingModel("from b " + CALL)
    with ServerThread(a.app()) as ta, ServerThread(b.app()) as tb:
        yield a, ta, b, tb


def test_a_killed_backend_gives_way_to_its_fallback(
        two: tuple[RecordingModel, ServerThread, RecordingModel, ServerThread]) -> None:
    a, ta, b, tb = two
    config = ProxyConfig([Backend("a", ta.url + "/v1", models=["m"], fallback=["b"]),
                          Backend("b", tb.url + "/v1", model_map={"m": "big-m"})], ready_cache=0.001)
    with ServerThread(create_app(config)) as proxy:
        client = OpenAI(base_url=proxy.url + "/v1", api_key="sk-test", max_retries=0)
        first = client.chat.completions.create(model="m", messages=ASK, tools=TOOLS)
        assert first.choices[0].message.content.startswith("from a") and len(a.requests) == 1 and not b.requests
        ta.__exit__(None, None, None)  # the primary dies: every later request goes to the fallback
        streamed = client.chat.completions.create(model="m", messages=ASK, tools=TOOLS, stream=True)
        text, calls = "", []
        for chunk in streamed:
            delta = chunk.choices[0].delta if chunk.choices else None
            text += (delta.content or "") if delta else ""
            calls += (delta.tool_calls or []) if delta else []
        whole = client.chat.completions.create(model="m", messages=ASK, tools=TOOLS)
        assert text.startswith("from b") and calls[0].function.name == "get_weather"
        assert whole.choices[0].message.content.startswith("from b") and whole.choices[0].message.tool_calls
        assert [r["model"] for r in b.requests] == ["big-m", "big-m"]  # the fallback's own name for the model
        assert len(a.requests) == 1
        ready = httpx.get(proxy.url + "/readyz")
        assert ready.status_code == 200, ready.text  # a is down, but covered by b, which answers
        assert ready.json()["backends"]["a"].startswith("unreachable") and ready.json()["backends"]["b"] == "up"
        assert ready.json()["served_by"] == {"a": "b", "b": "b"}
        chat = {"route": "/v1/chat/completions", "front": "openai"}
        assert metric(proxy.url, "streamparse_requests_total", **chat, backend="a", status="200") == 1
        assert metric(proxy.url, "streamparse_requests_total", **chat, backend="b", status="200") == 2
        assert metric(proxy.url, "streamparse_backend_skips_total", backend="a", reason="connect") == 2
        assert metric(proxy.url, "streamparse_fallback_answers_total", backend="b", primary="a") == 2


def test_a_503_is_skipped_and_a_400_is_the_answer(
        two: tuple[RecordingModel, ServerThread, RecordingModel, ServerThread]) -> None:
    a, ta, b, tb = two
    a.status = 503
    config = ProxyConfig([Backend("a", ta.url + "/v1", default=True, fallback=["b"]), Backend("b", tb.url + "/v1")])
    with ServerThread(create_app(config)) as proxy:
        client = OpenAI(base_url=proxy.url + "/v1", api_key="sk-test", max_retries=0)
        answer = client.chat.completions.create(model="any", messages=ASK, tools=TOOLS)
        assert answer.choices[0].message.content.startswith("from b") and len(a.requests) == len(b.requests) == 1
        assert metric(proxy.url, "streamparse_backend_skips_total", backend="a", reason="status_503") == 1
        a.status = 400  # the request's own fault: no other backend would take it better
        r = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "any", "messages": ASK})
        assert r.status_code == 400 and "status 400 on purpose" in r.json()["error"]["message"]
        assert len(a.requests) == 2 and len(b.requests) == 1


def test_the_last_backends_failure_is_the_answer_and_the_budget_is_bounded() -> None:
    models = [RecordingModel("never", status=503) for _ in range(4)]
    with ServerThread(models[0].app()) as t0, ServerThread(models[1].app()) as t1, \
            ServerThread(models[2].app()) as t2, ServerThread(models[3].app()) as t3:
        backends = [Backend(f"b{i}", t.url + "/v1") for i, t in enumerate((t0, t1, t2, t3))]
        backends[0].default, backends[0].fallback = True, ["b1", "b2", "b3"]
        with ServerThread(create_app(ProxyConfig(backends, fallback_attempts=2))) as proxy:
            r = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "x", "messages": ASK, "stream": True})
            assert r.status_code == 503 and r.json()["error"]["message"].endswith("status 503 on purpose")
            assert [len(m.requests) for m in models] == [1, 1, 0, 0]  # two tries, as fallback_attempts says
            assert metric(proxy.url, "streamparse_requests_total", backend="b1", status="503") == 1


def test_a_stream_that_breaks_after_its_first_byte_is_not_retried() -> None:
    log, spare = FaultLog(), RecordingModel("from the fallback")
    with ServerThread(faulty_upstream(log)) as bad, ServerThread(spare.app()) as good:
        config = ProxyConfig([Backend("bad", bad.url + "/v1", default=True, fallback=["good"]),
                              Backend("good", good.url + "/v1")])
        with ServerThread(create_app(config)) as proxy:
            body = {"model": "broken", "messages": ASK, "tools": TOOLS, "stream": True}
            with httpx.stream("POST", proxy.url + "/v1/chat/completions", json=body, timeout=30) as r:
                assert r.status_code == 200
                events = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
            assert json.loads(events[0])["choices"][0]["delta"]["content"] == "Hello "
            assert any("error" in json.loads(e) for e in events if e != "[DONE]")  # the client is told, as before
            assert not spare.requests  # what the client has seen is the answer: nothing is sent twice
            assert metric(proxy.url, "streamparse_backend_skips_total") == 0
            assert metric(proxy.url, "streamparse_upstream_errors_total", backend="bad", kind="broken") == 1


def test_a_timeout_before_the_answer_begins_is_skipped() -> None:
    log, spare = FaultLog(), RecordingModel("from the fallback")
    with ServerThread(faulty_upstream(log)) as slow, ServerThread(spare.app()) as good:
        config = ProxyConfig([Backend("slow", slow.url + "/v1", default=True, fallback=["good"], first_byte_timeout=0.3),
                              Backend("good", good.url + "/v1")])
        with ServerThread(create_app(config)) as proxy:
            r = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "hang", "messages": ASK}, timeout=30)
            assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "from the fallback"
            assert metric(proxy.url, "streamparse_backend_skips_total", backend="slow", reason="timeout") == 1


def test_relayed_paths_fall_back_too(two: tuple[RecordingModel, ServerThread, RecordingModel, ServerThread]) -> None:
    _, _, _, tb = two
    config = ProxyConfig([Backend("a", _dead(), default=True, fallback=["b"]), Backend("b", tb.url + "/v1")])
    with ServerThread(create_app(config)) as proxy:
        r = httpx.post(proxy.url + "/v1/embeddings", json={"input": "x"})
        assert r.status_code == 404  # b's own answer (it has no such route): b answered, not a's 502
        assert metric(proxy.url, "streamparse_requests_total", route="/v1/*", backend="b", status="404") == 1


def test_readyz_needs_every_backend_without_a_fallback(
        two: tuple[RecordingModel, ServerThread, RecordingModel, ServerThread]) -> None:
    _, ta, _, _ = two
    config = ProxyConfig([Backend("main", _dead(), default=True, fallback=["spare"]),
                          Backend("spare", ta.url + "/v1"), Backend("other", _dead(), models=["o"])])
    with ServerThread(create_app(config)) as proxy:
        r = httpx.get(proxy.url + "/readyz")
        assert r.status_code == 503  # "other" has no fallback and does not answer: its models cannot be served
        assert r.json()["served_by"] == {"main": "spare", "spare": "spare", "other": None}
        assert r.json()["status"] == "unavailable" and r.json()["backends"]["other"].startswith("unreachable")


def test_a_model_named_twice_is_refused_unless_one_falls_back_on_the_other(tmp_path: object) -> None:
    with pytest.raises(ConfigError, match="model 'm' is named by backends 'a' and 'b'"):
        ProxyConfig([Backend("a", "http://127.0.0.1:1/v1", models=["m"]),
                     Backend("b", "http://127.0.0.1:2/v1", model_map={"m": "other"})])
    with pytest.raises(ConfigError, match="named by backends"):  # each the other's fallback: which goes first?
        ProxyConfig([Backend("a", "http://127.0.0.1:1/v1", models=["m"], fallback=["b"]),
                     Backend("b", "http://127.0.0.1:2/v1", models=["m"], fallback=["a"])])
    config = ProxyConfig([Backend("a", "http://127.0.0.1:1/v1", models=["m"], fallback=["b"]),
                          Backend("b", "http://127.0.0.1:2/v1", model_map={"m": "other"})])
    assert config.backend_for("m").name == "a" and [b.name for b in config.chain(config.backend_for("m"))] == ["a", "b"]
    with pytest.raises(ConfigError, match="did you mean 'spare'"):
        ProxyConfig([Backend("a", "http://127.0.0.1:1/v1", fallback=["sapre"]), Backend("spare", "http://127.0.0.1:2/v1")])


def test_the_config_file_and_serve_refuse_a_model_named_twice(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    from streamparse.cli import main

    path = Path(str(tmp_path)) / "proxy.toml"
    path.write_text('[server]\nfallback_attempts = 2\ncors_origins = "http://localhost:3000, *"\nlog_format = "json"\n'
                    '[backends.a]\nupstream = "http://127.0.0.1:1/v1"\nmodels = ["m"]\nfallback = "b"\n'
                    '[backends.b]\nupstream = "http://127.0.0.1:2/v1"\nmodels = ["m"]\n')
    config = load_config(str(path))
    assert config.backend_for("m").name == "a" and config.backends[0].fallback == ["b"]
    assert config.cors_origins == ["http://localhost:3000", "*"] and config.log_format == "json"
    path.write_text(path.read_text().replace('fallback = "b"\n', ""))
    assert main(["serve", "--config", str(path), "--port", str(free_port())]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("streamparse serve: model 'm' is named by backends 'a' and 'b'")
