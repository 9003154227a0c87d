"""The regex of unfolded places: each terminal read atomically, after a lookahead refusing what Lark lexes first.

Invariant: a text ``RegexWriter.whole(start)`` matches is one the places read as tokens cut exactly as Lark's
contextual lexer cuts them (given ``grammar_lexing``'s ``before``): each terminal matched atomically, after a
lookahead refusing the terminals Lark tries before it there. Where that lookahead cannot tell which place was read
just before (no group to ask), it refuses what any of them would: the regex may refuse a text Lark reads, never
the reverse. ``readings(place)`` is one reading of a repetition, for re-reading its span.
Group names: ``t<id>`` a terminal place's token, ``o<id>`` an optional rule place read, ``e<id>`` the sequence
read when a rule place has several, ``r<id>`` a repetition's span; the places' readers look them up by name.
"""

from __future__ import annotations

import re

from lark import Lark

from .grammar_places import Branch, NotRegular, Place, RulePlace, TerminalPlace

__all__ = ["RegexWriter"]


def _places(place: Place) -> list[TerminalPlace]:
    """The terminal places under ``place``."""
    if isinstance(place, TerminalPlace):
        return [place]
    found, todo = [], [place.branches]
    while todo:
        branch = todo.pop()
        for part, _, after in branch.edges:
            found += _places(part)
            todo.append(after)
    return found


class RegexWriter:
    """Writes the regexes of one grammar's places (``whole``, ``readings``)."""

    def __init__(self, lark: Lark, start: RulePlace):
        self.patterns = {t.name: t.pattern.to_regexp() for t in lark.terminals}
        for name, pattern in self.patterns.items():
            if re.compile(pattern).groups and re.search(r"\\[1-9]|\(\?P=|\(\?\(", pattern):
                raise NotRegular(f"terminal {name} refers to its own groups")
        for place in _places(start):
            if not place.before:
                raise NotRegular(f"{place.terminal.name} is never read (no parser state reaches it)")
            if len({frozenset(g) for g in place.before.values()}) > 1:
                for before in place.before:
                    if before is not None:
                        before.tested = True
        # In the regex being written: the terminal places written so far, in order; those given a group.
        self.written: dict[TerminalPlace, int] = {}
        self.captured: set[TerminalPlace] = set()

    def whole(self, start: RulePlace) -> str:
        self.written, self.captured = {}, set()
        return self.place(start, True) + r"\Z"

    def readings(self, place: RulePlace) -> str:
        self.written, self.captured = {}, set()
        return self.sequences(place, True)

    def place(self, place: Place, capture: bool, optional: bool = False) -> str:
        """``place``'s regex; with ``capture``, the groups its reader and later lookaheads need."""
        if isinstance(place, RulePlace):
            if not place.repeated:
                return self.sequences(place, capture)
            body = f"(?:{self.sequences(place, False)})+"
            return f"(?P<r{place.ident}>{body})" if capture else body
        atom = self.atom(place)
        guard = self.guard(place)
        self.written[place] = len(self.written)
        if capture and (place.kept or optional or place.tested):
            atom = f"(?P<t{place.ident}>{atom})"
            self.captured.add(place)
        return guard + atom

    def atom(self, place: TerminalPlace) -> str:
        """The terminal's pattern, matched once: its first match, never backtracked into (Lark's lexer takes that
        match and moves on)."""
        return f"(?>{self.patterns[place.terminal.name]})"

    def guard(self, place: TerminalPlace) -> str:
        """The lookahead before ``place``: by the place read just before, nearest first (last written) while its
        group can tell: it has one, and every place that can come just before and is nearer, or not written before
        it in this regex (a repetition's end, a place outside the regex), was asked first; the rest all together.
        The nearest of those places whose group took part is the one read just before: any read after it would be
        nearer."""
        remaining = dict(place.before)
        chain: list[tuple[TerminalPlace, set[str]]] = []
        unwritten = len(self.written)  # (sorts as nearest: asked first, it ends the chain)
        for before in sorted(remaining, key=lambda p: -1 if p is None else self.written.get(p, unwritten), reverse=True):
            if len({frozenset(g) for g in remaining.values()}) <= 1 or before is None or before not in self.captured:
                break
            chain.append((before, remaining.pop(before)))
        text = self._refuse(set().union(*remaining.values()))
        for before, names in reversed(chain):
            text = f"(?(t{before.ident}){self._refuse(names)}|{text})"
        return text

    def _refuse(self, names: set[str]) -> str:
        return "(?!" + "|".join(f"(?:{self.patterns[n]})" for n in sorted(names)) + ")" if names else ""

    def sequences(self, place: RulePlace, capture: bool) -> str:
        return self.branch(place.branches, capture, capture and len(place.sequences) > 1)

    def branch(self, branch: Branch, capture: bool, marked: bool) -> str:
        """The ways on from ``branch``: its places (each then its own branch), then the sequences ending here."""
        ways = []
        for part, optional, after in branch.edges:
            text = self.place(part, capture, optional)
            if optional:
                text = f"(?:{text}(?P<o{part.ident}>))?" if capture and isinstance(part, RulePlace) else f"(?:{text})?"
            ways.append(text + self.branch(after, capture, marked))
        ways += [f"(?P<e{end.ident}>)" if marked else "" for end in branch.ends]
        return ways[0] if len(ways) == 1 else "(?:" + "|".join(ways) + ")"
