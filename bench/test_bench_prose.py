"""Prose, markup-heavy prose and text inside a known item: streamparse per 4-character delta against the floor.

Run: python -m pytest bench/test_bench_prose.py --benchmark-only -p no:cacheprovider -s

Issue 21 §2 targets, printed as ratios measured side by side in one run (runs interleaved, best of
``REPEAT``, the same loop as ``streamparse bench``: the parser's own feed, the result dropped):

- plain prose vs the floor (one compiled-regex search per delta): <= 3x;
- prose full of ``<`` that never becomes a call (an HTML/TSX code answer: tags, generics, comparisons,
  comments, fenced blocks; 100k ``<``) vs plain prose: <= 3x;
- a delta inside a Qwen3-Coder parameter value (plain, holding ``<``, or cutting a ``</parameter>``)
  vs a prose delta: about 1x.

The markup answer is checked to come back verbatim with no call.
"""

from __future__ import annotations

import random
from typing import Any, Callable

import pytest

from streamparse import StreamParser, TextDelta
from streamparse.harness.baselines import PARSERS, raw_api
from streamparse.harness.benchmark import timed_loop
from streamparse.harness.examples import EXAMPLE_TOOLS
from streamparse.harness.workloads import build_workload, split

REPEAT = 7
MARKUP_LT = 100_000

_WORDS = "the model writes prose between its calls and explains what it is doing next".split()
_TAGS = ["div", "span", "p", "a", "button", "ul", "li", "section", "header", "img", "input", "label", "form", "table",
         "tr", "td", "th", "svg", "path", "h1", "h2", "Card", "Button", "Props", "Tooltip", "Select", "Fragment"]


def markup_answer(n_lt: int = MARKUP_LT, seed: int = 0) -> str:
    """A coding assistant's answer full of HTML and TSX, deterministic: ``n_lt`` or a few more ``<``.
    Paragraphs of prose (inline `code`, a <b> tag, a comparison) between fenced blocks of 10-40 lines:
    JSX elements, generics, comparisons, shifts, comments."""
    rng = random.Random(seed)
    out: list[str] = []
    count = 0
    while count < n_lt:
        words = " ".join(rng.choices(_WORDS, k=rng.randint(8, 30)))
        out.append(f"The `{rng.choice(_TAGS)}` element <b>{rng.choice(_WORDS)}</b> is used when a < b; {words}.\n\n")
        out.append(f"```{rng.choice(['tsx', 'html', 'jsx'])}\n")
        for _ in range(rng.randint(10, 40)):
            tag, word = rng.choice(_TAGS), rng.choice(_WORDS)
            kind = rng.randrange(8)
            if kind < 3:
                line = f'    <{tag} className="{word}-{rng.randint(0, 99)}">{" ".join(rng.choices(_WORDS, k=3))}</{tag}>'
            elif kind == 3:
                line = f"  const [{word}, set] = useState<{tag.capitalize()} | null>(null);"
            elif kind == 4:
                line = f"  if (a < b && c <= d) return <{tag} />;"
            elif kind == 5:
                line = f"    <!-- {word} -->\n    <{tag}>"
            elif kind == 6:
                line = f"  x << 2; const f = <T,>(v: T) => v; // {word} <{word}>"
            else:
                line = f'    <{tag} href="/{word}" onClick={{() => go("{word}")}}>{word}</{tag}>'
            out.append(line + "\n")
            count += line.count("<")
        out.append("```\n\n")
        count += 2
    return "".join(out)


def _item_deltas(pieces: list[str], n: int = 40_000) -> tuple[str, list[str]]:
    head = "Sure.\n<tool_call>\n<function=write_file>\n<parameter=content>\n"
    return head, (pieces * (n // len(pieces) + 1))[:n]


ITEM_CASES = {  # deltas inside one parameter value, after the item's head
    "value_plain": ["the ", "mode", "l wr", "ites"],
    "value_with_lt": ["a < ", "b # ", "<it>", " x=1"],
    "value_with_cut_tags": ["x\n</", "para", "mete", "r>\n<", "para", "mete", "r=ci", "ty>\n"],
}


def _runs() -> tuple[dict[str, Callable[[], float]], dict[str, int]]:
    """Each timed run by name ("parser:workload"), and each workload's number of deltas."""
    prose = split(build_workload("prose").text, 4)
    markup_text = markup_answer()
    markup = split(markup_text, 4)
    check = StreamParser(EXAMPLE_TOOLS)
    events = [e for d in markup for e in check.feed(d)] + check.close()
    assert all(type(e) is TextDelta for e in events) and "".join(e.text for e in events) == markup_text

    def floor(deltas: list[str]) -> Callable[[], float]:
        return lambda: timed_loop(*raw_api(PARSERS["floor"](EXAMPLE_TOOLS)), deltas)

    def ours(deltas: list[str], head: str = "") -> Callable[[], float]:
        def go() -> float:
            parser = StreamParser(EXAMPLE_TOOLS)
            parser.feed(head)
            return timed_loop(parser.feed, parser.close, deltas)
        return go

    runs = {"floor:prose": floor(prose), "streamparse:prose": ours(prose), "floor:markup": floor(markup),
            "streamparse:markup": ours(markup)}
    for name, pieces in ITEM_CASES.items():
        head, deltas = _item_deltas(pieces)
        runs[f"streamparse:{name}"] = ours(deltas, head)
    sizes = {"prose": len(prose), "markup": len(markup), **{k: 40_000 for k in ITEM_CASES}}
    return runs, sizes


def test_prose_ratios_side_by_side(benchmark: Any) -> None:
    runs, sizes = _runs()
    best = {name: float("inf") for name in runs}
    for _ in range(REPEAT):  # interleaved, so a loaded machine slows every row alike
        for name, run in runs.items():
            best[name] = min(best[name], run())
    us = {name: best[name] / sizes[name.split(":")[1]] * 1e6 for name in runs}
    ratios = {
        "prose_over_floor": us["streamparse:prose"] / us["floor:prose"],
        "markup_over_prose": us["streamparse:markup"] / us["streamparse:prose"],
        **{f"{k}_over_prose": us[f"streamparse:{k}"] / us["streamparse:prose"] for k in ITEM_CASES},
    }
    print()
    for name in runs:
        print(f"{name:34s} {us[name]:7.3f} µs/delta")
    for name, value in ratios.items():
        print(f"{name:34s} {value:7.2f}x")
    benchmark.extra_info.update({k: round(v, 2) for k, v in ratios.items()})
    benchmark.pedantic(runs["streamparse:markup"], rounds=1, iterations=1)


@pytest.mark.parametrize("parser", ["streamparse", "floor"])
@pytest.mark.parametrize("workload", ["prose", "markup"])
def test_prose(benchmark: Any, workload: str, parser: str) -> None:
    deltas = split(build_workload("prose").text if workload == "prose" else markup_answer(), 4)
    factory = PARSERS[parser]

    def go() -> None:
        feed, close = raw_api(factory(EXAMPLE_TOOLS))
        for delta in deltas:
            feed(delta)
        close()

    benchmark.pedantic(go, rounds=5, iterations=1, warmup_rounds=1)
    if benchmark.stats:
        benchmark.extra_info["us_per_delta"] = round(benchmark.stats.stats.min / len(deltas) * 1e6, 3)
