"""Benchmark workloads: deterministic model outputs (prose, calls of every dialect, long arguments) and
their cut into token-sized deltas. Each workload knows where each call completes, to measure latency."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from .examples import EXAMPLE_TOOLS
from .render import RENDERERS

__all__ = ["Workload", "build_workload", "split", "KB", "SCALING_KB"]

KB = 1024
SCALING_KB = (1, 4, 16, 64, 256)


_WORDS = ("the model writes prose between its calls and explains what it is doing next while a user "
          "waits for the answer to arrive token by token on a slow connection").split()


def _prose(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n_words)).capitalize() + ".\n"


def _code(rng: random.Random, size: int) -> str:
    lines = []
    total = 0
    while total < size:
        line = f"    value_{rng.randint(0, 999)} = compute(\"{rng.choice(_WORDS)}\", {rng.randint(0, 99)})  # <{rng.choice(_WORDS)}>\n"
        lines.append(line)
        total += len(line)
    return "".join(lines)[:size]


@dataclass
class Workload:
    """A model output with its tools and where each call completes (to measure emission latency)."""

    name: str
    text: str
    tools: list[dict[str, Any]]
    call_ends: list[int] = field(default_factory=list)  # offset just after each call's completing marker
    arg_bytes: int = 0


def build_workload(scenario: str, *, seed: int = 0, size_kb: int = 64, calls: int = 200) -> Workload:
    """Deterministic workloads.

    ``prose``: plain text only. ``tool_heavy``: prose and ``calls`` calls of every dialect,
    in turn. ``dialect:NAME``: prose and calls of one dialect. ``args:NAME:KB``: one
    ``write_file`` call of one dialect whose content is KB kilobytes of code.
    """
    rng = random.Random(seed)
    if scenario == "prose":
        parts, total = [], 0
        while total < size_kb * KB:
            parts.append(_prose(rng, rng.randint(8, 30)))
            total += len(parts[-1])
        return Workload(scenario, "".join(parts)[: size_kb * KB], EXAMPLE_TOOLS)
    if scenario.startswith("args:"):
        _, dialect, kb = scenario.split(":")
        content = _code(rng, int(kb) * KB)
        block, end = RENDERERS[dialect]("write_file", {"path": "src/generated.py", "content": content})
        head = "I will write the file now.\n"
        return Workload(scenario, head + block + "\nDone.", EXAMPLE_TOOLS, [len(head) + end], len(content))
    if scenario == "tool_heavy" or scenario.startswith("dialect:"):
        dialects = list(RENDERERS) if scenario == "tool_heavy" else [scenario.split(":", 1)[1]]
        pieces: list[str] = []
        ends: list[int] = []
        offset = 0
        for i in range(calls):
            prose = _prose(rng, rng.randint(5, 25))
            dialect = dialects[i % len(dialects)]
            if i % 2:
                block, end = RENDERERS[dialect]("get_weather", {"city": f"City {i}", "days": i % 7 + 1})
            else:
                block, end = RENDERERS[dialect]("search_recipes", {"query": f"recipe with \"{rng.choice(_WORDS)}\" ✓"})
            pieces += [prose, block, "\n"]
            ends.append(offset + len(prose) + end)
            offset += len(prose) + len(block) + 1
        return Workload(scenario, "".join(pieces), EXAMPLE_TOOLS, ends)
    raise ValueError(f"unknown scenario {scenario!r}; see streamparse.benchmark.SCENARIOS")


def split(text: str, chunk: int | str = 4, seed: int = 0) -> list[str]:
    """Token-sized deltas: ``chunk`` characters each, or ``"random"`` for 1-12 (seeded)."""
    if chunk == "random":
        rng = random.Random(seed)
        out, i = [], 0
        while i < len(text):
            n = rng.randint(1, 12)
            out.append(text[i : i + n])
            i += n
        return out
    n = int(chunk)
    return [text[i : i + n] for i in range(0, len(text), n)]
