"""Where a chat template is read when no server tells it: a ``.jinja`` file, a Hugging Face model folder
(``chat_template.jinja``, ``chat_template.json``, ``tokenizer_config.json``), or a GGUF file's metadata
(``tokenizer.chat_template``, read by ``gguf``); with the end-of-turn tokens the same files name.

Invariants: standard library only; nothing here renders or runs a template (to this module it is text). Every read
is bounded: a template of at most ``MAX_TEMPLATE_CHARS``, a JSON file of at most ``MAX_JSON_BYTES``, and of a GGUF
file only the header and the key-value section (``gguf``). So a truncated, hostile or foreign file is a
``TemplateSourceError`` (one line naming the file and what was wrong), never another exception, a hang, or memory
in proportion to what the file claims.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .errors import TemplateSourceError
from .gguf import read_gguf_metadata

__all__ = ["TemplateSource", "TemplateSourceError", "read_template_source", "model_folder", "choose_template",
           "MAX_TEMPLATE_CHARS", "MAX_JSON_BYTES"]

MAX_TEMPLATE_CHARS = 1 << 20  # the largest real templates are ~20 KB
MAX_JSON_BYTES = 64 << 20  # tokenizer_config.json with a large added_tokens_decoder runs to a few MB
_TEMPLATE_KEY = "tokenizer.chat_template"  # GGUF; named ones are "tokenizer.chat_template.<name>"
_STOP_IDS = ("tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id")


@dataclass(frozen=True)
class TemplateSource:
    """A chat template as a file gave it, with what the same files say about the model's turns."""

    template: str  # the template a request without tools renders with (Jinja text)
    origin: str  # where it was read, e.g. "model.gguf: tokenizer.chat_template"
    named: Mapping[str, str] = field(default_factory=dict)  # every named template ("default", "tool_use", ...)
    bos_token: str | None = None
    eos_token: str | None = None
    stop_tokens: tuple[str, ...] = ()  # end-of-turn tokens the files name (eos, eot, eom), first to last
    model: str | None = None  # the model's name where the files give one (general.name, name_or_path)

    def for_tools(self, tools: bool) -> str:
        """The template a request renders with: ``tool_use`` (where the files name one) when it offers tools."""
        return choose_template(self.named, tools) if self.named else self.template


def choose_template(named: Mapping[str, str], tools: bool) -> str:
    """Of named templates, the one transformers picks: ``tool_use`` for a request with tools (when there is one),
    else ``default``; else the only one; else the first."""
    if tools and "tool_use" in named:
        return named["tool_use"]
    if "default" in named:
        return named["default"]
    return next(iter(named.values()))


def read_template_source(path: str | os.PathLike[str]) -> TemplateSource:
    """The chat template at ``path``: a model folder, a GGUF file (by its magic), a JSON file holding
    ``chat_template`` (``tokenizer_config.json``, ``chat_template.json``), or a template file (``.jinja``)."""
    where = Path(path)
    try:
        if where.is_dir():
            return _read_folder(where)
        with open(where, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise TemplateSourceError(f"{where}: {exc.strerror or exc}") from None
    if magic == b"GGUF":
        return _read_gguf_template(where)
    if where.suffix.lower() == ".gguf":
        raise TemplateSourceError(f"{where}: not a GGUF file (no GGUF magic)")
    if where.suffix.lower() == ".json":
        config = _load_json(where)
        return _with_tokens(_from_config(where, config), config, where.parent)
    return TemplateSource(_read_text(where), where.name)


# -- Hugging Face model folders ---------------------------------------------------------------------------------------

def model_folder(name: str) -> Path | None:
    """Where the files of the model called ``name`` are on this machine: ``name`` itself when it is an absolute path
    (or ``~/...``) that exists, else a Hugging Face id (``org/model``) in the local hub cache (``$HF_HUB_CACHE``,
    ``$HF_HOME/hub`` or ``~/.cache/huggingface/hub``): its ``refs/main`` snapshot, else its newest one. A relative
    name is never looked up in the working directory (a model called ``docs`` is not the folder ``docs``). None when
    there is none."""
    if not name or len(name) > 4096 or "\x00" in name:
        return None
    try:
        here = Path(name).expanduser()
        if here.is_absolute():
            return here if here.exists() else None
    except (OSError, ValueError, RuntimeError):
        return None
    parts = name.split("/")
    if len(parts) != 2 or not all(parts) or any(p in (".", "..") or "\\" in p for p in parts):
        return None
    return _snapshot(_hub_cache() / ("models--" + "--".join(parts)))


def _hub_cache() -> Path:
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    return Path(home).expanduser() / "hub"


def _snapshot(repo: Path) -> Path | None:
    """A hub cache entry's snapshot folder (``refs/main``'s revision, else the newest), or None."""
    snapshots = repo / "snapshots"
    try:
        with open(repo / "refs" / "main", encoding="utf-8") as fh:
            revision = fh.read(256).strip()
    except (OSError, UnicodeDecodeError):
        revision = ""
    try:
        if revision.isalnum() and (snapshots / revision).is_dir():
            return snapshots / revision
        found = [p for p in snapshots.iterdir() if p.is_dir()]
        return max(found, key=lambda p: p.stat().st_mtime) if found else None
    except OSError:
        return None


def _read_folder(folder: Path) -> TemplateSource:
    """A model folder (or a hub cache entry holding ``snapshots/``): ``chat_template.jinja`` (and
    ``additional_chat_templates/*.jinja``) first, as transformers reads it; else ``chat_template.json``; else
    ``tokenizer_config.json``'s ``chat_template``. Token names come from ``tokenizer_config.json`` either way."""
    if (folder / "snapshots").is_dir() and not (folder / "tokenizer_config.json").exists():
        snap = _snapshot(folder)
        if snap is None:
            raise TemplateSourceError(f"{folder}: a hub cache entry without a snapshot")
        folder = snap
    config_path = folder / "tokenizer_config.json"
    config = _load_json(config_path) if config_path.is_file() else {}
    if (folder / "chat_template.jinja").is_file():
        named = {"default": _read_text(folder / "chat_template.jinja")}
        extra = folder / "additional_chat_templates"
        if extra.is_dir():
            for path in sorted(extra.glob("*.jinja"))[:32]:
                named[path.stem] = _read_text(path)
        source = TemplateSource(named["default"], f"{folder.name}/chat_template.jinja", named)
    elif (folder / "chat_template.json").is_file():
        source = _from_config(folder / "chat_template.json", _load_json(folder / "chat_template.json"))
    elif config_path.is_file():
        source = _from_config(config_path, config)
    else:
        raise TemplateSourceError(f"{folder}: no chat_template.jinja, chat_template.json or tokenizer_config.json")
    return _with_tokens(source, config, folder)


def _from_config(path: Path, config: Any) -> TemplateSource:
    """``chat_template`` of a JSON object: a string, or a list of ``{"name", "template"}``."""
    value = config.get("chat_template") if isinstance(config, dict) else None
    named: dict[str, str] = {}
    if isinstance(value, str):
        named["default"] = value
    elif isinstance(value, list):
        for entry in value[:32]:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str) and isinstance(entry.get("template"), str):
                named.setdefault(entry["name"], entry["template"])
    if not named:
        raise TemplateSourceError(f"{path}: no chat_template (a string, or a list of named templates)")
    for text in named.values():
        _check_size(path, text)
    return TemplateSource(choose_template(named, tools=False), f"{path.parent.name}/{path.name}: chat_template", named)


def _with_tokens(source: TemplateSource, config: Any, folder: Path) -> TemplateSource:
    """``source`` with the bos/eos names of ``tokenizer_config.json`` and the stop tokens of
    ``generation_config.json``'s ``eos_token_id`` (one id or a list, named by ``added_tokens_decoder``)."""
    if not isinstance(config, dict):
        return source
    bos, eos = _token_name(config.get("bos_token")), _token_name(config.get("eos_token"))
    stops = [eos] if eos else []
    decoder = config.get("added_tokens_decoder")
    gen_path = folder / "generation_config.json"
    if isinstance(decoder, dict) and gen_path.is_file():
        try:
            generation = _load_json(gen_path)
        except TemplateSourceError:
            generation = {}
        ids = generation.get("eos_token_id") if isinstance(generation, dict) else None
        for token_id in ids if isinstance(ids, list) else [ids]:
            name = _token_name(decoder.get(str(token_id))) if isinstance(token_id, int) else None
            if name and name not in stops:
                stops.append(name)
    model = config.get("name_or_path")
    return TemplateSource(source.template, source.origin, source.named, bos, eos, tuple(stops),
                          model if isinstance(model, str) and model else None)


def _token_name(value: Any) -> str | None:
    """A token as tokenizer_config.json writes it: a string, or an AddedToken ``{"content": ...}``."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) and value else None


def _read_text(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_TEMPLATE_CHARS * 4 + 1)
    except OSError as exc:
        raise TemplateSourceError(f"{path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TemplateSourceError(f"{path}: not UTF-8 text (a chat template is Jinja text)") from None
    _check_size(path, text)
    if not text.strip():
        raise TemplateSourceError(f"{path}: empty")
    return text


def _check_size(path: Path, text: str) -> None:
    if len(text) > MAX_TEMPLATE_CHARS:
        raise TemplateSourceError(f"{path}: a chat template over {MAX_TEMPLATE_CHARS} characters")


def _load_json(path: Path) -> Any:
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise TemplateSourceError(f"{path}: over {MAX_JSON_BYTES} bytes")
        with open(path, "rb") as fh:
            return json.loads(fh.read(MAX_JSON_BYTES + 1))
    except OSError as exc:
        raise TemplateSourceError(f"{path}: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:
        raise TemplateSourceError(f"{path}: not JSON ({str(exc)[:100]})") from None


def _read_gguf_template(path: Path) -> TemplateSource:
    """``tokenizer.chat_template`` (and ``tokenizer.chat_template.<name>``), the bos/eos tokens by their ids in
    ``tokenizer.ggml.tokens``, and the end-of-turn ones (eos, eot, eom)."""
    meta = read_gguf_metadata(path)
    named = {key[len(_TEMPLATE_KEY) + 1:] or "default": value for key, value in meta.values.items()
             if (key == _TEMPLATE_KEY or key.startswith(_TEMPLATE_KEY + ".")) and isinstance(value, str)}
    if "" in named:
        named.pop("")
    if "default" in named:
        named = {"default": named.pop("default"), **named}
    if not named:
        raise TemplateSourceError(f"{path}: no {_TEMPLATE_KEY} in its metadata")
    for text in named.values():
        _check_size(path, text)

    def token(key: str) -> str | None:
        token_id = meta.values.get(key)
        return meta.string_item("tokenizer.ggml.tokens", token_id) if isinstance(token_id, int) else None

    stops = list(dict.fromkeys(t for t in (token(k) for k in _STOP_IDS) if t))
    name = meta.values.get("general.name")
    default = choose_template(named, tools=False)
    return TemplateSource(default, f"{path.name}: {_TEMPLATE_KEY}", named, token("tokenizer.ggml.bos_token_id"),
                          token("tokenizer.ggml.eos_token_id"), tuple(stops), name if isinstance(name, str) else None)
