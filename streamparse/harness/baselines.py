"""The parsers a benchmark runs side by side: streamparse, the baselines (identity, floor, naive) and
a caller's ``--compare module:callable``. The serving engines' parsers come from ``streamparse.harness.engines``.

Fair timing: a session may offer ``raw()``: the parser's own per-delta and end-of-stream callables,
whose output is not turned into ``(text, calls)``. The harness times ``raw()`` when present and
``feed``/``close`` otherwise, in the same loop, so no parser pays for an adapter that another does
not: streamparse is timed as ``StreamParser.feed`` itself, the floor as one regex search that hands
the delta back. ``feed`` (the adapter) gives the output that is checked.

Invariant: a session's ``feed``/``close`` output is ``(text, calls)`` in one shape for every
parser, so the checker compares like with like.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from typing import Any, Callable, Protocol

from ..arguments.tools import read_tools
from ..core.events import TextDelta, ToolCall
from ..core.parser import StreamParser, parse

__all__ = ["Session", "SessionFactory", "PARSERS", "PROSE_FLOOR", "Whole", "StreamparseWhole", "regex_hermes",
           "optional_wholes", "Pair", "load_compare", "CompareError", "raw_api"]

Pair = tuple[str, list[tuple[str, str]]]  # (text, [(name, arguments_json)]) emitted by one feed


class Session(Protocol):
    """A streaming parser under test: ``feed`` returns (text, calls) emitted for that delta."""

    def feed(self, delta: str) -> Pair: ...

    def close(self) -> Pair: ...

    def held(self) -> int | None: ...


RawApi = tuple[Callable[[str], Any], Callable[[], Any]]


def raw_api(session: Session) -> RawApi:
    """What the harness times: the session's ``raw()`` ``(feed, close)``, else its ``feed`` and ``close``."""
    raw = getattr(session, "raw", None)
    return raw() if raw is not None else (session.feed, session.close)


class _StreamparseSession:
    def __init__(self, tools: Any):
        self._p = StreamParser(tools)

    @staticmethod
    def _split(events: list[Any]) -> Pair:
        if not events:
            return "", []
        if len(events) == 1 and type(events[0]) is TextDelta:
            return events[0].text, []
        text = "".join(e.text for e in events if e.type == "text")
        return text, [(e.name, e.arguments) for e in events if isinstance(e, ToolCall)]

    def feed(self, delta: str) -> Pair:
        return self._split(self._p.feed(delta))

    def close(self) -> Pair:
        return self._split(self._p.close())

    def held(self) -> int | None:
        return len(self._p.held_text)

    def raw(self) -> RawApi:
        return self._p.feed, self._p.close


class _IdentitySession:
    def __init__(self, tools: Any):
        pass

    def feed(self, delta: str) -> Pair:
        return delta, []

    def close(self) -> Pair:
        return "", []

    def held(self) -> int | None:
        return 0

    def _raw_feed(self, delta: str) -> str:
        return delta

    def raw(self) -> RawApi:
        return self._raw_feed, self._raw_close

    @staticmethod
    def _raw_close() -> str:
        return ""


_FLOOR_RE = re.compile(r"<tool_call>|<tools>|<function|<\{|\[TOOL_CALLS\]|```|<think>", re.I)


class _FloorSession(_IdentitySession):
    """The least any marker-aware parser must do: one regex search per delta."""

    def __init__(self, tools: Any):
        self._search = _FLOOR_RE.search

    def feed(self, delta: str) -> Pair:
        self._search(delta)
        return delta, []

    def _raw_feed(self, delta: str) -> str:
        self._search(delta)
        return delta


_NAIVE_BLOCKS = re.compile(
    r"<tool_call>(.*?)</tool_call>|<tools>(.*?)</tools>|<function>(.*?)</function>|\[TOOL_CALLS\](\[.*\])", re.S | re.I)


_FIRST_CHARS = re.compile(r"[<\[{`\n]")  # can begin a marker: <tag, [TOOL_CALLS], [f(), {JSON, a fence, a line start


class _ProseFloorSession(_IdentitySession):
    """The prose floor: one search per delta for the characters that can begin a marker, and the delta collected
    (a list append), as a consumer of a parser's text does. Run on the prose workload only."""

    def __init__(self, tools: Any):
        self._search = _FIRST_CHARS.search
        self._kept: list[str] = []
        self._keep = self._kept.append

    def feed(self, delta: str) -> Pair:
        self._search(delta)
        self._keep(delta)
        return delta, []

    def _raw_feed(self, delta: str) -> None:  # type: ignore[override]  # the result is dropped, as every parser's
        self._search(delta)
        self._keep(delta)


class _NaiveSession:
    """Re-parse everything on every delta; text only at the end (what the seed converters do)."""

    def __init__(self, tools: Any):
        self._buf = ""
        self._seen = 0

    def _calls(self) -> list[tuple[str, str]]:
        found = []
        for m in _NAIVE_BLOCKS.finditer(self._buf):
            body = next(g for g in m.groups() if g is not None).strip()
            if body.startswith("<function="):
                name = body[len("<function="): body.index(">")]
                params = dict(re.findall(r"<parameter=([^>]+)>\n?(.*?)\n?</parameter>", body, re.S))
                found.append((name, json.dumps(params)))
                continue
            try:
                value = json.loads(body)
            except ValueError:
                continue
            for obj in value if isinstance(value, list) else [value]:
                if isinstance(obj, dict) and "name" in obj:
                    found.append((obj["name"], json.dumps(obj.get("arguments", obj.get("parameters", {})))))
        return found

    def feed(self, delta: str) -> Pair:
        self._buf += delta
        calls = self._calls()
        new, self._seen = calls[self._seen:], len(calls)
        return "", new

    def close(self) -> Pair:
        return _NAIVE_BLOCKS.sub("", self._buf), []

    def held(self) -> int | None:
        return len(self._buf)


class _BatchSession:
    """Wraps a whole-stream adapter ``deltas -> (text, calls)`` (``--compare``): no per-delta output."""

    def __init__(self, fn: Callable[[list[str]], tuple[str, list[Any]]], tools: Any):
        self._fn = fn
        self._deltas: list[str] = []

    def feed(self, delta: str) -> Pair:
        self._deltas.append(delta)
        return "", []

    def close(self) -> Pair:
        text, calls = self._fn(self._deltas)
        return text, [(c[0], c[1]) if isinstance(c, (tuple, list)) else (c.name, c.arguments) for c in calls]

    def held(self) -> int | None:
        return None


SessionFactory = Callable[[Any], Session]
PROSE_FLOOR: SessionFactory = _ProseFloorSession  # the prose workload's extra baseline (``benchmark.run_suite``)

PARSERS: dict[str, SessionFactory] = {
    "streamparse": _StreamparseSession,
    "identity": _IdentitySession,
    "floor": _FloorSession,
    "naive": _NaiveSession,
}


# ----------------------------------------------------------------------------- whole answers (bench_groups)

class Whole(Protocol):
    """A parser of complete answers, for the construction and whole-answer groups: ``prepare(tools)`` (outside the
    clock: what a server does with a request's tools anyway), ``build(prepared)`` (a parser for them: the
    construction cost), ``extract(parser, prepared, text)`` (one whole answer: what is timed), ``read(raw)``
    (its ``(text, calls)``; text None when the parser gives none)."""

    def prepare(self, tools: Any) -> Any: ...

    def build(self, prepared: Any) -> Any: ...

    def extract(self, parser: Any, prepared: Any, text: str) -> Any: ...

    def read(self, raw: Any) -> tuple[str | None, list[tuple[str, Any]]]: ...


class StreamparseWhole:
    """``read_tools(tools)`` to prepare, outside the clock as the engines' own tool models are made (vLLM's request,
    SGLang's ``Tool``s); ``StreamParser(tools)`` to build; ``parse(text, tools)`` for a whole answer, which builds its
    own parser (the prebuilt one is not used: streamparse's figure includes its construction for the request's
    tools)."""

    @staticmethod
    def prepare(tools: Any) -> Any:
        return read_tools(tools)

    @staticmethod
    def build(tools: Any) -> Any:
        return StreamParser(tools)

    @staticmethod
    def extract(parser: Any, tools: Any, text: str) -> Any:
        return parse(text, tools)

    @staticmethod
    def read(result: Any) -> tuple[str | None, list[tuple[str, Any]]]:
        return result.content, [(c.name, c.arguments) for c in result.tool_calls]


_HERMES_BLOCK = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.S)


def regex_hermes(text: str) -> Pair:
    """A strict Hermes parser as projects write one: each ``<tool_call>{JSON}</tool_call>`` whose JSON is an object
    with a string ``name`` is a call (``json.loads``); the rest, other blocks included, is the text."""
    calls: list[tuple[str, str]] = []

    def take(m: re.Match[str]) -> str:
        try:
            obj = json.loads(m.group(1))
        except ValueError:
            return m.group(0)
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
            return m.group(0)
        calls.append((obj["name"], json.dumps(obj.get("arguments", {}), ensure_ascii=False)))
        return ""

    return _HERMES_BLOCK.sub(take, text), calls


class FunctionWhole:
    """A whole-answer function ``text -> result`` with nothing to build: ``read`` turns its result into
    ``(text, calls)``."""

    def __init__(self, fn: Callable[[str], Any], read: Callable[[Any], tuple[str | None, list[tuple[str, Any]]]]):
        self._fn, self._read = fn, read

    @staticmethod
    def prepare(tools: Any) -> Any:
        return None

    @staticmethod
    def build(prepared: Any) -> Any:
        return None

    def extract(self, parser: Any, prepared: Any, text: str) -> Any:
        return self._fn(text)

    def read(self, raw: Any) -> tuple[str | None, list[tuple[str, Any]]]:
        return self._read(raw)


def optional_wholes(dialect: str) -> tuple[dict[str, Whole], list[str]]:
    """The optional whole-answer comparators of ``dialect`` beyond the engines: the strict regex parser (hermes),
    and ``agent-tool-parser`` (PyPI; Rust-backed; every format it reads) when installed, or a note."""
    found: dict[str, Whole] = {}
    if dialect == "hermes":
        found["regex"] = FunctionWhole(regex_hermes, lambda pair: pair)
    try:
        atp = importlib.import_module("agent_tool_parser")
    except ImportError:
        return found, ["agent-tool-parser: not compared (not installed: pip install agent-tool-parser)"]
    found["agent-tool-parser"] = FunctionWhole(
        atp.try_parse_tool_calls, lambda calls: (None, [(c.name, json.dumps(c.args, ensure_ascii=False)) for c in calls]))
    return found, []


class CompareError(ValueError):
    """A ``--compare`` spec that names no callable: the message says which part is wrong, in one line."""


def load_compare(spec: str) -> tuple[str, SessionFactory]:
    """``module:callable`` -> a parser entry, the module imported as ``python -m`` would (the current directory
    first on the path). The callable takes the list of deltas and returns ``(text, calls)`` where calls are
    ``(name, arguments_json)`` pairs or ToolCall-like objects. A missing colon, module or attribute, a
    non-callable, or a module that fails to import is a ``CompareError`` naming it. The current directory, once
    put first on ``sys.path`` (when neither it nor ``""`` is there), stays there for the rest of the process:
    the compared parser may import more of its own modules later, while it runs."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise CompareError("--compare wants module:callable, e.g. mymodule:parse")
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)
    try:
        loaded = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise CompareError(f"no module {module_name!r} in {here} or on the Python path") from None
        raise CompareError(f"importing {module_name!r} failed: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the caller's module raised while importing: say so in one line
        raise CompareError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}") from None
    fn = getattr(loaded, attr, None)
    if not callable(fn):
        missing = "no" if not hasattr(loaded, attr) else "a non-callable"
        raise CompareError(f"module {module_name!r} ({getattr(loaded, '__file__', '?')}) has {missing} {attr!r}; "
                           "give a function taking the list of deltas, returning (text, calls)")
    return spec, lambda tools: _BatchSession(fn, tools)
