"""Seeded fuzzing of the streaming core: inputs made of every dialect's markup, and the promises checked on each.

Invariant: every input is a pure function of a ``random.Random`` (a failure is reproduced by its seed and
case number), and :func:`check_case` checks, for one input and one chunking, in the mode the options say
(whole calls, or ``stream_arguments=True``):

1. no exception escapes ``parse()`` or streaming;
2. streaming gives what ``parse()`` gives (content, calls with their parsed arguments, reasoning);
3. no lost or invented text: content and reasoning are each a subsequence of the input (once, in
   order), and an input with no call and no reasoning marker comes back whole as content;
4. a call carries only what the model wrote: its arguments are one JSON object, its streamed
   fragments join into exactly that object, and every key and leaf value appears in the input in
   some written form (raw, JSON-escaped, or as the number, boolean or null it was typed to).

Shared by ``tests/core/test_fuzz.py`` (CI, a few thousand cases) and ``bench/test_bench_fuzz.py``
(the long run, a million cases or more). Shapes beyond the markers: misspelt keys, cut-off calls,
deep nesting, stray text inside blocks, long whitespace runs, markers split by chunking, and
``\\r``/VT/FF/U+2028/U+2029 before line-start forms.
"""

from __future__ import annotations

import html
import json
import random
import re
from typing import Any

import streamparse as sp
from helpers import TOOLS
from streamparse.dialects import DIALECTS, SPANS
from streamparse.dialects.render import RENDERERS

TOOL_NAMES = [t["function"]["name"] for t in TOOLS]

# --------------------------------------------------------------------------- fragments


def _declared_markers() -> set[str]:
    """Every literal the dialect table declares: openers, head literals, ends, items, nests, closers, spans."""
    out: set[str] = set()
    for d in DIALECTS.values():
        for op in d.openers:
            texts = [op.text.replace("{name}", n) for n in TOOL_NAMES] if "{name}" in op.text else [op.text]
            out.update(texts)
            for part in (*op.head, *op.look):
                if part.kind in ("lit", "opt"):
                    out.update(part.texts)
            for e in op.end or ():
                out.update(e.replace("{name}", n) for n in TOOL_NAMES) if "{name}" in e else out.add(e)
        for e in d.end:
            out.update(e.replace("{name}", n) for n in TOOL_NAMES) if "{name}" in e else out.add(e)
        out.update(d.closers)
        out.update(d.item or ())
        out.update(d.nest or ())
    for s in SPANS:
        out.add(s.opener)
        out.update(s.closers)
    return {m for m in out if m}


ARGUMENT_SAMPLES: list[tuple[str, dict[str, Any]]] = [
    ("get_weather", {"city": "Paris"}),
    ("get_weather", {"city": "São Paulo", "days": 3, "metric": True}),
    ("write_file", {"path": "a.py", "content": 'if a < b:\n    print("x")\n'}),
    ("search_recipes", {"query": "{[\"<tool_call>\"]}"}),
    ("configure", {"count": 2, "items": [1, [2, {"k": None}]], "options": {"a": "}"}}),
    ("configure", {"code": "a" + " " * 90 + "b", "ratio": 0.5}),
    ("unknown_tool", {"x": 1}),
]


def _rendered_calls() -> list[str]:
    out = []
    for _dialect, render in sorted(RENDERERS.items()):
        for name, args in ARGUMENT_SAMPLES:
            try:
                out.append(render(name, args)[0])
            except Exception:  # a renderer may not support a value; that's not what is tested here
                pass
    return out


PIECES = ["{", "}", "[", "]", '"', "'", "\\", "<", ">", ":", ",", ";", "(", ")", "=", "```", "```json\n", "\n", " ",
          "\t", "  ", "/", "|", "｜", "a", "x y", "é", "🌧", '"name"', '"arguments"', '"parameters"', '"tool_calls"',
          "functions.", "function", "to=functions.", "<|constrain|>json", "<|message|>", "<parameter=city>",
          "</parameter>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", '<invoke name="get_weather">',
          '<parameter name="city">', "True", "None", "1", "-2.5e3"]

# The shapes issue 18 names: misspelt keys, deep nesting, long whitespace runs, line-start separators.
HAZARDS = ['"rguments"', '"argumnets"', '"nme"', '"Arguments"', "'arguments'", "<parameter=", "<parameter>", "=",
           "/arg_value>", "</arg_value", "<parameter=city\n", '{"a":' * 30, "}" * 30, "[" * 40, "]" * 40,
           '{"a":' * 450, "}" * 450, "[" * 1000, "]" * 1000, " " * 70, " " * 300, "\n" * 3, "\t" * 80,
           "\r", "\r\n", "\x0b", "\x0c", "\u2028", "\u2029", "\x85", "\x1c"]
LINE_BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\u2028", "\u2029", "\x85"]

MARKERS = sorted(_declared_markers())
RENDERED = _rendered_calls()
WHOLE = sorted(set(MARKERS + PIECES + TOOL_NAMES + RENDERED))


def _prefixes(s: str) -> list[str]:
    return [s[:k] for k in range(1, len(s))]


PREFIXES = sorted({p for s in MARKERS + TOOL_NAMES + RENDERED for p in _prefixes(s)} - set(WHOLE))
SUFFIXES = sorted({s[k:] for s in RENDERED for k in range(1, len(s), 7)})


def mutated_call(rng: random.Random) -> str:
    """A rendered call with one or two changes: stray text inserted, a span cut out, a character
    changed (a typo in a key or marker), a cut-off end, or a hazard spliced in."""
    s = rng.choice(RENDERED)
    for _ in range(rng.randint(1, 2)):
        if not s:
            break
        k = rng.randrange(len(s) + 1)
        r = rng.random()
        if r < 0.3:
            s = s[:k] + rng.choice(PIECES + HAZARDS + ["x", "x{y", "zz "]) + s[k:]
        elif r < 0.5:
            s = s[:k] + s[k + rng.randint(1, 4) :]
        elif r < 0.7 and k < len(s):
            s = s[:k] + rng.choice("aeiouxz_\"'{}<>/") + s[k + 1 :]
        elif r < 0.85:
            s = s[:k]
        else:
            s = s[:k] + s[k:] + s[:k]  # a call's start written twice
    return s


def random_text(rng: random.Random, max_parts: int = 10) -> str:
    parts = []
    for _ in range(rng.randint(0, max_parts)):
        r = rng.random()
        if r < 0.32:
            parts.append(rng.choice(MARKERS) if rng.random() < 0.5 else rng.choice(PIECES))
        elif r < 0.42:
            parts.append(rng.choice(TOOL_NAMES))
        elif r < 0.56:
            parts.append(rng.choice(RENDERED))
        elif r < 0.70:
            parts.append(mutated_call(rng))
        elif r < 0.78:
            parts.append(rng.choice(HAZARDS))
        elif r < 0.83:
            parts.append(rng.choice(LINE_BREAKS) + rng.choice(RENDERED))
        elif r < 0.93:
            parts.append(rng.choice(PREFIXES))
        else:
            parts.append(rng.choice(SUFFIXES))
    return "".join(parts)


def random_deltas(rng: random.Random, text: str) -> list[str]:
    """A random chunking of ``text`` that includes empty deltas (even several in a row); sometimes one
    character per delta, so that every marker is split everywhere."""
    n = len(text)
    if n and n < 400 and rng.random() < 0.05:
        return list(text)
    k = rng.randint(0, min(n, 12))
    cuts = sorted(rng.choices(range(n + 1), k=k) if n else [])  # repeated cuts give empty deltas
    cuts = [0, *cuts, n]
    deltas = []
    for a, b in zip(cuts, cuts[1:]):
        if rng.random() < 0.15:
            deltas.append("")
        deltas.append(text[a:b])
    if rng.random() < 0.2:
        deltas.append("")
    return deltas


def random_options(rng: random.Random) -> tuple[Any, dict[str, Any]]:
    tools = TOOLS if rng.random() < 0.8 else None
    options: dict[str, Any] = {"stream_arguments": rng.random() < 0.5}
    r = rng.random()
    if r < 0.1:
        options["max_block_chars"] = rng.randint(1, 200)
    elif r < 0.15:
        options["start_in_reasoning"] = True
    elif r < 0.2:
        options["max_calls"] = rng.randint(0, 2)
    return tools, options


# --------------------------------------------------------------------------- the promises


def outcome(result: sp.ParseResult) -> tuple[str, list[tuple[str, Any]], str]:
    return (result.content, [(c.name, json.loads(c.arguments)) for c in result.tool_calls], result.reasoning)


def streamed_events(deltas: list[str], tools: Any, options: dict[str, Any]) -> list[sp.Event]:
    parser = sp.StreamParser(tools, **options)
    events: list[sp.Event] = []
    for d in deltas:
        events += parser.feed(d)
    return events + parser.close()


_SPAN_LITERALS = tuple({s.opener.lower() for s in SPANS} | {c.lower() for s in SPANS for c in s.closers})
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_NOISE = re.compile(r"[\s\\\"'\x00-\x1f\x7f]+")  # whitespace, controls, backslashes, quotes: escaping and layout
_ESCAPE = re.compile(r"\\(?:[nrtbf]|[0-7]{1,3}|x[0-9a-fA-F]{2})")  # a written escape for whitespace or a control


def _flat(text: str) -> str:
    return _NOISE.sub("", _ESCAPE.sub("", text))


def is_subsequence(part: str, whole: str) -> bool:
    it = iter(whole)
    return all(c in it for c in part)


class Written:
    """The forms in which the model may have written a value, computed once per input."""

    def __init__(self, text: str):
        self.text = text
        self.low = text.lower()
        self.flat = _flat(text)
        self.flat_unescaped = _flat(html.unescape(text))
        self._numbers: set[float] | None = None

    def numbers(self) -> set[float]:
        if self._numbers is None:
            found: set[float] = set()
            for tok in _NUMBER.findall(self.text):
                try:
                    found.add(float(tok))
                except (ValueError, OverflowError):
                    pass
            self._numbers = found
        return self._numbers

    def has_string(self, s: str) -> bool:
        if s in self.text:
            return True
        if s in ("true", "false") and s in self.low:
            return True  # a boolean written where the schema wants a string
        try:
            if float(s) in self.numbers():
                return True  # a number written where the schema wants a string
        except ValueError:
            pass
        escaped = json.dumps(s, ensure_ascii=False)[1:-1]
        forms = {_flat(s), _flat(escaped), _flat(json.dumps(s)[1:-1]),
                 _flat(escaped.replace("\\u0007", "\\a").replace("\\u000b", "\\v"))}  # (Python's own escapes)
        return any(f in self.flat or f in self.flat_unescaped for f in forms)

    def has(self, value: Any, key: str = "") -> bool:
        if isinstance(value, bool):
            words = ("true", "1") if value else ("false", "0")
            return any(w in self.low for w in words)
        if value is None:
            return "null" in self.low or "none" in self.low or key == "nothing"  # "nothing" is typed null
        if isinstance(value, (int, float)):
            return str(value) in self.text or float(value) in self.numbers()
        if isinstance(value, str):
            return self.has_string(value)
        return True


def invented(arguments: Any, written: Written, keys: bool = True) -> list[str]:
    """Keys (unless ``keys`` is False) and leaf values of ``arguments`` that appear nowhere in the input
    (walked without recursion)."""
    out: list[str] = []
    stack: list[tuple[str, Any]] = [("", arguments)]
    while stack:
        key, value = stack.pop()
        if isinstance(value, dict):
            for k, v in value.items():
                if keys and k and not written.has_string(k):
                    out.append(f"key {k!r}")
                stack.append((k, v))
        elif isinstance(value, list):
            stack.extend((key, v) for v in value)
        elif not written.has(value, key):
            out.append(f"{key}={value!r}")
    return out


def check_case(text: str, deltas: list[str], tools: Any, options: dict[str, Any]) -> None:
    """Raise AssertionError (with the case) when a promise is broken. Exceptions from the core propagate."""
    assert "".join(deltas) == text
    where = f"text={text!r} deltas={deltas!r} tools={'TOOLS' if tools else None} options={options!r}"
    whole = sp.parse(text, tools, **options)
    events = streamed_events(deltas, tools, options)
    pieces = sp.ParseResult(events)
    assert outcome(pieces) == outcome(whole), f"stream != parse: {where}"
    assert is_subsequence(pieces.content, text), f"content invented or reordered: {pieces.content!r} {where}"
    assert is_subsequence(pieces.reasoning, text), f"reasoning invented or reordered: {where}"
    if not pieces.tool_calls and not pieces.reasoning and not options.get("start_in_reasoning") \
            and not any(m in text.lower() for m in _SPAN_LITERALS) \
            and not any(d.code == "empty_block" for d in pieces.diagnostics):  # (an empty call section's markup is
        # dropped, and said: Kimi's <|tool_calls_section_begin|><|tool_calls_section_end|>)
        assert pieces.content == text, f"text lost: {pieces.content!r} {where}"
    joined: dict[int, str] = {}
    for ev in events:
        if isinstance(ev, sp.ToolCallDelta):
            joined[ev.index] = joined.get(ev.index, "") + ev.arguments_fragment
    written = Written(text)
    # A reported repair: arguments written as text, given whole to the tool's one string parameter (its key is the schema's).
    text_arguments = {d.details.get("name") for d in pieces.diagnostics if "raw_arguments" in d.details}
    for call in pieces.tool_calls:
        arguments = json.loads(call.arguments)
        assert isinstance(arguments, dict), f"arguments not an object: {call.arguments!r} {where}"
        if options.get("stream_arguments") and call.index in joined:
            assert joined[call.index] == call.arguments, f"fragments != arguments: {call!r} {where}"
        bad = invented(arguments, written, keys=call.name not in text_arguments)
        assert not bad, f"{call.name}: not written by the model: {bad[:3]} {where}"
