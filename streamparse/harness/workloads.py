"""Benchmark workloads: deterministic model outputs (prose, calls of every dialect, long arguments, an
agent's mix of both) and their cut into token-sized deltas. Each workload knows where each call
completes, to measure latency, and the size of each call's arguments.

Invariant: a workload is a pure function of its name and seed: the same name gives the same
text, the same cut and the same call positions on every machine.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from .examples import EXAMPLE_TOOLS
from ..dialects.render import RENDERERS

__all__ = ["Workload", "build_workload", "split", "workload_dialect", "KB", "SCALING_KB", "ENGINE_DIALECTS",
           "AGENT_TOOLS", "AGENT_CALLS"]

KB = 1024
SCALING_KB = (1, 4, 16, 64, 256)
ENGINE_DIALECTS = ("hermes", "qwen3_coder")  # the dialects streamparse.engines has comparators for


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
    arg_bytes: int = 0  # args:*: the size of the written content
    arg_sizes: list[int] = field(default_factory=list)  # agent:*: UTF-8 bytes of each call's arguments (JSON)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # agent:*: the calls as written


def workload_dialect(scenario: str) -> str | None:
    """The one dialect a workload's calls are written in (``dialect:``, ``args:``, ``agent:``); None for mixes."""
    kind, _, rest = scenario.partition(":")
    return rest.split(":", 1)[0] if kind in ("dialect", "args", "agent") and rest else None


def build_workload(scenario: str, *, seed: int = 0, size_kb: int = 64, calls: int = 200) -> Workload:
    """Deterministic workloads.

    ``prose``: plain text only. ``tool_heavy``: prose and ``calls`` calls of every dialect,
    in turn. ``dialect:NAME``: prose and calls of one dialect. ``args:NAME:KB``: one
    ``write_file`` call of one dialect whose content is KB kilobytes of code. ``agent:NAME``: a
    coding agent's turn in one dialect (see ``_agent``).
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
    if scenario.startswith("agent:"):
        return _agent(scenario, rng, calls=min(calls, AGENT_CALLS))
    raise ValueError(f"unknown scenario {scenario!r}; see streamparse.benchmark.SCENARIOS")


# ----------------------------------------------------------------------------- agent turns

def _tool(name: str, **props: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {k: {"type": t} for k, t in props.items()}, "required": list(props)[:1]}}}


AGENT_TOOLS: list[dict[str, Any]] = [
    _tool("read_file", path="string", offset="integer", limit="integer"),
    _tool("run_command", command="string", timeout="integer"),
    _tool("grep", pattern="string", path="string"),
    _tool("edit_file", path="string", old_string="string", new_string="string"),
    _tool("write_file", path="string", content="string"),
]
AGENT_CALLS = 40
AGENT_SMALL = (50, 500)  # bytes of arguments: most calls
AGENT_WRITE = (2 * KB, 20 * KB)  # bytes of written content: every AGENT_WRITE_EVERY-th call, a file write
AGENT_WRITE_EVERY = 7


def _args_bytes(args: dict[str, Any]) -> int:
    return len(json.dumps(args, ensure_ascii=False).encode())


def _small_call(rng: random.Random, i: int, target: int) -> tuple[str, dict[str, Any]]:
    """A read, run, grep or edit call whose arguments are about ``target`` bytes of JSON."""
    path = f"src/pkg_{i % 5}/module_{rng.randint(0, 99)}.py"
    words = " ".join(rng.choice(_WORDS) for _ in range(target // 4))
    args: dict[str, Any]
    kind = i % 4
    if kind == 0:
        name, args, grow = "read_file", {"path": path, "offset": rng.randint(1, 400), "limit": 200}, "path"
        words = path.removesuffix(".py") + "/" + words.replace(" ", "/")
    elif kind == 1:
        name, args, grow = "run_command", {"command": "", "timeout": 120}, "command"
        words = "python -m pytest -q tests/ -k " + words.replace(" ", " -k ")
    elif kind == 2:
        name, args, grow = "grep", {"pattern": "", "path": "src/"}, "pattern"
        words = words.replace(" ", "|")
    else:
        name, args, grow = "edit_file", {"path": path, "old_string": "", "new_string": ""}, "new_string"
        args["old_string"] = _code(rng, target // 3).strip()
        words = _code(rng, target).strip()
    args[grow] = ""
    room = max(target - _args_bytes(args), 8)
    args[grow] = words[:room].strip()
    while _args_bytes(args) > target and len(args[grow]) > 8:  # JSON escapes made it longer
        args[grow] = args[grow][:-1].rstrip()
    return name, args


def _agent(scenario: str, rng: random.Random, calls: int) -> Workload:
    """Prose and ``calls`` calls as a coding agent writes them: most with 50-500 bytes of arguments
    (read, run, grep, edit), every ``AGENT_WRITE_EVERY``-th a ``write_file`` of 2-20 KB of code."""
    dialect = scenario.split(":", 1)[1]
    if dialect not in RENDERERS:
        raise ValueError(f"unknown dialect in {scenario!r}")
    pieces: list[str] = []
    ends: list[int] = []
    sizes: list[int] = []
    made: list[tuple[str, dict[str, Any]]] = []
    offset = 0
    for i in range(calls):
        prose = _prose(rng, rng.randint(10, 60))
        if i % AGENT_WRITE_EVERY == AGENT_WRITE_EVERY // 2:
            name, args = "write_file", {"path": f"src/pkg_{i % 5}/new_{i}.py",
                                        "content": _code(rng, rng.randint(*AGENT_WRITE)).strip()}
        else:
            name, args = _small_call(rng, i, rng.randint(*AGENT_SMALL))
        block, end = RENDERERS[dialect](name, args)
        pieces += [prose, block, "\n"]
        ends.append(offset + len(prose) + end)
        sizes.append(_args_bytes(args))
        made.append((name, args))
        offset += len(prose) + len(block) + 1
    pieces.append(_prose(rng, 30))
    return Workload(scenario, "".join(pieces), AGENT_TOOLS, ends, arg_sizes=sizes, calls=made)


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
