"""Fuzzing the streaming core with strings made of every dialect's marker fragments, in both modes.

Promises under test (``fuzzing.check_case``), for any ``str`` and any chunking (empty deltas
included), with whole calls and with ``stream_arguments=True``: no exception escapes; streaming
gives exactly what ``parse()`` gives (same content, same calls with the same parsed arguments, same
reasoning); no text is lost or invented (content and reasoning come back once, in order); and no call
carries an argument the model did not write.

The big loop is a seeded ``random.Random`` loop over inputs that include the shapes of issue 18
(misspelt keys, cut-off calls, deep nesting, stray text inside blocks, long whitespace runs,
markers split by chunking, ``\\r``/VT/FF/U+2028 before line-start forms): 40,000 cases in the long
run (``HYPOTHESIS_PROFILE=long``), the first 10,000 by default (``budget.py``). A failure prints
the seed, the case, the text and the cuts. ``bench/test_bench_fuzz.py`` runs the same loop for a
million cases or more. A small hypothesis version of the same property follows, for shrinking.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamparse as sp
from budget import examples
from fuzzing import (HAZARDS, LINE_BREAKS, MARKERS, PIECES, PREFIXES, RENDERED, TOOL_NAMES, check_case, outcome,
                     random_deltas, random_options, random_text, streamed_events)
from helpers import TOOLS

# --------------------------------------------------------------------------- the big seeded loop

SEED = 20240607
CASES = examples(40_000)  # 10,000 in the default run, 40,000 in the long one (budget.py)


def run_cases(seed: int, cases: int, first: int = 0, max_failures: int = 5) -> list[str]:
    """Cases ``first`` .. ``cases - 1`` of the loop seeded with ``seed``: the failures, described."""
    rng = random.Random(seed)
    failures: list[str] = []
    for case in range(cases):
        text = random_text(rng)
        deltas = random_deltas(rng, text)
        tools, options = random_options(rng)
        if case < first:
            continue
        try:
            check_case(text, deltas, tools, options)
        except AssertionError as exc:
            failures.append(f"seed {seed} case {case}: {exc}")
        except Exception as exc:  # noqa: BLE001 - any escaping exception is a failure
            failures.append(f"seed {seed} case {case}: {type(exc).__name__}: {exc} text={text!r} deltas={deltas!r} "
                            f"options={options!r}")
        if len(failures) >= max_failures:
            break
    return failures


def test_fragment_fuzz_keeps_every_promise_in_both_modes() -> None:
    failures = run_cases(SEED, CASES)
    assert not failures, "\n".join(failures)


# --------------------------------------------------------------------------- hypothesis (for shrinking)

FRAGMENT = st.one_of(
    st.sampled_from(MARKERS), st.sampled_from(PIECES), st.sampled_from(TOOL_NAMES), st.sampled_from(RENDERED),
    st.sampled_from(PREFIXES), st.sampled_from(HAZARDS), st.sampled_from(LINE_BREAKS), st.text(max_size=4),
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(parts=st.lists(FRAGMENT, max_size=8), data=st.data(),
       tools=st.sampled_from([True, False]), limit=st.one_of(st.none(), st.integers(1, 200)), stream=st.booleans())
def test_fragment_fuzz_hypothesis(parts: list[str], data: st.DataObject, tools: bool, limit: int | None,
                                  stream: bool) -> None:
    text = "".join(parts)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=12)))
    cuts = [0, *cuts, len(text)]
    deltas = [text[a:b] for a, b in zip(cuts, cuts[1:])]
    options: dict[str, object] = {"stream_arguments": stream}
    if limit is not None:
        options["max_block_chars"] = limit
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
    assert outcome(sp.ParseResult(streamed_events([text[:cut], text[cut:]], TOOLS, {}))) == whole


# --------------------------------------------------------------------------- cases the long fuzz found (bench/)

@pytest.mark.parametrize("deltas, tools, options", [
    # an empty delta after one ending with a backslash inside a string: the escape is still pending
    (['<|python_tag|>write_file.call(path="a.py", content="if a < /arg_val', 'ue>b/\\n    print(\\"x\\', '',
      '")\\n")<|eom_id|>'], TOOLS, {}),
    # a block's end met in a GLM value (held: the end of the stream alone would make it the end), then the block
    # released as text for its size while it is held: it is released too
    (['<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>' + "x" * 122 + "</tool_call>\n" + "y" * 100],
     TOOLS, {"max_block_chars": 192}),
    (['<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>' + "x" * 122, "</tool_call><tool_call>get_weather",
      "\n" + "y" * 60], TOOLS, {"max_block_chars": 192}),
    # Python's own escapes (\a is BEL) in a pythonic call: the value as Python reads what the model wrote
    (["<|tool_call_start|>[get_weather(city='São P\\au", "lo', days=3)]<|tool_call_end|>"], TOOLS, {}),
    # a started call (stream_arguments) whose block is cut for its size while a block's end met in a value is
    # held: the held end counts in the size, so the cut falls where the whole text puts it, and it is text
    (['Hi\n<seed:tool_call>\n<function=get_weather>\n<parameter=days></seed:tool_call>', '          xyz'], TOOLS,
     {"dialects": ["seed_oss"], "stream_arguments": True, "max_block_chars": 73}),
    (['Hi\n<seed:tool_call>\n<function=get_weather>\n<parameter=days></seed:tool_call>          xyz'], TOOLS,
     {"dialects": ["seed_oss"], "max_block_chars": 73}),
    # streamed arguments, one call allowed: an item that opens while an earlier one of its block waits to be
    # settled (all read in one feed) starts its live call only after that one is settled, so the calls keep the
    # order the text gives them (an Apertus element, then JSON objects the block reads on)
    (['write_file<|tools_prefix|>[{"write', '_file": {"path": "a.igure", "arguments": {"count": 2, "items": [1, [2, '
      '{"k": null}]], "options": {"a": "}"}}}]</tools><|tool_calls_section_be', 'gin|><|tool_call_begin|>funct',
      'ions.configure:0<|tool_call_argument_begin|', '>{"code"', ': "a' + " " * 63, " " * 27 + 'b", "ratio"',
      ': 0.5}<|tool_call_end|><|tool_calls_section_end|><seed:tool_call>\n<function=get_we<｜DSML｜function_calls>'
      '<|message_sep|>function call<|', 'role_sep|>\n{"name": "configure", "arguments": {"code": "a' + " " * 17,
      " " * 71, '  b", "ratio": 0.5}}'], None, {"stream_arguments": True, "max_calls": 1}),
    # an empty call section's markup is dropped and said (empty_block), not lost silently
    (["write_file<|tool_call_", "sect", "ion_begin", "", "|><|tool_", "calls_se", "", "ct", "", "ion_end|>"], TOOLS,
     {"stream_arguments": True}),
])
def test_cases_the_long_fuzz_found_keep_every_promise(deltas: list[str], tools: object, options: dict[str, object]
                                                       ) -> None:
    check_case("".join(deltas), deltas, tools, options)


# Found by the long fuzz (seed 4401, case 4795): a granite <|tool_call|> list never closed, its arguments streamed
# (stream_arguments) to the stream's end; the echo held the bare words '>3<' as a value, left out the '//param>'
# comment after them, and joined the words after it ('<paramfunction name=') to the same value: 'days' carried
# '>3<\n<paramfunction name=', text the model wrote only with the comment between. A comment ends such a value.
def test_a_comment_left_out_after_bare_words_never_joins_the_words_after_it_to_their_value() -> None:
    rng = random.Random(4401)
    for _ in range(4796):  # (the case is drawn after 4,795 others: the generator's draws are its identity)
        text = random_text(rng)
        deltas = random_deltas(rng, text)
        tools, options = random_options(rng)
    check_case(text, deltas, tools, options)


# The long fuzz (seeds 4601-4602, 2026-12-08) on a whole answer read in close's one run: an answer ending in a
# marker's prefix ('</fu', '<') after a block released as too large lost that prefix in parse() while the stream
# kept it as text. A whole answer is feed then close again; both cases are replayed here.
@pytest.mark.parametrize("seed, drawn", [(4602, 99684), (4601, 104661)])
def test_a_whole_answer_keeps_a_marker_prefix_cut_at_its_end_as_a_stream_does(seed: int, drawn: int) -> None:
    rng = random.Random(seed)
    for _ in range(drawn + 1):  # (the case is drawn after the others: the generator's draws are its identity)
        text = random_text(rng)
        deltas = random_deltas(rng, text)
        tools, options = random_options(rng)
    check_case(text, deltas, tools, options)
