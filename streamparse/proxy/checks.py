"""The checks a setting passes through, and the error that names the one that failed.

Invariant: every refusal is a ``ConfigError`` with one line that names the setting (and, for a close
miss, the word that was probably meant); a URL with credentials is never repeated in one.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
from typing import Any
from urllib.parse import urlsplit

__all__ = ["ConfigError", "did_you_mean", "check_upstream", "redact_url", "check_store_url", "key_pairs", "STORE_SCHEMES",
           "check_chat_template", "CHAT_TEMPLATE_MODES"]


class ConfigError(ValueError):
    """The configuration file (or command line) says something we cannot use."""


def did_you_mean(words: Any, known: Any) -> str:
    """``" (did you mean 'models'?)"`` for the unknown ``words`` that are close to a ``known`` one, else ``""``."""
    pairs = [(w, close[0]) for w in sorted(words) if (close := difflib.get_close_matches(str(w), sorted(known), n=1))]
    return " (did you mean " + ", ".join(f"{c!r} for {w!r}" if len(pairs) > 1 else repr(c) for w, c in pairs) + "?)" \
        if pairs else ""


def check_upstream(url: Any, where: str = "upstream") -> str:
    """An http(s) base URL with a host, without its trailing slash; else ConfigError."""
    if not isinstance(url, str):
        raise ConfigError(f"{where} must be an http(s) URL such as http://127.0.0.1:8000/v1")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ConfigError(f"{where} must be an http(s) URL such as http://127.0.0.1:8000/v1, not {redact_url(url)!r}")
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise ConfigError(f"{where} has an invalid port: {redact_url(url)!r}") from None
    return url.strip().rstrip("/")


def redact_url(url: str) -> str:
    """``http://user:pass@host/v1`` -> ``http://***@host/v1``: URLs with credentials are never shown."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        authority = "***@" + authority.rsplit("@", 1)[1]
    return f"{scheme}://{authority}{slash}{path}"


STORE_SCHEMES = ("redis", "rediss")  # a shared responses_store's URL schemes; "memory" is the other value


def check_store_url(value: Any) -> str:
    """``responses_store``: ``memory``, or a ``redis://`` / ``rediss://`` URL with a host (ConfigError otherwise)."""
    if value == "memory":
        return "memory"
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is None or parts.scheme not in STORE_SCHEMES or not parts.hostname:
        shown = redact_url(value.partition("?")[0]) if isinstance(value, str) else value  # (no ?password=)
        raise ConfigError(f"[server] responses_store must be \"memory\" or a redis:// or rediss:// URL with a host, "
                          f"not {shown!r}")
    return str(value)


@functools.lru_cache(maxsize=16)
def key_pairs(raw: str) -> dict[str, str] | None:
    """``A=X,B=Y`` (or a JSON object, for keys that hold ``=`` or ``,``) -> ``{"A": "X", "B": "Y"}`` (read once per
    value); None when it is empty or malformed."""
    if raw.lstrip().startswith("{"):
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        ok = isinstance(value, dict) and value and all(isinstance(k, str) and k.strip() and isinstance(v, str)
                                                       and v.strip() for k, v in value.items())
        return {k.strip(): v.strip() for k, v in value.items()} if ok else None
    pairs = [part.strip().partition("=") for part in raw.split(",") if part.strip()]
    if not pairs or any(not sep or not key.strip() or not value.strip() for key, sep, value in pairs):
        return None
    return {key.strip(): value.strip() for key, _, value in pairs}


CHAT_TEMPLATE_MODES = ("auto", "off")  # a backend's ``chat_template``, besides a path


def check_chat_template(value: Any, where: str) -> str:
    """``chat_template``: ``auto``, ``off``, or the path of a file or folder that exists (``~`` expanded); the file
    itself is read when the proxy starts (``proxy.chat_templates``). ConfigError otherwise."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: chat_template must be \"auto\", \"off\" or the path of a .jinja file, a model "
                          f"folder or a GGUF file, not {value!r}")
    if value in CHAT_TEMPLATE_MODES:
        return value
    path = os.path.expanduser(value)
    if not os.path.exists(path):
        hint = did_you_mean([value], CHAT_TEMPLATE_MODES) if os.sep not in value else ""
        raise ConfigError(f"{where}: chat_template {value!r} is neither \"auto\", \"off\" nor a file or folder "
                          f"that exists{hint}")
    return path
