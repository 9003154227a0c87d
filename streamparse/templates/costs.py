"""What a template's value weighs, and what an operation would make, estimated before it runs (for the sandbox).

Invariant: ``weight`` counts a value as the text it can become: a string or bytes by its length, an int by its
digits, a container by its members, each member as often as it is held (a list holding one list twice weighs it
twice), so a value that weighs at most ``n`` prints as roughly ``n`` characters; it stops counting past ``cap``
(shared or cyclic structure costs at most ``cap`` steps). The ``*_estimate`` functions give, from an operation's
inputs alone, a bound on the size of what it makes where the inputs' weights do not bound it (a separator times
the items it joins, a width times the fields or lines it pads, a base's digits times its exponent); 0 where they do.
Nothing here renders, raises or keeps state.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sized
from itertools import chain
from typing import Any, Mapping

__all__ = ["weight", "shape", "call_estimate", "filter_estimate", "binop_estimate", "INT_DIGITS", "UNSIZED_ITEMS"]

INT_DIGITS = 20_000  # digits an int may reach (Python prints at most 4,300 by default)
UNSIZED_ITEMS = 100_000  # items an iterator of unknown length is taken to yield (jinja's range gives at most this)
_NUMBER = re.compile(r"\d{1,12}")
_FLOAT_WEIGHT = 24  # characters the longest float repr takes
_END = object()


def weight(value: Any, cap: int) -> int:
    """``value``'s weight (see the module), or a number above ``cap`` as soon as it passes it."""
    return shape(value, cap)[0]


def shape(value: Any, cap: int) -> tuple[int, int]:
    """``value``'s weight (above ``cap`` as soon as it passes it) and how deep its containers nest. A container held
    again is weighed once (its weight counted each time), so shared structure costs its distinct containers; one
    that holds itself weighs more than any cap."""
    if not isinstance(value, _CONTAINERS):
        return _scalar(value), 0
    done: dict[int, tuple[int, int]] = {}
    frames: list[list[Any]] = [[value, _members(value), 1, 0]]  # container, its members left, weight, depth below
    open_ids = {id(value)}
    total = 1  # (the weight of every open container so far)
    while frames:
        frame = frames[-1]
        member: Any = next(frame[1], _END)
        if member is _END:
            frames.pop()
            open_ids.discard(id(frame[0]))
            done[id(frame[0])] = (frame[2], frame[3] + 1)
            if not frames:
                return frame[2], frame[3] + 1
            frames[-1][2] += frame[2]
            frames[-1][3] = max(frames[-1][3], frame[3] + 1)
            continue
        kind = type(member)
        if kind is str or kind is bytes:  # (the common members first: a list of strings is weighed fast)
            added = len(member)
            frame[2] += added
        elif kind is int:
            added = member.bit_length() * 3 // 10 + 1
            frame[2] += added
        elif isinstance(member, _CONTAINERS):
            if id(member) in open_ids:
                return cap + 1, len(frames)
            known = done.get(id(member))
            if known is None:
                frames.append([member, _members(member), 1, 0])
                open_ids.add(id(member))
                added = 1
            else:
                frame[2] += known[0]
                frame[3] = max(frame[3], known[1])
                added = known[0]
        else:
            added = _scalar(member)
            frame[2] += added
        total += added
        if total > cap:
            return total, len(frames)
    raise AssertionError("unreachable")  # pragma: no cover


_CONTAINERS = (list, tuple, set, frozenset, dict)


def _members(container: Any) -> Iterator[Any]:
    return chain.from_iterable(container.items()) if isinstance(container, dict) else iter(container)


def _scalar(item: Any) -> int:
    if isinstance(item, (str, bytes, bytearray)):
        return len(item)
    if isinstance(item, int) and not isinstance(item, bool):
        return _digits(item)
    if isinstance(item, float):
        return _FLOAT_WEIGHT
    return 1  # (None, a bool; an iterator, a namespace, a macro...: what it holds was weighed when it was made)


def _digits(number: int) -> int:
    return number.bit_length() * 3 // 10 + 1


def _sized(value: Any) -> int:
    return len(value) if isinstance(value, Sized) else UNSIZED_ITEMS


def _ints(values: Any) -> list[int]:
    return [v for v in values if isinstance(v, int) and not isinstance(v, bool)]


def _text_len(value: Any) -> int:
    return len(value) if isinstance(value, (str, bytes)) else _digits(value) if isinstance(value, int) else 0


def format_estimate(fmt: str | bytes, args: Any, cap: int) -> int:
    """What formatting ``fmt`` with ``args`` (``%`` or ``format``) can make: every field as wide as the widest number
    written in ``fmt`` or given, and as long as the heaviest argument (a field may use an argument again)."""
    text = fmt.decode("latin-1") if isinstance(fmt, bytes) else fmt
    fields = text.count("{") + text.count("%")
    if not fields:
        return len(text)
    members = list(args.values()) if isinstance(args, Mapping) else list(args) if isinstance(args, (list, tuple)) \
        else [args]
    widths = [int(n) for n in _NUMBER.findall(text)] + [abs(n) for n in _ints(members)]
    heaviest = max((weight(m, cap) for m in members), default=0)
    return len(text) + fields * (max(widths, default=0) + heaviest)


def call_estimate(name: str, target: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any], cap: int) -> int:
    """What calling method ``name`` of ``target`` with these arguments can make, where its inputs do not bound it."""
    numbers = [abs(n) for n in _ints((*args, *kwargs.values()))]
    if not isinstance(target, (str, bytes)):
        return 0
    text: Any = target  # (str or bytes: each method takes its own kind)
    size = len(text)
    if name in ("center", "ljust", "rjust", "zfill"):
        return size + max(numbers, default=0)
    if name == "expandtabs":
        return size + int(text.count("\t" if isinstance(text, str) else b"\t")) * max(numbers, default=8)
    if name in ("format", "format_map"):
        return format_estimate(target, [*args, *kwargs.values()] if name == "format" else (args or [{}])[0], cap)
    if name == "join" and args:
        return len(target) * _sized(args[0]) + weight(args[0], cap)
    if name == "replace" and len(args) >= 2:
        old, new = args[0], args[1]
        grows = _text_len(new) - _text_len(old)
        return size + int(text.count(old) if old else size + 1) * max(grows, 0) if type(old) is type(text) else 0
    if name == "translate" and isinstance(target, str) and isinstance(args[:1] and args[0], Mapping):
        return size * max((_text_len(v) for v in args[0].values()), default=1)
    return 0


def filter_estimate(name: str, values: list[Any], kwargs: Mapping[str, Any], cap: int) -> int:
    """What filter ``name`` applied to ``values`` (its subject first) can make, where its inputs do not bound it."""
    numbers = [abs(n) for n in _ints((*values[1:], *kwargs.values()))]
    subject = values[0] if values else None
    if name == "join":
        separator = values[1] if len(values) > 1 else kwargs.get("d", "")
        return len(str(separator)) * _sized(subject) + weight(subject, cap)
    if name == "indent" and isinstance(subject, str):
        width = values[1] if len(values) > 1 else kwargs.get("width", 4)
        pad = len(width) if isinstance(width, str) else abs(width) if _ints([width]) else 0
        return len(subject) + (subject.count("\n") + 1) * pad
    if name == "tojson":
        indent = kwargs.get("indent", values[2] if len(values) > 2 else None)
        step = len(indent) if isinstance(indent, str) else abs(indent) if _ints([indent]) else 0
        heft, depth = shape(subject, cap)
        return heft * (1 + depth * step)  # (each line indented as deep as it nests)
    if name == "format" and isinstance(subject, str):
        return format_estimate(subject, [*values[1:], *kwargs.values()], cap)
    if name == "replace" and len(values) >= 3 and isinstance(subject, str):
        return call_estimate("replace", subject, tuple(values[1:3]), {}, cap)
    return max(numbers, default=0)  # (a width, a count or a batch size: what it makes grows with it)


def binop_estimate(operator: str, left: Any, right: Any, cap: int) -> int:
    """What ``left <operator> right`` can make (``*``, ``**``, ``%``), where its inputs do not bound it."""
    if operator == "*":
        if isinstance(left, int) and isinstance(right, int):
            return _digits(left) + _digits(right)
        for seq, times in ((left, right), (right, left)):
            if isinstance(times, int) and not isinstance(times, bool) and isinstance(seq, (str, bytes, list, tuple)):
                return weight(seq, cap) * max(times, 0)
    if operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1:
        return _digits(left) * abs(right)
    if operator == "%" and isinstance(left, (str, bytes)):
        return format_estimate(left, right, cap)
    return 0
