"""Keeping backend secrets inside the proxy.

Invariant: no byte string the proxy sends to a client, and no log record it
writes, contains a configured backend key or URL credential. Bodies are
redacted as they stream: the only bytes held back are a tail that could be the
start of a secret, which for SSE (events end in a newline; secrets hold none)
is nothing. This module masks bytes and text as they are; JSON, which can spell a
secret with escapes (``\u0073k-...``), is masked after decoding by ``masking``.
"""

from __future__ import annotations

import logging
from typing import Iterable

__all__ = ["Redactor", "StreamRedactor", "RedactingFilter", "MASK"]

MASK = "***"


class Redactor:
    """Replaces each secret (at least 4 characters long) by ``***`` in text and bytes."""

    def __init__(self, secrets: Iterable[str]):
        self.secrets = sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)
        self._raw = [s.encode() for s in self.secrets]
        self.longest = max((len(s) for s in self._raw), default=0)
        self._newline_free = all(b"\n" not in s for s in self._raw)
        self._prefixes = {s[:n] for s in self.secrets for n in range(1, len(s))}  # proper prefixes
        self._firsts = {s[0] for s in self.secrets}

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def data(self, data: bytes) -> bytes:
        for secret in self._raw:
            if secret in data:
                data = data.replace(secret, MASK.encode())
        return data

    def unsafe_tail(self, data: bytes) -> int:
        """Length of the longest suffix of ``data`` that begins some secret (to hold back)."""
        if not self._raw or (self._newline_free and data.endswith(b"\n")):
            return 0
        for n in range(min(len(data), self.longest - 1), 0, -1):
            tail = data[-n:]
            if any(s.startswith(tail) for s in self._raw):
                return n
        return 0

    def safe_cut(self, text: str) -> int:
        """Where unmasked stream text may be cut, so that masking each side alone masks what masking
        the whole would: before the longest suffix that begins some secret (a whole shorter secret
        that begins a longer one included), and never inside an occurrence of a secret."""
        cut = len(text)
        for i in range(max(0, len(text) - self.longest + 1), len(text)):  # the longest such suffix first
            if text[i] in self._firsts and text[i:] in self._prefixes:
                cut = i
                break
        moved = True
        while moved:
            moved = False
            for secret in self.secrets:
                start = text.find(secret, max(0, cut - len(secret) + 1))
                if 0 <= start < cut < start + len(secret):
                    cut, moved = start, True
        return cut

    def stream(self) -> "StreamRedactor":
        return StreamRedactor(self)


class StreamRedactor:
    """Redacts a body that arrives in pieces, even when a secret is split between them."""

    def __init__(self, redactor: Redactor):
        self._redactor = redactor
        self._tail = b""

    def feed(self, piece: bytes) -> bytes:
        if not self._redactor:
            return piece
        data = self._redactor.data(self._tail + piece) if self._tail else self._redactor.data(piece)
        keep = self._redactor.unsafe_tail(data)
        self._tail = data[len(data) - keep:] if keep else b""
        return data[: len(data) - keep] if keep else data

    def close(self) -> bytes:
        rest, self._tail = self._tail, b""
        return rest


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in the message and the traceback of every record it sees."""

    def __init__(self, redactor: Redactor):
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.redactor:
            return True
        message = record.getMessage()
        clean = self.redactor.text(message)
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.text(record.exc_text)
        return True

    def install(self, *loggers: str) -> None:
        for name in loggers:
            logger = logging.getLogger(name)
            if not any(isinstance(f, RedactingFilter) and f.redactor.secrets == self.redactor.secrets
                       for f in logger.filters):
                logger.addFilter(self)
