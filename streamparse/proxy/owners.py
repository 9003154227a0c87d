"""Who owns what the proxy keeps: the identity that authenticated a request, as a keyed hash of its proxy key.

Invariants: a key is never stored or logged, only ``HMAC-SHA256(secret, key)``; the secret is
``owner_secret_env``'s value, else derived from the configured keys (so every worker and every replica with the
same keys names the same owner the same way); with no proxy keys configured there is one owner, ``anonymous``;
a request that passed ``auth`` presented one of the keys, so its owner is that key's.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import Iterable, Sequence

from .auth import presented_key

__all__ = ["Owners", "ANONYMOUS"]

ANONYMOUS = "anonymous"


class Owners:
    """Names a request's owner from its headers (``Authorization: Bearer KEY`` or ``x-api-key``)."""

    def __init__(self, keys: Sequence[str], secret: str | None = None):
        self.keyed = bool(keys)
        material = secret.encode() if secret else b"\0".join([b"streamparse-owner", *sorted(k.encode() for k in keys)])
        self._secret = hashlib.sha256(material).digest()

    @classmethod
    def from_environment(cls, keys: Sequence[str], secret_env: str | None) -> "Owners":
        return cls(keys, os.environ.get(secret_env) if secret_env else None)

    def of(self, headers: Iterable[tuple[bytes, bytes]]) -> str:
        """The owner of a request that passed ``auth``, as hex (``anonymous`` when the proxy has no keys)."""
        if not self.keyed:
            return ANONYMOUS
        key = presented_key(headers) or b""
        return hmac.new(self._secret, key, hashlib.sha256).hexdigest()[:32]
