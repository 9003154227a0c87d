"""streamparse.harness.engines: vLLM's and SGLang's streaming tool parsers as benchmark sessions.

The engine tests skip (one line each) where vllm / sglang are not installed, as in CI; what the
adapters add on their own (call bookkeeping, the tokenizer stand-in, notes for a missing package,
no engine import at module import) is tested everywhere. Every format's comparators on its mixed
stream: test_engines_formats.py.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from typing import Any

import pytest

from streamparse.harness import engines
from streamparse.harness.engines_sessions import VllmSession
from streamparse.harness.workloads import split, split_keeping

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "write_file", "description": "Write a file", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}},
]
CALLS = [("get_weather", {"city": "Paris", "days": 3}),
         ("write_file", {"path": "a.py", "content": "def f():\n    return {'x': \"<b>\"}\n"})]
HERMES = ("Let me check that.\n"
          + "".join(f"<tool_call>\n{json.dumps({'name': n, 'arguments': a})}\n</tool_call>\n" for n, a in CALLS))
QWEN3_CODER = "Let me check that.\n" + "".join(
    "<tool_call>\n<function=" + n + ">\n"
    + "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in a.items())
    + "</function>\n</tool_call>\n" for n, a in CALLS)
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's own, when the engines import it

SESSIONS = {"vllm:hermes": "hermes", "sglang:qwen25": "hermes", "sglang:hermes": "hermes",
            "vllm:qwen3_coder": "qwen3_coder", "sglang:qwen3_coder": "qwen3_coder"}


def _factory(name: str) -> Any:
    engine = name.split(":")[0]
    if importlib.util.find_spec(engine) is None:  # not importorskip: sglang's own __init__ needs triton (GPU)
        pytest.skip(f"{engine} not installed (bench/README.md: installing the engine comparators)")
    sessions, notes = engines.engine_comparators(SESSIONS[name])
    assert name in sessions, notes  # installed but not loadable: worth a failure, not a skip
    return sessions[name]


def _stream(session: Any, deltas: list[str]) -> tuple[str, list[tuple[str, Any]], int]:
    """Text, parsed calls, and how many calls had left before ``close``."""
    out: list[str] = []
    calls: list[tuple[str, str]] = []
    for delta in deltas:
        t, c = session.feed(delta)
        out.append(t)
        calls += c
    before_close = len(calls)
    t, c = session.close()
    return "".join(out) + t, [(n, json.loads(a)) for n, a in calls + c], before_close


@pytest.mark.parametrize("name", ["vllm:hermes", "sglang:qwen25", "sglang:hermes"])
def test_hermes_stream_in_4_char_deltas_gives_the_calls(name: str) -> None:
    text, calls, before_close = _stream(_factory(name)(TOOLS), split(HERMES, 4))
    assert calls == CALLS
    assert before_close >= 1  # the first call leaves once the engine is past it, not only at close
    assert text == HERMES_TEXT[name]


HERMES_TEXT = {  # as the pinned versions return it
    "vllm:hermes": "Let me check that.\n",  # nothing after the first <tool_call>, ever
    "sglang:qwen25": "Let me check tha",  # "t.\n" held with the "<" of "<tool_call>", then dropped
    "sglang:hermes": "Let me check that.\n\n\n\n\n",
}


@pytest.mark.parametrize("name", ["vllm:qwen3_coder", "sglang:qwen3_coder"])
def test_qwen3_coder_stream_in_4_char_deltas_gives_the_calls(name: str) -> None:
    text, calls, before_close = _stream(_factory(name)(TOOLS), split(QWEN3_CODER, 4))
    assert calls == CALLS  # "days" is an integer: both engines convert by the tool's schema
    assert before_close == 2  # both complete before close
    assert text.strip() == "Let me check that."


@pytest.mark.parametrize("name", list(SESSIONS))
def test_raw_api_is_the_engine_call_and_sessions_are_independent(name: str) -> None:
    factory = _factory(name)
    stream = HERMES if SESSIONS[name] == "hermes" else QWEN3_CODER
    feed, close = factory(TOOLS).raw()
    for delta in split(stream, 4):
        feed(delta)
    close()
    assert _stream(factory(TOOLS), split(stream, 4))[1] == CALLS  # a fresh session starts from nothing


def test_vllm_qwen3_coder_with_token_ids_wants_special_tokens_whole() -> None:
    """With token ids, vLLM's parser engine takes <tool_call> only from its id: right for deltas cut at
    token boundaries (here: the special tokens whole, the rest in 4 characters)."""
    _factory("vllm:qwen3_coder")
    deltas = split_keeping(QWEN3_CODER, ("<tool_call>", "</tool_call>"))
    assert deltas == [d for piece in re.split(r"(</?tool_call>)", QWEN3_CODER)
                      for d in ([piece] if piece in ("<tool_call>", "</tool_call>") else split(piece, 4))]
    vllm = engines._loaded["vllm"]
    session = VllmSession(vllm.parser("qwen3_coder"), vllm.request, engines.StandInTokenizer("qwen3_coder"), TOOLS,
                          token_ids=True)
    text, calls, before_close = _stream(session, deltas)
    assert calls == CALLS and before_close == 2
    assert text.strip() == "Let me check that."


def test_formats_no_engine_parses_have_no_comparators() -> None:
    assert engines.engine_comparators("tools_array") == ({}, [])
    assert engines.engine_comparators("name_tag") == ({}, [])


def test_missing_packages_give_one_note_each_and_no_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engines, "_cache", {})
    monkeypatch.setattr(engines, "_loaded", {})
    asked: list[str] = []

    def missing(name: str) -> Any:
        asked.append(name)
        top = name.split(".")[0]
        raise ModuleNotFoundError(f"No module named {top!r}", name=top)

    monkeypatch.setattr(engines, "_import", missing)
    had_sglang = "sglang" in sys.modules
    for dialect in ("hermes", "qwen3_coder"):
        sessions, notes = engines.engine_comparators(dialect)
        assert sessions == {}
        assert [n.split(" (")[0] for n in notes] == ["vllm: not compared", "sglang: not compared"]
        assert all("ModuleNotFoundError" in n and "bench/README.md" in n for n in notes)
    assert ("sglang" in sys.modules) == had_sglang  # a bare package registered for the attempt is taken back
    n = len(asked)
    engines.engine_comparators("hermes")
    assert len(asked) == n  # cached: not tried again


def test_importing_engines_imports_no_engine() -> None:
    code = ("import sys, streamparse.harness.engines, streamparse.harness.benchmark; "
            "print(sorted(m for m in ('vllm', 'sglang', 'torch', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_calls_leave_when_complete_when_the_next_starts_or_at_close() -> None:
    calls = engines.Calls()
    assert calls.add(0, "f", '{"a": ') == []
    assert calls.add(0, None, '{"b": "}"}') == []  # ends with } but is not a whole object yet
    assert calls.add(0, None, "}") == [("f", '{"a": {"b": "}"}}')]
    assert calls.add(0, None, " ") == []  # reported once
    assert calls.add(1, "g", '{"x": 1') == []
    assert calls.add(2, "h", "") == [("g", '{"x": 1')]  # the engine moved on
    assert calls.finish() == [("h", "")]
    assert calls.finish() == []


def test_stand_in_tokenizer_round_trips_and_knows_qwen_specials() -> None:
    tok = engines.StandInTokenizer()
    text = "a<tool_call>\n{}</tool_call><|im_end|>b"
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert ids[1] == tok.get_vocab()["<tool_call>"] == 151657 and ids[3] == 151658
    assert tok.encode("a") == [ids[0]]  # the same piece, the same id
    assert tok.decode(ids, skip_special_tokens=True) == "a<tool_call>\n{}</tool_call>b"
    assert tok.convert_tokens_to_ids(["</think>", "a"]) == [151668, ids[0]]
    assert tok.convert_ids_to_tokens(151667) == "<think>"
    assert tok.all_special_tokens == ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
