"""Benchmark workloads: deterministic model outputs (prose, calls of every dialect, long arguments, an
agent's mix of both, a short mixed stream per format for the engines) and their cut into token-sized deltas. Each workload knows where each call
completes, to measure latency, and the size of each call's arguments.

Invariant: a workload is a pure function of its name and seed (and the formats' declarations): the same name
gives the same text, the same cut and the same call positions on every machine. Every format's markup a workload
writes is read from its declaration (the grammar's terminals, the XML family's ``XmlCall``, the renderers), never
spelled here.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from .examples import EXAMPLE_TOOLS
from ..dialects import DIALECTS
from ..dialects.markup import marker, markers
from ..dialects.render import RENDERERS
from ..dialects.xml_family import XmlCall

__all__ = ["Workload", "build_workload", "split", "split_keeping", "workload_dialect", "KB", "SCALING_KB",
           "SCALING_DIALECTS", "AGENT_TOOLS", "AGENT_CALLS", "MIXED_LARGE"]

KB = 1024
SCALING_KB = (1, 4, 16, 64, 256)
SCALING_DIALECTS = ("hermes", "qwen3_coder")  # the scaling group (args:*) and its plot panels
MIXED_LARGE = 2 * KB  # mixed:*: the written content of its large call


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
    """The one dialect a workload's calls are written in (``dialect:``, ``args:``, ``agent:``, ``mixed:``);
    None for the others."""
    kind, _, rest = scenario.partition(":")
    return rest.split(":", 1)[0] if kind in ("dialect", "args", "agent", "mixed", "short") and rest else None


def build_workload(scenario: str, *, seed: int = 0, size_kb: int = 64, calls: int = 200) -> Workload:
    """Deterministic workloads.

    ``prose``: plain text only. ``tool_heavy``: prose and ``calls`` calls of every dialect,
    in turn. ``dialect:NAME``: prose and calls of one dialect. ``args:NAME:KB``: one
    ``write_file`` call of one dialect whose content is KB kilobytes of code. ``agent:NAME``: a
    coding agent's turn in one dialect (see ``_agent``). ``mixed:NAME``: prose, a call, several calls
    at once, a call with large arguments, in one dialect (see ``_mixed``). ``short:NAME``: many short calls
    (one to three small arguments each) after a few words each, in one dialect: the cost of opening and closing
    a call, which long values hide (see ``_short``).
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
    if scenario.startswith("mixed:"):
        return _mixed(scenario, rng)
    if scenario.startswith("short:"):
        return _short(scenario, rng, calls=min(calls, SHORT_CALLS))
    raise ValueError(f"unknown scenario {scenario!r}; see streamparse.benchmark.SCENARIOS")


# ----------------------------------------------------------------------------- short calls

SHORT_CALLS = 100
# A format whose calls are the whole message or one block at its end (LAYOUT) gets one block of this many: a
# model writes no list of 100 calls, and SGLang's pythonic regex backtracks for minutes on one.
SHORT_BLOCK = 5


def _short(scenario: str, rng: random.Random, calls: int) -> Workload:
    """``calls`` short calls, each after a few words, with one to three small arguments: ``get_weather`` with a
    city and maybe days and metric, or ``search_recipes`` with a short query. Written as the format's model
    writes them, as ``_mixed`` does: each call in its own block after its words, or, for a format whose model
    writes its calls in one block (``LAYOUT``), a few words and then ``SHORT_BLOCK`` calls in one block, or the
    block alone."""
    dialect = scenario.split(":", 1)[1]
    if dialect not in RENDERERS:
        raise ValueError(f"unknown dialect in {scenario!r}")
    made: list[tuple[str, dict[str, Any]]] = []
    for i in range(calls):
        if i % 3 == 2:
            made.append(("search_recipes", {"query": " ".join(rng.choice(_WORDS) for _ in range(3))}))
            continue
        args: dict[str, Any] = {"city": rng.choice(("Paris", "Oslo", "Lima", "São Paulo", "New York"))}
        if i % 3:
            args["days"] = rng.randint(1, 7)
        if i % 4 == 0:
            args["metric"] = bool(i % 8)
        made.append(("get_weather", args))
    layout = LAYOUT.get(dialect, "between")
    groups = [[call] for call in made] if layout == "between" else [made[:SHORT_BLOCK]]
    pieces, ends = _laid_out(dialect, groups, layout, rng, (3, 8), "\n", numbered=True)
    return Workload(scenario, "".join(pieces), EXAMPLE_TOOLS, ends, calls=made[: len(ends)])


def _laid_out(dialect: str, groups: list[list[tuple[str, dict[str, Any]]]], layout: str, rng: random.Random,
              words: tuple[int, int], after: str = "", numbered: bool = False) -> tuple[list[str], list[int]]:
    """Each group of calls after a few ``words`` of prose (none for the ``only`` layout), as the format's model
    writes them (``several``; ``numbered``: the call ids count on across groups): the pieces of the text and
    where each call completes."""
    pieces: list[str] = []
    ends: list[int] = []
    offset = 0
    for n, group in enumerate(groups):
        prose = "" if layout == "only" else _message(dialect, _prose(rng, rng.randint(*words)) + after, first=not n)
        block, at = several(dialect, group, first=n if numbered else 0)
        if dialect in _PROSE_MESSAGE:
            block, at = _NEXT_MESSAGE[dialect] + block, [end + len(_NEXT_MESSAGE[dialect]) for end in at]
        gap = "" if layout == "only" or dialect in _PROSE_MESSAGE else "\n"
        pieces += [prose, block, gap]
        ends += [offset + len(prose) + end for end in at]
        offset += len(prose) + len(block) + len(gap)
    return pieces, ends


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


# ----------------------------------------------------------------------------- a mixed stream per format

def _js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# Each format's markers, read from its declaration (grammars/<name>.lark, or the XML family's XmlCall): the
# workloads write none of their own. What stays literal here is JSON's and Python's syntax and the layout.
_DS = markers("deepseek_v3", "_CALLS_BEGIN", "_BEGIN", "_TYPE", "_SEP", "_JSON_FENCE", "_FENCE_CLOSE", "_END",
              "_CALLS_END")
_DS31 = markers("deepseek_v31", "_CALLS_BEGIN", "_BEGIN", "_SEP", "_END", "_CALLS_END")
_KIMI = markers("kimi_k2", "_SECTION_BEGIN", "_BEGIN", "_FUNCTIONS", "_ARGS_BEGIN", "_END", "_SECTION_END")


def _xml_family(dialect: str) -> tuple[XmlCall, tuple[str, str]]:
    """An XML family member's declared markup and wrapper (its opener and closer)."""
    declared = DIALECTS[dialect]
    if not isinstance(declared.markup, XmlCall) or declared.nest is None:
        raise TypeError(f"{dialect} is not an XML family member with a wrapper")
    return declared.markup, declared.nest


_MINIMAX, _MINIMAX_WRAP = _xml_family("minimax_m2")


def _deepseek_v3_item(i: int, n: str, a: dict[str, Any]) -> str:
    _, begin, kind, sep, fence, fence_close, end, _ = _DS
    return f"{begin}{kind}{sep}{n}\n{fence}\n{_js(a)}\n{fence_close}{end}"


def _deepseek_v31_item(i: int, n: str, a: dict[str, Any]) -> str:
    _, begin, sep, end, _ = _DS31
    return f"{begin}{n}{sep}{_js(a)}{end}"


def _kimi_item(i: int, n: str, a: dict[str, Any]) -> str:
    _, begin, functions, args_begin, end, _ = _KIMI
    return f"{begin}{functions}{n}:{i}{args_begin}{_js(a)}{end}"


def _minimax_invoke(i: int, n: str, a: dict[str, Any]) -> str:
    """One invoke as the family writes it (``XmlCall.render``), a line of its own."""
    return _MINIMAX.render(n, a) + "\n"


def _pythonic_item(i: int, n: str, a: dict[str, Any]) -> str:
    return RENDERERS["pythonic"](n, a)[0][1:-1]


def _json_item(name_key: str, args_key: str) -> Any:
    return lambda i, n, a: _js({name_key: n, args_key: a})


# Formats whose model writes several calls in one block: (opening, separator, closing, one call). A call is
# complete at the end of its own piece. Every other format writes one block per call, one after the other.
_SEVERAL: dict[str, tuple[str, str, str, Any]] = {
    # the space: as Mistral's models decode
    "mistral": (marker("mistral", "_OPEN") + " [", ", ", "]", _json_item("name", "arguments")),
    "llama3_json": (marker("llama3_json", "_TAG"), "; ", "", _json_item("name", "parameters")),
    "pythonic": ("[", ", ", "]", _pythonic_item),
    "xlam": ("[", ", ", "]", _json_item("name", "arguments")),
    "phi4_mini": (marker("phi4_mini", "_OPEN") + "[", ", ", "]", _json_item("name", "arguments")),
    "granite": (marker("granite", "_OPEN") + "[", ", ", "]", _json_item("name", "arguments")),
    "hunyuan": (marker("hunyuan", "_OPEN") + "[", ", ", "]" + marker("hunyuan", "_CLOSE"),
                _json_item("name", "arguments")),
    "apertus": (marker("apertus", "_OPEN") + "[", ", ", "]" + marker("apertus", "_CLOSE"), lambda i, n, a: _js({n: a})),
    "lfm2": (marker("lfm2", "_OPEN") + "[", ", ", "]" + marker("lfm2", "_CLOSE"), _pythonic_item),
    "cohere": (marker("cohere", "_OPEN") + "[", ", ", "]" + marker("cohere", "_CLOSE"),
               lambda i, n, a: _js({"tool_call_id": str(i), "tool_name": n, "parameters": a})),
    "olmo3": (marker("olmo3", "_CALLS") + "\n", "\n", "\n" + marker("olmo3", "_CALLS_END"), _pythonic_item),
    "deepseek_v3": (_DS[0], "", _DS[-1], _deepseek_v3_item),
    "deepseek_v31": (_DS31[0], "", _DS31[-1], _deepseek_v31_item),
    "kimi_k2": (_KIMI[0], "", _KIMI[-1], _kimi_item),
    "minimax_m2": (_MINIMAX_WRAP[0] + "\n", "", _MINIMAX_WRAP[1], _minimax_invoke),
}
_NEXT_MESSAGE = {"openai": marker("openai", "_ASSISTANT")}  # harmony: each call is its own message
# harmony: prose is a message too (a preamble on the commentary channel); every message after the first opens
# with _NEXT_MESSAGE, and nothing stands between messages
_PROSE_MESSAGE = {"openai": markers("openai", "_COMMENTARY", "_END")}
# Where a format's model writes its calls: between prose (the default), once after its prose ("end"), or as the
# whole message ("only"), as the engines' parsers expect (vLLM's llama3_json, pythonic, xlam, hunyuan_a13b and
# olmo3 read a message that starts with the call; Mistral's models write one [TOOL_CALLS] block, last).
LAYOUT: dict[str, str] = {"llama3_json": "only", "pythonic": "only", "xlam": "only", "phi4_mini": "only",
                          "hunyuan": "only", "olmo3": "only", "mistral": "end", "granite": "end", "apertus": "end",
                          "lfm2": "end", "cohere": "end"}


def several(dialect: str, calls: list[tuple[str, dict[str, Any]]], first: int = 0) -> tuple[str, list[int]]:
    """Several calls written at once, as the format's model writes them, and where each completes; ``first``:
    the index of the first in the turn (Kimi's call ids count the turn's calls)."""
    form = _SEVERAL.get(dialect)
    ends: list[int] = []
    if form is None:
        text = ""
        for i, (name, args) in enumerate(calls):
            block, end = RENDERERS[dialect](name, args)
            head = (_NEXT_MESSAGE.get(dialect, "\n") if i else "")
            ends.append(len(text) + len(head) + end)
            text += head + block
        return text, ends
    opening, separator, closing, one = form
    text = opening
    for i, (name, args) in enumerate(calls):
        text += (separator if i else "") + one(first + i, name, args)
        ends.append(len(text))
    return text + closing, ends


def _mixed(scenario: str, rng: random.Random) -> Workload:
    """What a turn of one format's model looks like: prose, one call, prose, three calls at once (see
    ``several``), prose, one ``write_file`` call with MIXED_LARGE characters of code, prose; or, for a
    format whose model writes its calls in one block (``LAYOUT``), prose and then the five calls in one block,
    or the block alone."""
    dialect = scenario.split(":", 1)[1]
    if dialect not in RENDERERS:
        raise ValueError(f"unknown dialect in {scenario!r}")
    made: list[tuple[str, dict[str, Any]]] = [("get_weather", {"city": "São Paulo", "days": 3})]
    made += [("search_recipes", {"query": f"recipe with \"{rng.choice(_WORDS)}\" ✓"}),
             ("get_weather", {"city": "Paris", "days": 2}),
             ("search_recipes", {"query": "<b>bold</b> & {braces} [brackets]"})]
    made.append(("write_file", {"path": "src/generated.py", "content": _code(rng, MIXED_LARGE).strip()}))
    layout = LAYOUT.get(dialect, "between")
    groups = [made[:1], made[1:4], made[4:]] if layout == "between" else [made]
    pieces, ends = _laid_out(dialect, groups, layout, rng, (20, 40))
    if layout == "between":
        pieces.append(_message(dialect, _prose(rng, 30), first=False))
    return Workload(scenario, "".join(pieces), EXAMPLE_TOOLS, ends, arg_sizes=[_args_bytes(a) for _, a in made],
                    calls=made)


def _message(dialect: str, prose: str, *, first: bool) -> str:
    """Prose as the format writes it between calls: as it is, or as a message of its own (``_PROSE_MESSAGE``)."""
    if dialect not in _PROSE_MESSAGE:
        return prose
    opening, closing = _PROSE_MESSAGE[dialect]
    return ("" if first else _NEXT_MESSAGE[dialect]) + opening + prose + closing


def split_keeping(text: str, whole: tuple[str, ...], chunk: int | str = 4, seed: int = 0) -> list[str]:
    """``split``, except that each of ``whole`` (a model's special tokens) is one delta of its own, as a
    detokenizer hands it over: cut between deltas of ``chunk`` characters where the text holds one."""
    if not whole:
        return split(text, chunk, seed)
    out: list[str] = []
    for piece in re.split("(" + "|".join(map(re.escape, sorted(whole, key=len, reverse=True))) + ")", text):
        if piece in whole:
            out.append(piece)
        elif piece:
            out += split(piece, chunk, seed)
    return out
