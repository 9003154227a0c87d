"""Masking backend secrets in what a client will *read*: JSON after decoding, stream text across deltas.

An upstream can spell a secret with JSON escapes (``"\\u0073\\u006b\\u002d..."``), which byte-level
redaction (``redaction``) does not see and the client's JSON decoder turns back into the secret. So
every JSON body or event the proxy passes on is masked as decoded strings, and a streamed text
field (``content``, reasoning, a call's ``arguments``) is masked over its concatenation: a tail of
one delta that could begin a secret is held back and joined to the next delta of that field.

Invariants: the text a client gets by joining a stream's deltas (per choice and field) is the
masked text of the whole, however the upstream split it (chunking-invariant); nothing held is
lost (a held tail is sent before anything that follows it in the stream, and at its end); an
event or body that holds no secret is passed on as it was.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from ..wire.shapes import map_strings
from ..wire.sse import SSEDecoder, Output, Wire, dumps, encode_event
from ..wire.surrogates import TEXT_FIELDS
from .redaction import Redactor

__all__ = ["mask_value", "mask_json_bytes", "ChunkMasker", "MaskingWire", "MaskedSSE"]


def mask_value(redactor: Redactor, value: Any) -> tuple[Any, int]:
    """``value`` (decoded JSON, changed in place) with every string and key masked; and how many changed."""
    return map_strings(value, redactor.text)


def _loads(text: str | bytes) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)  # what orjson refuses (NaN, lone surrogates...); ValueError if not JSON


def mask_json_bytes(redactor: Redactor, raw: bytes) -> bytes:
    """A body as its client will decode it, secrets masked: bytes masking, then (if the body may hold an
    escape) the decoded JSON; re-encoded only when that changed something."""
    if not redactor:
        return raw
    data = redactor.data(raw)
    if b"\\" not in data:
        return data
    try:
        value = _loads(data)
    except (ValueError, RecursionError):
        return data
    value, changed = mask_value(redactor, value)
    return dumps(value).encode("utf-8", "replace") if changed else data


class ChunkMasker:
    """Outputs of a rewritten stream -> the same, masked (see the module invariants)."""

    def __init__(self, redactor: Redactor):
        self.redactor = redactor
        self._held: dict[tuple[Any, ...], str] = {}  # (choice index, field[, call index]) -> held tail
        self._envelope: dict[str, Any] = {}

    def outputs(self, outputs: list[Output]) -> list[Output]:
        out: list[Output] = []
        for kind, value in outputs:
            if kind == "chunk" and isinstance(value, dict):
                out.extend(self._chunk(value))
            elif kind in ("comment", "raw"):
                out.append((kind, self.redactor.text(value)))
            else:
                out.extend(self.flush())
                out.append((kind, mask_value(self.redactor, value)[0] if kind == "error" else value))
        return out

    def flush(self, keep: frozenset[tuple[Any, ...]] = frozenset()) -> list[Output]:
        """Held tails (but those in ``keep``) as chunks of their own, in the order they were held."""
        out: list[Output] = []
        for key in [k for k in self._held if k not in keep]:
            tail = self.redactor.text(self._held.pop(key))
            if key[1] == "tool":
                delta: dict[str, Any] = {"tool_calls": [{"index": key[2], "function": {"arguments": tail}}]}
            else:
                delta = {key[1]: tail}
            out.append(("chunk", {**self._envelope, "choices": [{"index": key[0], "delta": delta,
                                                                 "finish_reason": None}]}))
        return out

    def _text(self, key: tuple[Any, ...], text: str, hold: bool = True) -> str:
        """This delta's text, masked; its tail that could begin a secret is held (unmasked) for the next."""
        text = self._held.pop(key, "") + text
        cut = self.redactor.safe_cut(text) if hold else len(text)
        if cut < len(text):
            self._held[key] = text[cut:]
        return self.redactor.text(text[:cut])

    def _chunk(self, chunk: dict[str, Any]) -> list[Output]:
        self._envelope = {k: v for k, v in chunk.items() if k in ("id", "object", "created", "model")}
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            return self.flush() + [("chunk", chunk)]
        pieces: list[tuple[tuple[Any, ...], dict[str, Any], str, bool]] = []  # (key, where, field, last)
        new_choices = []
        for choice in choices:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                new_choices.append(choice)
                continue
            delta = dict(delta)
            index = choice.get("index", 0)
            last = choice.get("finish_reason") is not None  # nothing of this choice may come after it
            for field in TEXT_FIELDS:
                if isinstance(delta.get(field), str):
                    pieces.append(((index, field), delta, field, last))
            if isinstance(delta.get("tool_calls"), list):
                calls = delta["tool_calls"] = [dict(tc) if isinstance(tc, dict) else tc for tc in delta["tool_calls"]]
                for tc in calls:
                    fn = tc.get("function") if isinstance(tc, dict) else None
                    if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                        fn = tc["function"] = dict(fn)
                        pieces.append(((index, "tool", tc.get("index")), fn, "arguments", last))
            new_choices.append({**choice, "delta": delta})
        out = self.flush(keep=frozenset(key for key, _, _, _ in pieces))  # what this chunk does not continue
        for key, where, field, last in pieces:
            where[field] = self._text(key, where[field], hold=not last)
        out.append(("chunk", {**chunk, "choices": new_choices}))
        return out


class MaskingWire:
    """A ``Wire`` that masks the outputs (``ChunkMasker``), then the bytes, before the client sees them."""

    def __init__(self, inner: Wire, redactor: Redactor):
        self.inner = inner
        self.redactor = redactor
        self.masker = ChunkMasker(redactor)

    def encode(self, outputs: list[Output]) -> bytes:
        return self.redactor.data(self.inner.encode(self.masker.outputs(outputs)))


class MaskedSSE:
    """An SSE body relayed (not rewritten) with its events masked as decoded: chunk text across deltas
    (``ChunkMasker``), any other JSON event as decoded, other data and comments as text."""

    def __init__(self, redactor: Redactor):
        self.redactor = redactor
        self.masker = ChunkMasker(redactor)
        self.decoder = SSEDecoder()

    def feed(self, raw: bytes) -> bytes:
        return b"".join(self._event(e) for e in self.decoder.feed(raw))

    def close(self) -> bytes:
        data = b"".join(self._event(e) for e in self.decoder.close())
        return data + self._encode(self.masker.flush(), None)

    def _encode(self, outputs: list[Output], event: str | None) -> bytes:
        return b"".join(encode_event(dumps(value), event=event) for _, value in outputs)

    def _event(self, event: Any) -> bytes:
        if event.data is None:
            return encode_event(comment=self.redactor.text(event.comment or ""))
        try:
            value = _loads(event.data)
        except (ValueError, RecursionError):
            return self._encode(self.masker.flush(), None) + encode_event(self.redactor.text(event.data),
                                                                          event=event.event)
        if isinstance(value, dict) and isinstance(value.get("choices"), list):
            return self.redactor.data(self._encode(self.masker.outputs([("chunk", value)]), event.event))
        held = self._encode(self.masker.flush(), None)
        value, changed = mask_value(self.redactor, value)
        text = dumps(value) if changed else self.redactor.text(event.data)
        return held + encode_event(text, event=event.event)
