"""Fuzzing the streaming core with strings made of every dialect's marker fragments.

Promise under test: for any ``str`` and any chunking (empty deltas included),
streaming gives exactly what ``parse()`` gives (same content, same calls with the
same parsed arguments, same reasoning), and no exception escapes either way.

The big loop is a seeded ``random.Random`` loop (100,000 cases in the long run,
``HYPOTHESIS_PROFILE=long``; the first 25,000 of them by default, see ``budget.py``; fast and
reproducible: a failure prints the seed, the text and the cuts); a small
hypothesis version of the same property follows, for shrinking.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamparse as sp
from budget import examples
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
    ("unknown_tool", {"x": 1}),
]


def _rendered_calls() -> list[str]:
    out = []
    for dialect, render in sorted(RENDERERS.items()):
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

MARKERS = sorted(_declared_markers())
RENDERED = _rendered_calls()
WHOLE = sorted(set(MARKERS + PIECES + TOOL_NAMES + RENDERED))


def _prefixes(s: str) -> list[str]:
    return [s[:k] for k in range(1, len(s))]


PREFIXES = sorted({p for s in MARKERS + TOOL_NAMES + RENDERED for p in _prefixes(s)} - set(WHOLE))
SUFFIXES = sorted({s[k:] for s in RENDERED for k in range(1, len(s), 7)})


def random_text(rng: random.Random, max_parts: int = 10) -> str:
    parts = []
    for _ in range(rng.randint(0, max_parts)):
        r = rng.random()
        if r < 0.40:
            parts.append(rng.choice(MARKERS) if rng.random() < 0.5 else rng.choice(PIECES))
        elif r < 0.55:
            parts.append(rng.choice(TOOL_NAMES))
        elif r < 0.72:
            parts.append(rng.choice(RENDERED))
        elif r < 0.90:
            parts.append(rng.choice(PREFIXES))
        else:
            parts.append(rng.choice(SUFFIXES))
    return "".join(parts)


def random_deltas(rng: random.Random, text: str) -> list[str]:
    """A random chunking of ``text`` that includes empty deltas (even several in a row)."""
    n = len(text)
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


def outcome(result: sp.ParseResult) -> tuple[str, list[tuple[str, Any]], str]:
    return (result.content, [(c.name, json.loads(c.arguments)) for c in result.tool_calls], result.reasoning)


def streamed(deltas: list[str], tools: Any, options: dict[str, Any]) -> sp.ParseResult:
    parser = sp.StreamParser(tools, **options)
    events: list[sp.Event] = []
    for d in deltas:
        events += parser.feed(d)
    events += parser.close()
    return sp.ParseResult(events)


def random_options(rng: random.Random) -> tuple[Any, dict[str, Any]]:
    tools = TOOLS if rng.random() < 0.8 else None
    options: dict[str, Any] = {}
    r = rng.random()
    if r < 0.1:
        options["max_block_chars"] = rng.randint(1, 200)
    elif r < 0.15:
        options["start_in_reasoning"] = True
    elif r < 0.2:
        options["max_calls"] = rng.randint(0, 2)
    return tools, options


def check_case(text: str, deltas: list[str], tools: Any, options: dict[str, Any]) -> None:
    assert "".join(deltas) == text
    whole = outcome(sp.parse(text, tools, **options))
    pieces = outcome(streamed(deltas, tools, options))
    assert pieces == whole, f"text={text!r} deltas={deltas!r} tools={'TOOLS' if tools else None} options={options!r}"


# --------------------------------------------------------------------------- the big seeded loop

CASES = examples(100_000)  # 25,000 in the default run, 100,000 in the long one (budget.py)


def test_fragment_fuzz_streaming_equals_parse() -> None:
    rng = random.Random(20240607)
    failures: list[str] = []
    started = time.perf_counter()
    for case in range(CASES):
        text = random_text(rng)
        deltas = random_deltas(rng, text)
        tools, options = random_options(rng)
        try:
            check_case(text, deltas, tools, options)
        except AssertionError as exc:
            failures.append(f"case {case}: {exc}")
        except Exception as exc:  # noqa: BLE001 - any escaping exception is a failure
            failures.append(f"case {case}: {type(exc).__name__}: {exc} text={text!r} deltas={deltas!r} options={options!r}")
        if len(failures) >= 5:
            break
    elapsed = time.perf_counter() - started
    assert not failures, "\n".join(failures)
    assert case == CASES - 1, f"only {case + 1} cases ran in {elapsed:.1f}s"


# --------------------------------------------------------------------------- hypothesis (for shrinking)

FRAGMENT = st.one_of(
    st.sampled_from(MARKERS), st.sampled_from(PIECES), st.sampled_from(TOOL_NAMES), st.sampled_from(RENDERED),
    st.sampled_from(PREFIXES), st.text(max_size=4),
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(parts=st.lists(FRAGMENT, max_size=8), data=st.data(),
       tools=st.sampled_from([True, False]), limit=st.one_of(st.none(), st.integers(1, 200)))
def test_fragment_fuzz_hypothesis(parts: list[str], data: st.DataObject, tools: bool, limit: int | None) -> None:
    text = "".join(parts)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=12)))
    cuts = [0, *cuts, len(text)]
    deltas = [text[a:b] for a, b in zip(cuts, cuts[1:])]
    options = {} if limit is None else {"max_block_chars": limit}
    check_case(text, deltas, TOOLS if tools else None, options)


# --------------------------------------------------------------------------- case variants of the markers

# Markers match case-insensitively. These case changes keep each character one character long under
# both str.lower() and the regex engine's IGNORECASE (the Kelvin sign lowercases to "k" both ways).
_SAFE_CASE_SUBS = [("k", "\u212a"), ("t", "T"), ("l", "L"), ("a", "A"), ("n", "N")]


def _mangle(rng: random.Random, s: str) -> str:
    r = rng.random()
    if r < 0.3:
        return s.upper()
    if r < 0.5:
        return s.swapcase()
    a, b = rng.choice(_SAFE_CASE_SUBS)
    return s.replace(a, b) if rng.random() < 0.5 else s.replace(a, b, 1)


def test_case_variant_fuzz_streaming_equals_parse() -> None:
    rng = random.Random(5)
    pool = MARKERS + RENDERED + PIECES + TOOL_NAMES
    failures: list[str] = []
    for case in range(examples(10_000)):
        parts = []
        for _ in range(rng.randint(1, 8)):
            p = rng.choice(pool)
            if rng.random() < 0.4:
                p = _mangle(rng, p)
            if rng.random() < 0.2:
                p = p[: rng.randint(0, len(p))]
            parts.append(p)
        text = "".join(parts)
        deltas = list(text) if rng.random() < 0.3 else random_deltas(rng, text)
        tools, options = random_options(rng)
        try:
            check_case(text, deltas, tools, options)
        except Exception as exc:  # noqa: BLE001
            failures.append(f"case {case}: {type(exc).__name__}: {exc}")
            if len(failures) >= 5:
                break
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("text, cut", [
    ("<think>a</th\u0131nk>b", len("<think>a</th\u0131")),  # dotless i
    ("<think>a</th\u0130nk>b", len("<think>a</th\u0130")),  # dotted capital I
    ("<seed:think>a</\u017feed:think>b", len("<seed:think>a</\u017f")),  # long s
])
def test_span_closer_with_unicode_case_variants_is_chunking_independent(text: str, cut: int) -> None:
    whole = outcome(sp.parse(text, TOOLS))
    assert outcome(streamed([text[:cut], text[cut:]], TOOLS, {})) == whole
