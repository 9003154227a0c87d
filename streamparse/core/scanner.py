"""Finding where markup may start: the marker tables, compiled once per set of dialects, and a parser's table (that set
and its tools' names). Which dialect owns a marker found here is ``head_match``'s.

Invariant: the cost of a look is bounded by the longest marker, never by the number of dialects or tools. All enabled
openers are compiled into one alternation regex (literals longest first, one generic pattern for ``{name}`` openers
checked by a dict), kept in parts by a literal's first three characters, so a look tries only the part that can match
there; "could this tail still become a marker?" is one set lookup in the precomputed proper prefixes.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Callable, Generic, Iterable, Mapping, Sequence, TypeVar, Union, overload

from ..arguments.tools import DeclaredNames, ToolSchemas, declared_names
from ..dialects import DIALECTS, REGISTRY, SPANS, resolve
from ..dialects.spec import Dialect, Opener, Span
from .heads import MAX_NAME as _MAX_NAME, PARTIAL, HeadMatch, Partial
from .literals import ASCII_NOCASE, literal_pattern, prefix_pattern

__all__ = ["ASCII_NOCASE", "literal_pattern", "MarkerSet", "MarkerTable", "marker_table", "table_for", "Candidate",
           "HeadMatch", "PARTIAL", "FENCE_HEAD"]

_T = TypeVar("_T")
_new = object.__new__
_NAME_CHARS = re.compile(r"[\w.\-]*")
FENCE_HEAD = re.compile(r"```[\w+.\-]{0,32}[ \t]{0,8}\r?\n[ \t]{0,32}")
_FENCE_HEAD_PREFIX = re.compile(r"`{1,3}(?:(?<=```)[\w+.\-]{0,32}[ \t]{0,8}\r?)?")
FENCE_HEAD_MAX = 80
_KEY = 3  # a literal marker's first characters, lowercase: which part of the markers' alternation may match there
_TRIGGER_DEPTH = 6  # characters of a marker the trigger checks before handing over to ``match``
# Where ``[NAME(`` may start (the name is checked by ``mid_line_call``). Its one group is set only where no other
# alternative matched (they have no groups, and come first): no marker begins there (``mid_line``).
_MID_LINE_START = r"\[(?:((?u:[\w.\-]))|\Z)"
_MID_LINE_NAME = re.compile(rf"[\w.\-]{{0,{_MAX_NAME}}}")  # a look past ``[``: bounded, as the line-start head's


@dataclass(frozen=True)
class Candidate:
    """One dialect's opener (or a span) that a matched marker may begin."""

    dialect: Dialect | None
    opener: Opener | None
    span: Span | None = None


Found = Union[tuple[str, list[Candidate], str | None], Partial, None]  # (marker text, candidates, name) | PARTIAL | None


class MarkerSet:
    """Every enabled opener and span marker, compiled: all of a marker table that does not depend on the tools'
    names, so it is built once per process for each (dialects, tools given or not, pinned) and shared by every
    tool list (``marker_table``). Names are checked against the table's sets after a match."""

    def __init__(self, dialects: Iterable[Dialect], spans: Sequence[Span], has_tools: bool, pinned: bool):
        self.pinned = pinned  # one dialect pinned: its line-start forms are read mid-line too, as its engine reads them
        self.ungated = pinned and not has_tools  # pinned, no tools: a gated name may be any name
        self.spans = tuple(spans)
        # Answers the prompt left inside reasoning (``start_in_reasoning``) or inside a response channel
        # (``start_in_response``): the implicit span's closers. Reasoning the prompt opened also ends where a
        # response channel opens (the model skipped its reasoning's closer); that opener is then read as one.
        self.response_openers = frozenset(s.opener.lower() for s in spans if s.kind == "content")
        self.prompt_reasoning = Span("", tuple(c for s in spans if s.kind == "reasoning" for c in s.closers)
                                     + tuple(s.opener for s in spans if s.kind == "content"))
        self.prompt_response = Span("", tuple(c for s in spans if s.kind == "content" for c in s.closers), "content")
        self.literals: dict[str, list[Candidate]] = {}
        self.templates: list[tuple[str, str, Candidate]] = []  # (before {name}, after {name}, candidate)
        for d in dialects:
            for op in d.openers:
                if "{name}" in op.text:
                    if has_tools:
                        before, after = op.text.lower().split("{name}")
                        self.templates.append((before, after, self._candidate(d, op)))
                else:
                    self.literals.setdefault(op.text.lower(), []).append(self._candidate(d, op))
        for s in spans:
            self.literals.setdefault(s.opener.lower(), []).append(Candidate(None, None, s))
        # What starts a marker: one alternation (literals longest first, then the {name} openers), kept per first
        # three characters (lowercase) as the part that can match where a text begins with them: ``_match_at``.
        ordered = sorted(self.literals, key=len, reverse=True)
        named_openers = [f"{re.escape(before)}((?u:[\\w.\\-]){{1,{_MAX_NAME}}}){re.escape(after)}"
                         for before, after, _ in self.templates]

        def alternation(keep: Callable[[str], bool]) -> Callable[[str, int], re.Match[str] | None] | None:
            parts = [re.escape(m) for m in ordered if keep(m)] + named_openers
            return re.compile("|".join(parts), ASCII_NOCASE).match if parts else None

        self._match_short = alternation(lambda m: len(m) < _KEY)
        self._match_by_key = {key: alternation(lambda m: len(m) < _KEY or m[:_KEY] == key)
                              for key in {m[:_KEY] for m in self.literals if len(m) >= _KEY}}
        # Proper prefixes a delta may end with while the marker is still possible; a line-start-only
        # marker's prefixes count only at a line start, so prose ending in ">" is not held for ">>>".
        anywhere = [m for m, cands in self.literals.items() if any(c.opener is None or not c.opener.line_start for c in cands)]
        self.prefixes = frozenset(m[:k] for m in anywhere for k in range(1, len(m)))
        self.line_prefixes = frozenset(m[:k] for m in self.literals for k in range(1, len(m)))
        self.longest_literal = max([len(m) for m in self.literals] + [1])
        # the longest {name} opener's text without its name (None: no {name} opener): MarkerTable.max_marker adds the
        # longest name's length
        self.longest_template = max((len(b) + len(a) for b, a, _ in self.templates), default=None)

        # Markers looked for at line starts only: letter-initial ones (functools, to=functions.) and those
        # whose every opener is line_start (a bare "{" or "["); a pinned dialect's are read anywhere.
        def line_only(m: str) -> bool:
            return m[0].isalnum() or all(c.opener is not None and c.opener.line_start for c in self.literals[m])

        starts = sorted(m for m in self.literals if not pinned and line_only(m))
        self.word_firsts = frozenset(c for m in starts for c in (m[0], m[0].upper()))
        any_part = prefix_pattern(sorted(m for m in self.literals if pinned or not line_only(m)), _TRIGGER_DEPTH)
        # A {name} opener may start where its text before {name} is followed by a name's first character (or
        # the text ends): the names themselves are checked by ``match``, so this does not depend on them.
        named = "|".join(sorted({f"{re.escape(before)}(?:[\\w.\\-]|\\Z)" for before, _, _ in self.templates}))
        at_start = prefix_pattern(starts, _TRIGGER_DEPTH)
        # Where markup may start: a marker read anywhere, checked for its first characters (a "<" that opens
        # <div> is prose), a backtick (a fence, when at a line start), or a newline before the first
        # characters of a line-start marker (a line opening "The" is prose). A character this does not match
        # cannot begin any enabled marker. The parser's gate uses narrower searches: mid-line, with no line break
        # in the delta (prose_gate: no backtick); at a line start, the same and the delta's own start (line_gate).
        # A bare "[" list of calls read at line starts only (pythonic, auto-detected, tools declared): a "[" mid-line
        # before a name's first character is looked at too, to report ``[NAME(`` left as text (``mid_line``).
        self.mid_line = next((d.name for d in dialects for op in d.openers if op.line_start and op.text == "["
                              and any(p.called == "(" for p in op.look)), "") if has_tools and not pinned else ""
        bracket = _MID_LINE_START if self.mid_line else ""
        self.trigger = _alternation(any_part, named, bracket, "`", f"\n[ \t]*(?:{at_start})" if at_start else "")
        self.prose_gate = _alternation(any_part, named, bracket, "\n")
        # At a line start the gate also stops a delta that begins (after spaces) as a line-start marker or a fence.
        line_part = "|".join(p for p in (at_start, "`") if p)
        self.line_gate = _alternation(any_part, named, bracket, "\n", f"\\A[ \t]*(?:{line_part})") if line_part \
            else self.prose_gate
        self.prose_search, self.line_search = self.prose_gate.search, self.line_gate.search  # bound once, for all

    def _candidate(self, d: Dialect, op: Opener) -> Candidate:
        return Candidate(d, op, None)


class _ByNames(Generic[_T]):
    """A ``MarkerTable`` value made from its names on first read and kept as an instance attribute, so every later
    read is a plain one (``functools.cached_property`` without its lock)."""

    def __init__(self, make: Callable[[MarkerTable, DeclaredNames], _T]):
        self._make = make
        self._attr = make.__name__

    @overload
    def __get__(self, table: None, owner: type) -> _ByNames[_T]: ...

    @overload
    def __get__(self, table: MarkerTable, owner: type) -> _T: ...

    def __get__(self, table: MarkerTable | None, owner: type) -> _ByNames[_T] | _T:
        if table is None:
            return self
        values = table.__dict__
        names = values.get("_names")
        if names is None:
            names = values["_names"] = declared_names(tuple(table.declared))
        value = values[self._attr] = self._make(table, names)
        return value


class MarkerTable(MarkerSet):
    """A ``MarkerSet`` and the tools' names: what a parser for one tool list reads. Built per parser (one with no
    names is shared), it copies the shared set's attributes (one dict copy, so a read of any of them is one
    instance attribute, as on the hot paths) and keeps the names as declared. What depends on the names
    (``tool_names``, ``max_marker``, ``tool_prefixes``) is made on first read, from the ``DeclaredNames`` every
    table of the same names shares (``arguments.tools.declared_names``)."""

    declared: Sequence[str]  # the tools' names as listed (repeats kept)
    reads_calls: bool  # a call in reasoning the prompt opened is read (spans.py)

    def __init__(self, shared: MarkerSet, declared: Sequence[str]):  # noqa: super().__init__ not called: shared
        values = self.__dict__ = shared.__dict__.copy()
        values["declared"] = declared
        values["reads_calls"] = shared.pinned or bool(declared)

    @classmethod
    def of(cls, shared: MarkerSet, declared: Sequence[str]) -> MarkerTable:
        """``MarkerTable(shared, declared)`` with names declared, made without a call of ``__init__`` (one a parser)."""
        table = _new(cls)
        values = table.__dict__ = shared.__dict__.copy()
        values["declared"] = declared
        values["reads_calls"] = True
        return table

    @_ByNames
    def tool_names(self, names: DeclaredNames) -> dict[str, str]:
        """Lowercase -> as declared."""
        return names.lowered

    @_ByNames
    def max_marker(self, names: DeclaredNames) -> int:
        """The longest marker text: a {name} opener's with the longest name, or the longest literal."""
        if self.longest_template is None:
            return self.longest_literal
        return max(self.longest_literal, self.longest_template + names.longest)

    @_ByNames
    def tool_prefixes(self, names: DeclaredNames) -> frozenset[str]:
        """Every prefix of every name (lowercase), the empty one too: a name cut by a delta's end."""
        return names.prefixes

    def match(self, text: str, i: int, final: bool, line_blank: bool) -> Found:
        """What starts at ``text[i]``: ``(marker, candidates, name)``, PARTIAL, or None."""
        n = len(text)
        if not final and n - i < self.max_marker:
            tail = text[i:].lower()
            if tail in (self.line_prefixes if line_blank or self.pinned else self.prefixes) or self._template_prefix(tail):
                return PARTIAL
        match = self._match_by_key.get(text[i : i + _KEY].lower(), self._match_short)
        m = match(text, i) if match is not None else None
        if m is None:
            return None
        marker = m.group()
        low = marker.lower()
        cands = self.literals.get(low)
        name = None
        if cands is None:
            name = self.tool_names.get((m.group(m.lastindex or 0) or "").lower())
            if name is None:
                return None
            cands = [t[2] for t in self.templates if low.startswith(t[0]) and low.endswith(t[1])]
        if not line_blank and not self.pinned:
            cands = [c for c in cands if c.opener is None or not c.opener.line_start]
        return (marker, cands, name) if cands else None

    def _template_prefix(self, tail: str) -> bool:
        for before, after, _ in self.templates:
            if tail.startswith(before):
                rest = tail[len(before) :]
                ident = _NAME_CHARS.match(rest).end()  # type: ignore[union-attr]  # re's stub: a `*` pattern always matches
                if rest[:ident] in self.tool_prefixes and (ident == len(rest) or after.startswith(rest[ident:])):
                    return True
            elif before.startswith(tail):
                return True
        return False

    def mid_line_call(self, text: str, j: int, final: bool) -> tuple[int, str] | Partial | None:
        """At ``text[j] == "["`` mid-line: ``[NAME(`` with NAME a declared tool (dotted allowed, any case, as the
        line-start form reads it)? ``(end, name)``: where the ``(`` ends and the declared name; PARTIAL: the text
        ends inside a declared name's prefix; None: not one. Reads at most the longest name past ``[``."""
        first = text[j + 1 : j + 2]
        if not first:
            return None if final else PARTIAL  # the text ends at the "[": the name may come next
        if first.lower() not in self.tool_prefixes:  # most "[": no declared name starts so
            return None
        k = _MID_LINE_NAME.match(text, j + 1).end()  # type: ignore[union-attr]  # re's stub: a `{0,n}` pattern always matches
        word = text[j + 1 : k].lower()
        if k == len(text):
            return PARTIAL if not final and word in self.tool_prefixes else None
        name = self.tool_names.get(word) if text[k] == "(" else None
        return (k + 1, name) if name is not None else None

    def match_word(self, text: str, i: int, final: bool) -> tuple[int, Found]:
        """At a line start ``text[i]`` (spaces allowed): a letter-initial marker? Returns (where, found)."""
        k = i
        n = len(text)
        while k < n and text[k] in " \t":
            k += 1
        if k >= n or text[k] not in self.word_firsts:
            return k, None
        return k, self.match(text, k, final, True)

    def match_fence(self, text: str, i: int, final: bool) -> int | Partial | None:
        """A line-start markdown fence line at ``text[i]``: its length, PARTIAL, or None."""
        m = FENCE_HEAD.match(text, i)
        if m is not None and (m.end() < len(text) or final):
            return m.end() - i
        if final:
            return None
        p = _FENCE_HEAD_PREFIX.match(text, i)
        if (m is not None or (p is not None and p.end() == len(text))) and len(text) - i <= FENCE_HEAD_MAX:
            return PARTIAL
        return None


def _alternation(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(p for p in parts if p), ASCII_NOCASE)


Enabled = Union[str, Dialect]  # a dialect by its canonical name, or a declaration given as it is (a derived one)


@functools.lru_cache(maxsize=256)
def _marker_set(names: tuple[Enabled, ...], has_tools: bool, pinned: bool) -> MarkerSet:
    ungated = pinned and not has_tools
    declared = [DIALECTS[n] if isinstance(n, str) else n for n in names]
    dialects = [d for d in declared if has_tools or ungated or not d.needs_tools]
    # A declaration given as an object (a derived one) also reads the spans of the dialects it names as aliases.
    named = {d.name for d in declared} | {a for n in names if not isinstance(n, str) for a in n.aliases}
    spans = [s for s in SPANS if not s.dialect or s.dialect in named]
    return MarkerSet(dialects, spans, has_tools, pinned)


def _enabled(dialects: Iterable[str | Dialect]) -> tuple[Enabled, ...]:
    """Canonical names for the names and aliases given (``resolve``), declarations kept as they are, in order."""
    given = [dialects] if isinstance(dialects, (str, Dialect)) else list(dialects)
    if not any(isinstance(d, Dialect) for d in given):
        return tuple(resolve(given))
    out: list[Enabled] = []
    for d in given:
        for one in ([d] if isinstance(d, Dialect) else resolve([d])):
            if one not in out:
                out.append(one)
    return tuple(out)


def table_for(schemas: Mapping[str, object] | None, dialects: Iterable[str | Dialect] | None = None) -> MarkerTable:
    """A parser's table: the dialects named (every one detected by default; a ``Dialect`` given as it is, such as
    one derived from a chat template) and its declared tools' names; one dialect named is pinned. The names are
    neither read nor hashed here (a ``ToolSchemas`` gives them as read; another mapping's keys are copied), and by
    default the shared set is found without hashing the 38 dialect names of ``_marker_set``'s key either."""
    declared = schemas.names if type(schemas) is ToolSchemas else tuple(schemas or ())
    if dialects is None:
        return MarkerTable.of(_auto_set(), declared) if declared else _auto_nameless()
    names = _enabled(dialects)
    return marker_table(names, declared, len(names) == 1)


@functools.cache
def _auto_set() -> MarkerSet:
    return _marker_set(REGISTRY.auto, True, False)


@functools.cache
def _auto_nameless() -> MarkerTable:
    return _nameless_table(REGISTRY.auto, False)


@functools.lru_cache(maxsize=256)
def _nameless_table(names: tuple[Enabled, ...], pinned: bool) -> MarkerTable:
    """The table of these dialects with no tools declared: there are no names to add, so every parser shares it."""
    return MarkerTable(_marker_set(names, False, pinned), ())


def marker_table(names: tuple[Enabled, ...], tools: Sequence[str], pinned: bool = False) -> MarkerTable:
    """The table for these enabled dialects and tool names. The compiled part is shared by every tool list
    (``_marker_set``); what a tool list adds is its names, read on first use, so a new list costs one dict copy.

    Auto-detection reads prose-like forms (bare JSON, ``[f(x=1)]``) only for declared tools. A dialect the
    operator pinned (``pinned``: exactly one, chosen) is read as its engine parser reads it: anywhere in a
    line, and with no tools declared its gates open; with tools declared, a call must still name one of them.
    """
    pinned = pinned and len(names) == 1
    return MarkerTable(_marker_set(names, True, pinned), tools) if tools else _nameless_table(names, pinned)
