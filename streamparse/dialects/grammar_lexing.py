"""Which terminals Lark's lexer tries before each place's, and whether one reading of the places is the only one.

Invariant: ``fill_lexing(lark, start)`` returns only when (1) the unfolded places read any sequence of terminals
in at most one way, (2) Lark's LALR table, asked through the public interactive parser, accepts every sequence
the places read, from every configuration it reaches on the way, and (3) no state's contextual lexer retypes a
token (Lark's ``unless`` keywords) or skips one (``%ignore``); and then ``TerminalPlace.before[p]`` holds each
terminal that the lexer of some parser state met right after reading place ``p`` (None: at the start) tries
before the place's own. A program that refuses a place's terminal where one of these matches lexes as Lark does:
Lark's lexer tries a state's terminals in a fixed order (priority, then longest possible, then longest pattern,
then name) and takes the first that matches, and the parser state after ``p`` is one the walk met there.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Lark, Token
from lark.exceptions import UnexpectedInput
from lark.lexer import TerminalDef

from .grammar_places import Branch, NotRegular, Place, RulePlace, TerminalPlace

__all__ = ["fill_lexing", "lexer_order"]

MAX_CONFIGURATIONS = 20000  # parser configurations the walk may meet before it gives up (left to Lark)


def lexer_order(terminal: TerminalDef) -> tuple[int, int, int, str]:
    """The order in which Lark's lexer tries terminals (``BasicLexer``'s sort key)."""
    return -terminal.priority, -terminal.pattern.max_width, -len(terminal.pattern.value), terminal.name


class _Automaton:
    """The places as a nondeterministic automaton: nodes joined by empty moves (one per way of going on) and by
    reads (a node that reads a ``TerminalPlace``, then goes to the node after it)."""

    def __init__(self, start: RulePlace):
        self.moves: list[list[int]] = []
        self.reads: dict[int, tuple[TerminalPlace, int]] = {}
        self.read_before: dict[int, TerminalPlace] = {}  # the node after a read -> the place read
        self.final = self._node()
        self.start = self._rule(start, self.final)
        self._closures: dict[int, dict[int, int]] = {}

    def _node(self) -> int:
        self.moves.append([])
        return len(self.moves) - 1

    def _rule(self, place: RulePlace, out: int) -> int:
        if not place.repeated:
            return self._branch(place.branches, out)
        again = self._node()
        entry = self._branch(place.branches, again)
        self.moves[again] += [out, entry]
        return entry

    def _branch(self, branch: Branch, out: int) -> int:
        node = self._node()
        for place, optional, after in branch.edges:
            rest = self._branch(after, out)
            entry = self._place(place, rest)
            if optional:  # read it, or go on without
                skip = self._node()
                self.moves[skip] += [entry, rest]
                entry = skip
            self.moves[node].append(entry)
        self.moves[node] += [out] * len(branch.ends)  # two sequences ending here: two ways
        return node

    def _place(self, place: Place, after: int) -> int:
        if isinstance(place, RulePlace):
            return self._rule(place, after)
        node, read = self._node(), self._node()  # a node of its own after each read: it tells which place was read
        self.moves[read].append(after)
        self.reads[node] = (place, read)
        self.read_before[read] = place
        return node

    def closure(self, node: int) -> dict[int, int]:
        """The reading nodes (and the final node) reached from ``node`` by empty moves: how many ways (1, or 2 for
        two or more)."""
        done = self._closures.get(node)
        if done is not None:
            return done
        ways: dict[int, int] = {}
        order, on_path = [(node, iter(self.moves[node]))], {node}
        while order:  # depth first, without recursion: a long chain of places would exceed Python's stack
            at, pending = order[-1]
            nxt = next(pending, None)
            if nxt is None:
                order.pop()
                on_path.discard(at)
                found: dict[int, int] = {at: 1} if at in self.reads or at == self.final else {}
                for m in self.moves[at]:
                    for target, n in self._closures[m].items():
                        found[target] = min(2, found.get(target, 0) + n)
                self._closures[at] = found
            elif nxt in on_path:
                raise NotRegular("a repetition of something that can be empty")
            elif nxt not in self._closures:
                order.append((nxt, iter(self.moves[nxt])))
                on_path.add(nxt)
        return self._closures[node]

    def sources(self) -> list[int]:
        return [self.start, *(after for _, after in self.reads.values())]

    def steps(self, node: int) -> list[tuple[TerminalPlace, int]]:
        return [self.reads[t] for t in self.closure(node) if t != self.final]


def _check_unambiguous(automaton: _Automaton) -> None:
    """At most one way through the places for any sequence of terminals (a pair of walks that part, or an empty
    stretch taken two ways, with both walks able to finish)."""
    for node in automaton.sources():
        if any(n > 1 for n in automaton.closure(node).values()):
            raise NotRegular("ambiguous: two ways through the rules read the same terminals")
    start = (automaton.start, automaton.start)
    seen, back = {start}, {start: list[tuple[int, int]]()}
    todo = [start]
    while todo:
        pair = todo.pop()
        for one, after_one in automaton.steps(pair[0]):
            for two, after_two in automaton.steps(pair[1]):
                if one.terminal.name == two.terminal.name:
                    nxt = (after_one, after_two)
                    if nxt not in seen:
                        seen.add(nxt)
                        back[nxt] = []
                        todo.append(nxt)
                    back[nxt].append(pair)
    final = automaton.final
    finishing = {p for p in seen if final in automaton.closure(p[0]) and final in automaton.closure(p[1])}
    todo = list(finishing)
    while todo:
        for prev in back[todo.pop()]:
            if prev not in finishing:
                finishing.add(prev)
                todo.append(prev)
    if any(a != b for a, b in finishing):
        raise NotRegular("ambiguous: two ways through the rules read the same terminals")


def _check_no_keywords(lexed: list[TerminalDef]) -> None:
    """Lark's lexer retypes a regex terminal's token that spells a string terminal of the same priority exactly
    (``_create_unless``); the program does not, so such a pair in one lexer state is refused."""
    for word in (t for t in lexed if t.pattern.type == "str"):
        for pattern in (t for t in lexed if t.pattern.type == "re" and t.priority == word.priority):
            m = re.match(pattern.pattern.to_regexp(), word.pattern.value)
            if m is not None and m.group(0) == word.pattern.value:
                raise NotRegular(f"{word.name} is a keyword of {pattern.name} (Lark retypes such tokens)")


def fill_lexing(lark: Lark, start: RulePlace) -> None:
    """Check the places against Lark's LALR table and fill each ``TerminalPlace.before``; NotRegular when a
    condition of the invariant fails."""
    if lark.ignore_tokens:
        raise NotRegular(f"ignores terminals ({', '.join(lark.ignore_tokens)}) between tokens")
    automaton = _Automaton(start)
    _check_unambiguous(automaton)
    terminals = {t.name: t for t in lark.terminals}
    checked: set[frozenset[str]] = set()
    first = lark.parse_interactive("")
    todo: list[tuple[int, Any]] = [(automaton.start, first)]
    seen = {(automaton.start, tuple(first.parser_state.state_stack))}
    while todo:
        node, parser = todo.pop()
        source = automaton.read_before.get(node)
        choices = parser.choices()
        lexed = sorted((terminals[n] for n in choices if n in terminals), key=lexer_order)
        names = frozenset(t.name for t in lexed)
        if names not in checked:
            _check_no_keywords(lexed)
            checked.add(names)
        if automaton.final in automaton.closure(node):
            try:
                parser.copy(deepcopy_values=False).feed_eof()
            except UnexpectedInput:
                raise NotRegular("Lark's LALR table refuses a sentence of the grammar (a conflict)") from None
        for place, after in automaton.steps(node):
            name = place.terminal.name
            if name not in names:
                raise NotRegular(f"Lark's LALR table refuses {name} where the grammar reads it (a conflict)")
            order = lexer_order(place.terminal)
            place.before.setdefault(source, set()).update(t.name for t in lexed if lexer_order(t) < order)
            moved = parser.copy(deepcopy_values=False)
            try:
                moved.feed_token(Token(name, ""))
            except UnexpectedInput:
                raise NotRegular(f"Lark's LALR table refuses {name} where the grammar reads it (a conflict)") from None
            key = (after, tuple(moved.parser_state.state_stack))
            if key not in seen:
                if len(seen) >= MAX_CONFIGURATIONS:
                    raise NotRegular(f"more than {MAX_CONFIGURATIONS} parser configurations")
                seen.add(key)
                todo.append((after, moved))
