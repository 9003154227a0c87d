"""Reading a chat template from a path (``streamparse.templates.sources``, GGUF metadata by ``templates.gguf``): llama.cpp's 71 real template files, a
real GGUF header (Qwen2.5-Coder-0.5B), Hugging Face folders and hub cache entries built from real templates, and
GGUF files written here byte by byte, well formed (every value type, both byte orders) and hostile (every cut of
a real header, lengths and counts that claim gigabytes, random corruption): a file is read, or refused with a
``TemplateSourceError`` naming it; never another exception, and never more memory than the file holds."""

from __future__ import annotations

import json
import struct
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from budget import examples
from streamparse.templates.gguf import ArrayRef, GGUFLimits, read_gguf_metadata
from streamparse.templates.sources import TemplateSourceError, choose_template, model_folder, read_template_source
from template_files import llama_cpp_templates, qwen_gguf_head

QWEN_EOS = 151645  # <|im_end|> in Qwen2.5's vocabulary


@pytest.fixture(scope="module")
def templates() -> Path:
    return llama_cpp_templates()


@pytest.fixture(scope="module")
def gguf() -> Path:
    return qwen_gguf_head()


# -- a tiny GGUF writer, for files of our own making --------------------------------------------------------------

_FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def _string(text: str | bytes, order: str = "<") -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack(order + "Q", len(raw)) + raw


def _value(kind: int, value: Any, order: str = "<") -> bytes:
    if kind == 8:
        return _string(value, order)
    if kind == 9:
        item, items = value
        return struct.pack(order + "IQ", item, len(items)) + b"".join(_value(item, v, order) for v in items)
    return struct.pack(order + _FORMATS[kind], value)


def gguf_bytes(pairs: list[tuple[str, int, Any]], *, order: str = "<", version: int = 3, tensors: int = 0) -> bytes:
    head = b"GGUF" + struct.pack(order + "Iqq", version, tensors, len(pairs))
    return head + b"".join(_string(key, order) + struct.pack(order + "I", kind) + _value(kind, value, order)
                           for key, kind, value in pairs)


EVERY_TYPE = [
    ("u8", 0, 200), ("i8", 1, -100), ("u16", 2, 60000), ("i16", 3, -30000), ("u32", 4, 4_000_000_000),
    ("i32", 5, -2_000_000_000), ("f32", 6, 1.5), ("bool", 7, True), ("text", 8, "héllo <|im_end|>"),
    ("u64", 10, 2**63 + 5), ("i64", 11, -(2**62)), ("f64", 12, -0.25),
    ("small", 9, (5, [1, 2, 3])), ("words", 9, (8, ["a", "bé", ""])), ("nested", 9, (9, [(4, [1, 2]), (8, ["x"])])),
    ("tokens", 9, (8, [f"<t{i}>" for i in range(300)])), ("ids", 9, (5, list(range(100)))),
    ("tokenizer.ggml.eos_token_id", 4, 7), ("tokenizer.ggml.eot_token_id", 4, 9),
]


# -- real files ---------------------------------------------------------------------------------------------------

def test_every_llama_cpp_template_file_reads_as_its_text(templates: Path) -> None:
    files = sorted(templates.glob("*.jinja"))
    assert len(files) == 71
    for path in files:
        source = read_template_source(path)
        assert source.template == path.read_text(encoding="utf-8"), path.name
        assert source.origin == path.name and source.for_tools(True) == source.template


def test_the_qwen_gguf_header_gives_its_template_and_turn_tokens(gguf: Path, templates: Path) -> None:
    source = read_template_source(gguf)
    # The GGUF carries the same template llama.cpp ships as Qwen2.5-7B-Instruct's.
    assert source.template == (templates / "Qwen-Qwen2.5-7B-Instruct.jinja").read_text(encoding="utf-8")
    assert source.origin == f"{gguf.name}: tokenizer.chat_template" and list(source.named) == ["default"]
    assert (source.bos_token, source.eos_token, source.stop_tokens) == ("<|endoftext|>", "<|im_end|>", ("<|im_end|>",))
    assert source.model == "Qwen2.5 Coder 0.5B Instruct AWQ"


def test_the_qwen_gguf_metadata_reads_only_its_header(gguf: Path) -> None:
    meta = read_gguf_metadata(gguf)
    assert (meta.version, meta.tensors, meta.byte_order, meta.end) == (3, 291, "<", 5_931_198)
    values = meta.values
    assert values["general.architecture"] == "qwen2" and values["qwen2.context_length"] == 32768
    tokens = values["tokenizer.ggml.tokens"]
    assert isinstance(tokens, ArrayRef) and tokens.count == 151936 and tokens.item_type == 8
    assert values["tokenizer.ggml.eos_token_id"] == QWEN_EOS and values["tokenizer.ggml.add_bos_token"] is False
    assert meta.string_item("tokenizer.ggml.tokens", QWEN_EOS) == "<|im_end|>"
    assert meta.string_item("tokenizer.ggml.tokens", 0) == "!"
    assert meta.string_item("tokenizer.ggml.tokens", tokens.count) is None
    assert meta.string_item("tokenizer.ggml.token_type", 0) is None  # not a string array


def test_every_cut_of_the_real_header_is_refused_or_read_whole(gguf: Path, tmp_path: Path) -> None:
    """A file cut anywhere in its header is a TemplateSourceError; past the key-value section it reads in full."""
    raw = gguf.read_bytes()[:5_931_198 + 64]
    cuts = [0, 3, 4, 8, 15, 23, 24, 30, 798, 799, 2_589_093, 5_931_000, 5_931_197]
    path = tmp_path / "cut.gguf"
    for cut in cuts:
        path.write_bytes(raw[:cut])
        with pytest.raises(TemplateSourceError, match="cut.gguf"):
            read_template_source(path)
    path.write_bytes(raw[:5_931_198])
    assert read_template_source(path).eos_token == "<|im_end|>"


# -- GGUF files of our own making -----------------------------------------------------------------------------------

@pytest.mark.parametrize("order", ["<", ">"])
def test_every_value_type_reads_back_in_either_byte_order(tmp_path: Path, order: str) -> None:
    path = tmp_path / "all.gguf"
    pairs = EVERY_TYPE + [("tokenizer.chat_template", 8, "{{ messages[0].content }}"),
                          ("tokenizer.chat_template.tool_use", 8, "{{ tools | tojson }}"),
                          ("tokenizer.ggml.tokens", 9, (8, [f"tok{i}" for i in range(70)])),
                          ("general.name", 8, "Tiny")]
    path.write_bytes(gguf_bytes(pairs, order=order, version=2, tensors=4))
    meta = read_gguf_metadata(path)
    assert (meta.version, meta.tensors, meta.byte_order) == (2, 4, order)
    got = meta.values
    for key, kind, value in EVERY_TYPE:
        if kind == 9 and len(value[1]) > 64:
            ref = got[key]
            assert isinstance(ref, ArrayRef) and (ref.item_type, ref.count) == (value[0], len(value[1]))
        elif kind == 9 and value[0] == 9:
            assert got[key] == tuple(tuple(inner) for _, inner in value[1])
        elif kind == 9:
            assert got[key] == tuple(value[1])
        else:
            assert got[key] == value, key
    assert meta.string_item("tokens", 299) == "<t299>" and meta.string_item("words", 1) == "bé"
    source = read_template_source(path)
    assert source.named == {"default": "{{ messages[0].content }}", "tool_use": "{{ tools | tojson }}"}
    assert source.for_tools(True) == "{{ tools | tojson }}" and source.for_tools(False) == source.template
    assert (source.eos_token, source.stop_tokens, source.model) == ("tok7", ("tok7", "tok9"), "Tiny")


@pytest.mark.parametrize("pairs, said", [
    ([("k", 8, "x" * 10)], None),  # (a well-formed file; the cases below spoil it)
    ([("tokenizer.chat_template", 13, 0)], "unknown value type 13"),
    ([("a", 9, (42, []))], "unknown array item type 42"),
])
def test_unknown_types_are_refused(tmp_path: Path, pairs: list[tuple[str, int, Any]], said: str | None) -> None:
    path = tmp_path / "t.gguf"
    key, kind, value = pairs[0]
    path.write_bytes(gguf_bytes(pairs) if kind != 13 else
                     b"GGUF" + struct.pack("<Iqq", 3, 0, 1) + _string(key) + struct.pack("<I", kind))
    if said is None:
        assert read_gguf_metadata(path).values == {"k": "x" * 10}
        with pytest.raises(TemplateSourceError, match="no tokenizer.chat_template"):
            read_template_source(path)
        return
    with pytest.raises(TemplateSourceError, match=said):
        read_gguf_metadata(path)


def _claims(tmp_path: Path, body: bytes) -> str:
    path = tmp_path / "claims.gguf"
    path.write_bytes(body)
    tracemalloc.start()
    try:
        with pytest.raises(TemplateSourceError) as caught:
            read_template_source(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"{peak} bytes allocated for a file of {len(body)}"
    return str(caught.value)


def test_lengths_and_counts_that_claim_gigabytes_allocate_nothing(tmp_path: Path) -> None:
    head = b"GGUF" + struct.pack("<Iqq", 3, 0, 1)
    key = _string("tokenizer.chat_template")
    assert "claims 4611686018427387904 metadata keys" in _claims(tmp_path, b"GGUF" + struct.pack("<Iqq", 3, 0, 2**62))
    assert "a string of 1099511627776 bytes" in _claims(tmp_path, head + key + struct.pack("<IQ", 8, 1 << 40) + b"x")
    assert "truncated" in _claims(tmp_path, head + key + struct.pack("<IQ", 8, 1 << 23) + b"x" * 100)
    assert "an array of 18446744073709551615 items" in _claims(
        tmp_path, head + key + struct.pack("<IIQ", 9, 8, 2**64 - 1))
    assert "an array of 1000000 items" in _claims(tmp_path, head + key + struct.pack("<IIQ", 9, 12, 10**6) + b"\0" * 64)
    deep = head + key + struct.pack("<IIQ", 9, 9, 1) + struct.pack("<IQ", 9, 1) * 3 + struct.pack("<IQ", 4, 0)
    assert "nested over 3 deep" in _claims(tmp_path, deep)
    assert "a string of 1073741824 bytes" in _claims(tmp_path, head + struct.pack("<Q", 1 << 30))  # (a key)


def test_a_section_over_the_header_budget_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.gguf"
    path.write_bytes(gguf_bytes([("pad", 8, "x" * 5000), ("tokenizer.chat_template", 8, "{{ x }}")]))
    with pytest.raises(TemplateSourceError, match="over 4096 bytes"):
        read_gguf_metadata(path, GGUFLimits(max_header=4096))
    assert read_gguf_metadata(path).values["tokenizer.chat_template"] == "{{ x }}"


@pytest.mark.parametrize("version", [1, 4, 0x0300])
def test_other_versions_are_refused(tmp_path: Path, version: int) -> None:
    path = tmp_path / "v.gguf"
    path.write_bytes(gguf_bytes([("tokenizer.chat_template", 8, "{{ x }}")], version=version))
    with pytest.raises(TemplateSourceError, match=f"GGUF version {version} "):
        read_template_source(path)


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_random_corruption_is_read_or_refused(tmp_path: Path, data: st.DataObject) -> None:
    raw = bytearray(gguf_bytes(EVERY_TYPE + [("tokenizer.chat_template", 8, "{{ 1 }}")]))
    for _ in range(data.draw(st.integers(1, 6))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    raw = raw[:data.draw(st.integers(0, len(raw)))]
    path = tmp_path / "fuzz.gguf"
    path.write_bytes(bytes(raw))
    try:
        read_template_source(path)
    except TemplateSourceError as exc:
        assert "fuzz.gguf" in str(exc)


# -- Hugging Face folders, hub cache entries, JSON and text files ---------------------------------------------------

def _folder(root: Path, files: dict[str, Any]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return root


def test_a_folder_with_chat_template_jinja_reads_it_first(tmp_path: Path, templates: Path) -> None:
    qwen3 = (templates / "Qwen-Qwen3-0.6B.jinja").read_text(encoding="utf-8")
    hermes = (templates / "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja").read_text(encoding="utf-8")
    folder = _folder(tmp_path / "Qwen3-0.6B", {
        "chat_template.jinja": qwen3, "additional_chat_templates/tool_use.jinja": hermes,
        "tokenizer_config.json": {"chat_template": "{{ 'older' }}", "eos_token": "<|im_end|>",
                                  "bos_token": None, "name_or_path": "Qwen/Qwen3-0.6B",
                                  "added_tokens_decoder": {"151643": {"content": "<|endoftext|>", "special": True},
                                                           "151645": {"content": "<|im_end|>", "special": True}}},
        "generation_config.json": {"eos_token_id": [151645, 151643]}})
    source = read_template_source(folder)
    assert source.template == qwen3 and source.named == {"default": qwen3, "tool_use": hermes}
    assert source.origin == "Qwen3-0.6B/chat_template.jinja"
    assert (source.eos_token, source.bos_token, source.model) == ("<|im_end|>", None, "Qwen/Qwen3-0.6B")
    assert source.stop_tokens == ("<|im_end|>", "<|endoftext|>")


def test_tokenizer_config_with_named_templates_picks_as_transformers_does(tmp_path: Path, templates: Path) -> None:
    default = (templates / "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja").read_text(encoding="utf-8")
    tool_use = (templates / "CohereForAI-c4ai-command-r-plus-tool_use.jinja").read_text(encoding="utf-8")
    folder = _folder(tmp_path / "command-r", {"tokenizer_config.json": {
        "chat_template": [{"name": "default", "template": default}, {"name": "tool_use", "template": tool_use},
                          {"name": "rag", "template": "{{ documents }}"}, {"oops": 1}],
        "eos_token": {"content": "<|END_OF_TURN_TOKEN|>", "lstrip": False}}})
    source = read_template_source(folder)
    assert source.template == default and source.for_tools(True) == tool_use and source.for_tools(False) == default
    assert list(source.named) == ["default", "tool_use", "rag"] and source.eos_token == "<|END_OF_TURN_TOKEN|>"
    assert source.origin == "command-r/tokenizer_config.json: chat_template"
    direct = read_template_source(folder / "tokenizer_config.json")
    assert direct.named == source.named and direct.eos_token == source.eos_token
    assert choose_template({"rag": "r", "tool_use": "t"}, tools=False) == "r"


def test_a_chat_template_json_folder(tmp_path: Path, templates: Path) -> None:
    gemma = (templates / "google-gemma-2-2b-it.jinja").read_text(encoding="utf-8")
    folder = _folder(tmp_path / "gemma", {"chat_template.json": {"chat_template": gemma}})
    assert read_template_source(folder).template == gemma


def test_model_folder_finds_a_hub_cache_snapshot(tmp_path: Path, templates: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    qwen = (templates / "Qwen-Qwen2.5-7B-Instruct.jinja").read_text(encoding="utf-8")
    entry = tmp_path / "hub" / "models--Qwen--Qwen2.5-7B-Instruct"
    _folder(entry / "snapshots" / "abc123", {"tokenizer_config.json": {"chat_template": qwen}})
    _folder(entry / "snapshots" / "old", {"tokenizer_config.json": {"chat_template": "{{ 'old' }}"}})
    (entry / "refs").mkdir()
    (entry / "refs" / "main").write_text("abc123")
    found = model_folder("Qwen/Qwen2.5-7B-Instruct")
    assert found == entry / "snapshots" / "abc123" and read_template_source(found).template == qwen
    assert read_template_source(entry).template == qwen  # the cache entry itself
    assert model_folder("Qwen/absent") is None and model_folder("not-an-id") is None and model_folder("") is None
    assert model_folder("../etc") is None and model_folder("a/../b") is None
    assert model_folder(str(templates)) == templates
    # A relative name is a model's name, never a folder of the working directory.
    monkeypatch.chdir(tmp_path)
    _folder(tmp_path / "Qwen" / "local", {"tokenizer_config.json": {"chat_template": qwen}})
    _folder(tmp_path / "docs", {"tokenizer_config.json": {"chat_template": qwen}})
    assert model_folder("Qwen/local") is None and model_folder("docs") is None


@pytest.mark.parametrize("name, content, said", [
    ("missing.jinja", None, "No such file"),
    ("empty.jinja", "", "empty"),
    ("latin.jinja", b"\xe9t\xe9", "not UTF-8"),
    ("fake.gguf", "{{ x }}", "not a GGUF file"),
    ("tokenizer_config.json", {"eos_token": "x"}, "no chat_template"),
    ("broken.json", "{", "not JSON"),
])
def test_what_is_not_a_template_is_refused_naming_the_file(tmp_path: Path, name: str, content: Any,
                                                           said: str) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises(TemplateSourceError, match=said) as caught:
        read_template_source(path)
    assert name in str(caught.value)


def test_a_folder_without_a_template_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TemplateSourceError, match="bare: no chat_template.jinja"):
        read_template_source(_folder(tmp_path / "bare", {"config.json": {}}))
