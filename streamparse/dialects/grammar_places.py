"""A Lark grammar's rules unfolded from ``start`` into places: every place a terminal or a rule is read.

Invariant: ``unfold(lark)`` returns the start rule's place when the rules reachable from ``start`` are not
recursive, except rules of Lark's repetition form ``_r: b | _r b`` (what ``x*`` and ``x+`` become), each read as
``b`` one or more times; otherwise it raises ``NotRegular`` saying why. Each use of a rule is a place of its own.
Lark expands ``x?`` into one alternative with and one without ``x``; a rule's alternatives are folded back into
``Sequence``s, each standing for the alternatives that drop any subset of its optional places, so ``k``
optional symbols give ``k`` optional places, not ``2**k`` copies; sequences that begin alike share those places. Each alternative keeps its ``Shape``: how
Lark's tree builder (``lark.parse_tree_builder``, LALR) makes its node from its children, read from the rule's
public fields only (``alias``, ``options``, ``expansion``, a terminal's ``filter_out``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import itertools
from typing import Union

from lark import Lark
from lark.grammar import NonTerminal, Rule, Symbol, Terminal
from lark.lexer import TerminalDef

__all__ = ["NotRegular", "TerminalPlace", "RulePlace", "Place", "Branch", "Sequence", "Alternative", "Shape", "unfold"]

MAX_PLACES = 2000  # a grammar that unfolds to more is left to Lark (a regex that large is no gain)


class NotRegular(Exception):
    """Why a grammar is left to Lark's parser: recursion, ambiguity, or a Lark feature the program does not mirror."""


@dataclass(frozen=True)
class Shape:
    """How Lark makes an alternative's node: the children it includes (index in the expansion, spliced because the
    rule is ``_inlined``, the ``None`` placeholders before it), placeholders after, the tree's name, ``?rule``."""

    include: tuple[tuple[int, bool, int], ...]
    nones_after: int
    data: str
    expand1: bool


@dataclass(eq=False)
class TerminalPlace:
    """One place a terminal is read. ``before``: the terminals Lark's contextual lexer tries first here, by the place
    read just before (None: none, the start), as ``grammar_lexing`` fills it; ``kept``: some alternative keeps its
    token as a child; ``tested``: a later place's lookahead asks whether this place was read."""

    terminal: TerminalDef
    ident: int
    kept: bool = False
    before: dict["TerminalPlace | None", set[str]] = field(default_factory=dict)
    tested: bool = False


@dataclass(eq=False)
class Alternative:
    """One rule of Lark's (an alternative of its origin): the places it reads, one per expansion symbol."""

    rule: Rule
    places: list["Place"]
    shape: Shape


@dataclass(eq=False)
class Sequence:
    """Places read in order, ``optional`` ones perhaps not; ``alternatives``: the alternative read, by which optional
    places were (bit ``k`` set: the ``k``-th optional place was read)."""

    places: list["Place"]
    optional: list[bool]
    alternatives: dict[int, Alternative]
    ident: int


@dataclass(eq=False)
class Branch:
    """Where sequences part: the next places (optional or not, each with the branch after it), and the sequences
    ending here. Sequences that begin alike share those places, so a common beginning is read once."""

    edges: list[tuple["Place", bool, "Branch"]] = field(default_factory=list)
    ends: list[Sequence] = field(default_factory=list)


@dataclass(eq=False)
class RulePlace:
    """One place a rule is read: one of its ``sequences``, which ``branches`` hold as a tree of their places.
    ``repeated``: they hold the ``b`` of ``_r: b | _r b``, read one or more times, every reading's children spliced
    into the node that holds the place."""

    name: str
    sequences: list[Sequence]
    branches: Branch
    repeated: bool
    ident: int


Place = Union[TerminalPlace, RulePlace]


def shape(rule: Rule, placeholders: bool) -> Shape:
    """Lark's tree builder for one rule (``maybe_create_child_filter``, ``ExpandSingleChild``), as data."""
    expansion = rule.expansion
    empty = rule.options.empty_indices if placeholders else ()
    if empty:
        counts = [len(ones) for ones in "".join(str(int(b)) for b in empty).split("0")]
    else:
        counts = [0] * (len(expansion) + 1)
    include: list[tuple[int, bool, int]] = []
    nones = 0
    for i, symbol in enumerate(expansion):
        nones += counts[i]
        if rule.options.keep_all_tokens or not (isinstance(symbol, Terminal) and symbol.filter_out):
            include.append((i, not symbol.is_term and symbol.name.startswith("_"), nones))
            nones = 0
    data = rule.alias or rule.options.template_source or rule.origin.name
    return Shape(tuple(include), nones + counts[len(expansion)], data, bool(rule.options.expand1 and not rule.alias))


def _families(rules: list[Rule]) -> list[tuple[tuple[Symbol, ...], list[bool], dict[int, Rule]]]:
    """The rules folded into sequences: the longest left, the positions it may drop (each such drop being a rule),
    kept only when every combination of drops is exactly one rule; else that longest rule alone."""
    remaining = {tuple((s.is_term, s.name) for s in r.expansion): r for r in rules}
    if len(remaining) != len(rules):
        raise NotRegular(f"rule {rules[0].origin.name!r} has two alternatives of the same symbols")
    families = []
    while remaining:
        full = max(remaining, key=len)
        drops = [i for i in range(len(full)) if full[:i] + full[i + 1:] in remaining]
        members: dict[tuple[tuple[bool, str], ...], int] = {}
        for mask in range(1 << len(drops)):
            dropped = {i for k, i in enumerate(drops) if not mask >> k & 1}
            read = tuple(s for i, s in enumerate(full) if i not in dropped)
            if read not in remaining or read in members:
                members, drops = {full: 0}, []
                break
            members[read] = mask
        longest = remaining[full]
        family = {mask: remaining.pop(read) for read, mask in members.items()}
        families.append((tuple(longest.expansion), [i in drops for i in range(len(full))], family))
    return families


class _Unfolding:
    def __init__(self, lark: Lark):
        self.rules: dict[str, list[Rule]] = {}
        for rule in lark.rules:
            self.rules.setdefault(rule.origin.name, []).append(rule)
        self.terminals = {t.name: t for t in lark.terminals}
        self.placeholders = bool(lark.options.maybe_placeholders)
        self.idents = itertools.count()
        self.places = 0

    def rule(self, name: str, outer: tuple[str, ...]) -> RulePlace:
        if name in outer:
            raise NotRegular(f"rule {name!r} is recursive ({' > '.join((*outer, name))})")
        rules = self.rules[name]
        repeated = any(not s.is_term and s.name == name for r in rules for s in r.expansion)
        if repeated:
            rules = self._repeated(name, rules)
        sequences, branches = [], Branch()
        for full, optional, members in _families(rules):
            at, places = branches, []
            for symbol, maybe in zip(full, optional):
                for place, also_optional, after in at.edges:
                    if also_optional == maybe and _reads(place, symbol):
                        break
                else:
                    place, after = self.place(symbol, (*outer, name)), Branch()
                    at.edges.append((place, maybe, after))
                places.append(place)
                at = after
            alternatives = {}
            for mask, rule in members.items():
                read, k = [], 0
                for place, maybe in zip(places, optional):
                    if not maybe or mask >> k & 1:
                        read.append(place)
                    k += maybe
                alternatives[mask] = Alternative(rule, read, shape(rule, self.placeholders))
                if alternatives[mask].shape.expand1 and name.startswith("_"):
                    raise NotRegular(f"rule {name!r} is both inlined and ?-expanded")
                for child in (read[i] for i, _, _ in alternatives[mask].shape.include):
                    if isinstance(child, TerminalPlace):
                        child.kept = True
            sequences.append(Sequence(places, optional, alternatives, next(self.idents)))
            at.ends.append(sequences[-1])
        return RulePlace(name, sequences, branches, repeated, next(self.idents))

    def place(self, symbol: Symbol, outer: tuple[str, ...]) -> Place:
        self.places += 1
        if self.places > MAX_PLACES:
            raise NotRegular(f"more than {MAX_PLACES} places")
        if symbol.is_term:
            return TerminalPlace(self.terminals[symbol.name], next(self.idents))
        return self.rule(symbol.name, outer)

    def _repeated(self, name: str, rules: list[Rule]) -> list[Rule]:
        """The ``b`` rules of ``_r: b | _r b``, when that is exactly the form (and every ``_r b`` shapes as ``_r``
        spliced, then ``b``); else NotRegular."""
        if not name.startswith("_"):
            raise NotRegular(f"rule {name!r} is left-recursive and not inlined (its trees nest)")
        head = NonTerminal(name)
        base = [r for r in rules if not (r.expansion and r.expansion[0] == head)]
        again = {tuple(r.expansion[1:]): r for r in rules if r.expansion and r.expansion[0] == head}
        by_tail = {tuple(r.expansion): r for r in base}
        if set(again) != set(by_tail) or len(again) + len(by_tail) != len(rules):
            raise NotRegular(f"rule {name!r} is recursive, not a repetition")
        for tail, rule in again.items():
            if head in tail:
                raise NotRegular(f"rule {name!r} is recursive, not a repetition")
            first, rest = shape(rule, self.placeholders), shape(by_tail[tail], self.placeholders)
            shifted = tuple((i + 1, spliced, nones) for i, spliced, nones in rest.include)
            if first.include != ((0, True, 0), *shifted) or first.nones_after != rest.nones_after or first.expand1:
                raise NotRegular(f"rule {name!r}: a repetition whose readings shape differently")
        return base


def _reads(place: Place, symbol: Symbol) -> bool:
    if isinstance(place, TerminalPlace):
        return symbol.is_term and place.terminal.name == symbol.name
    return not symbol.is_term and place.name == symbol.name


def unfold(lark: Lark) -> RulePlace:
    """The start rule's place (the only start, or the first)."""
    start = lark.options.start
    return _Unfolding(lark).rule(start[0] if isinstance(start, list) else start, ())
