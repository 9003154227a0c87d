"""Runs of plain text chunks that arrived together, said as one chunk (sans-I/O).

A *plain* chunk is a ``chat.completion.chunk`` whose one choice says only text: ``delta`` holds ``content``
(a string) and nothing else that is not null, no ``logprobs``, no finish, no other choice field. Consecutive
plain chunks of one upstream read, for the same choice index and with the same envelope (every field but
``choices`` equal and of the same scalar type: id, object, created, model, system_fingerprint, a null usage...),
say together exactly what one such chunk with their texts joined says: the rewrite reads that chunk instead
(one parse, one encoding).

Invariants: only chunks already at hand are joined (nothing waits for a later read); text keeps its order
and every character; any chunk that is not plain, or whose envelope, choice index or other delta fields differ
from the run's first, ends the run and is applied on its own, as it came; a run of one is left as it came.
"""

from __future__ import annotations

from typing import Any

__all__ = ["join_plain_runs"]

_SCALARS = (str, int, float, bool, type(None))
_CHOICE_KEYS = frozenset(("index", "delta", "finish_reason", "logprobs"))


def _plain(chunk: Any) -> str | None:
    """The text of a plain chunk (see the module), else None."""
    if type(chunk) is not dict:
        return None
    choices = chunk.get("choices")
    if type(choices) is not list or len(choices) != 1:
        return None
    choice = choices[0]
    if (type(choice) is not dict or choice.get("finish_reason", 0) is not None or choice.get("logprobs") is not None
            or type(choice.get("index")) is not int or not _CHOICE_KEYS.issuperset(choice)):
        return None
    delta = choice.get("delta")
    if type(delta) is not dict:
        return None
    text = delta.get("content")
    if type(text) is not str or not text:
        return None
    if len(delta) > 1 and any(v is not None for k, v in delta.items() if k != "content"):
        return None
    for key, value in chunk.items():
        if key != "choices" and type(value) not in _SCALARS:
            return None
    return text


def _same_run(chunk: dict[str, Any], first: dict[str, Any]) -> bool:
    """Plain ``chunk`` says its text under exactly ``first``'s envelope, choice index and other fields."""
    if len(chunk) != len(first):
        return False
    for key, value in chunk.items():
        if key != "choices":
            other = first.get(key, _MISSING)
            if type(other) is not type(value) or other != value:
                return False
    choice, head = chunk["choices"][0], first["choices"][0]
    if choice.keys() != head.keys() or choice["index"] != head["index"]:
        return False
    same: bool = choice["delta"].keys() == head["delta"].keys()  # (the others are all null)
    return same


_MISSING = object()


def _joined(first: dict[str, Any], texts: list[str]) -> dict[str, Any]:
    choice = first["choices"][0]
    return {**first, "choices": [{**choice, "delta": {**choice["delta"], "content": "".join(texts)}}]}


def join_plain_runs(decoded: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Decoded upstream events (``("chunk", value)`` and others) with each run of two or more consecutive plain
    chunks of one choice and envelope replaced by one ``("chunk", joined)``; everything else as it came."""
    out: list[tuple[str, Any]] = []
    first: dict[str, Any] | None = None  # the open run's first chunk
    texts: list[str] = []
    for item in decoded:
        text = _plain(item[1]) if item[0] == "chunk" else None
        if text is not None and first is not None and _same_run(item[1], first):
            texts.append(text)
            continue
        if first is not None:
            out.append(("chunk", _joined(first, texts) if len(texts) > 1 else first))
            first = None
        if text is not None:
            first, texts = item[1], [text]
        else:
            out.append(item)
    if first is not None:
        out.append(("chunk", _joined(first, texts) if len(texts) > 1 else first))
    return out
