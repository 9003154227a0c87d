"""SSE decoding and the stream rewriter's fault handling; proxy configuration files."""

from __future__ import annotations

import json

import pytest

from streamparse.proxy.config import ConfigError, ProxyConfig, load_config
from streamparse.wire.sse import ChatStreamRewriter, SSEDecoder, SSEEvent, encode_event


def decode_all(pieces: list[bytes]) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events = [e for p in pieces for e in decoder.feed(p)]
    return events + decoder.close()


def test_decoder_handles_crlf_comments_multiline_and_split_utf8() -> None:
    raw = ': ping - Mon\r\n\r\ndata: {"a": "é"}\r\n\r\nevent: x\ndata: 1\ndata: 2\n\ndata: [DONE]'.encode()
    whole = decode_all([raw])
    assert decode_all([raw[i : i + 1] for i in range(len(raw))]) == whole
    assert whole == [SSEEvent(comment="ping - Mon"), SSEEvent(data='{"a": "é"}'), SSEEvent(data="1\n2", event="x"),
                     SSEEvent(data="[DONE]")]


def test_encode_event_round_trips() -> None:
    frame = encode_event("line1\nline2") + encode_event(comment="keep-alive")
    assert decode_all([frame]) == [SSEEvent(data="line1\nline2"), SSEEvent(comment="keep-alive")]


def _chunk(content: str, finish: str | None = None) -> SSEEvent:
    return SSEEvent(data=json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                                     "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}))


def test_rewriter_invalid_json_flushes_then_errors_then_stops() -> None:
    rw = ChatStreamRewriter()
    ((kind, chunk),) = rw.feed(_chunk("Hi <tool"))
    assert kind == "chunk" and chunk == {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                                                   "choices": [{"index": 0, "delta": {"content": "Hi "}, "finish_reason": None}]}
    items = rw.feed(SSEEvent(data="{broken"))
    assert [k for k, _ in items] == ["chunk", "error"]
    assert items[0][1]["choices"][0]["delta"]["content"] == "<tool"
    assert rw.finished and rw.feed(_chunk("more")) == [] and rw.close() == []


def test_rewriter_passes_comments_and_upstream_errors() -> None:
    rw = ChatStreamRewriter()
    assert rw.feed(SSEEvent(comment="ping")) == [("comment", "ping")]
    items = rw.feed(SSEEvent(data=json.dumps({"error": {"message": "overloaded"}})))
    assert [k for k, _ in items] == ["error", "done"]
    assert items[0][1] == {"error": {"message": "overloaded"}}


def test_rewriter_without_done_still_ends_cleanly() -> None:
    rw = ChatStreamRewriter()
    rw.feed(_chunk("tail <"))
    assert [k for k, _ in rw.close()] == ["chunk", "done"]


def test_config_file(tmp_path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("""
[server]
port = 9000
[backends.a]
upstream = "http://127.0.0.1:8000/v1/"
models = ["m-a"]
dialects = ["qwen3_xml"]
[backends.b]
upstream = "https://example.invalid/v1"
default = true
api_key_env = "B_KEY"
[backends.b.model_map]
"nice-name" = "ugly/upstream-name"
""")
    config = load_config(str(path))
    assert config.port == 9000
    assert config.backend_for("m-a").name == "a" and config.backend_for("m-a").upstream == "http://127.0.0.1:8000/v1"
    assert config.backend_for("nice-name").upstream_model("nice-name") == "ugly/upstream-name"
    assert config.backend_for("unknown").name == "b"
    assert config.backend_for("m-a").parser_options()["dialects"] == ["qwen3_coder"]  # the alias qwen3_xml, resolved
    assert ProxyConfig.single("http://x/v1/").backends[0].upstream == "http://x/v1"


@pytest.mark.parametrize("text,message", [
    ("[backends.a]\nupstream = 'ftp://x'", "http"),
    ("[backends.a]\nupstream = 'http://x'\napi_key = 'sk-123'", "environment variable"),
    ("[backends.a]\nupstream = 'http://x'\ndialects = ['nope']", "unknown dialect"),
    ("[backends.a]\nupstream = 'http://x'\ncolour = 1", "unknown key"),
    ("[server]\nport = 1", "at least one"),
    ("not toml [", "c.toml"),
])
def test_config_errors_are_clear(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(str(path))
