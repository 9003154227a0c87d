"""The checks a setting passes through, and the error that names the one that failed.

Invariant: every refusal is a ``ConfigError`` with one line that names the setting (and, for a close
miss, the word that was probably meant); a URL with credentials is never repeated in one.
"""

from __future__ import annotations

import difflib
from typing import Any
from urllib.parse import urlsplit

__all__ = ["ConfigError", "did_you_mean", "check_upstream", "redact_url"]


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
