"""A regular Lark grammar compiled into one regex, which reads an item as Lark's LALR parser would.

Invariant: for a grammar that compiles (``compile_grammar``; ``program_for`` by name), ``program.tree(text)`` is
either ``None`` or equal to the tree ``lark.parse(text)`` returns; ``None`` says nothing about the text (ask Lark).
The regex is built from the grammar alone: Lark's own terminal patterns, each read atomically (Lark's lexer never
backtracks into a token) after a lookahead refusing the terminals Lark's contextual lexer would try first there
(``grammar_lexing``), in the order of the unfolded rules (``grammar_places``); a repetition is matched whole, then
re-read one reading at a time. The tree is rebuilt from the match's groups with each alternative's ``Shape``.
Tokens carry their type, text and ``start_pos``/``end_pos`` as Lark's; ``line``/``column`` count every newline.
``program.fold(text, actions)`` reads the same way but gives each rule's node to its action as it is made, so the
value is ``fold_tree(tree, actions)`` of that tree, with no tree built (the decoders' way: ``decoders.Rules``).
A grammar that does not compile is left to Lark: ``program_for`` gives None, ``refusal`` the reason.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Mapping, Union

from lark import Lark, Token, Tree

from ..arguments.grammar import load_grammar
from .grammar_lexing import fill_lexing
from .grammar_places import NotRegular, Place, RulePlace, TerminalPlace, unfold
from .grammar_regex import RegexWriter

__all__ = ["Actions", "GrammarProgram", "NotRegular", "compile_grammar", "fold_tree", "program_for", "refusal"]

_TOKEN, _NODE, _SPLICE, _REPEAT = range(4)
Actions = Mapping[str, Callable[[list[Any]], Any]]  # a rule's name -> its node's value from its children


class _Retiled(Exception):
    """A repetition's readings, re-read one at a time, did not tile its span: the program gives up (Lark decides)."""


class _Lines:
    """Lines and columns of positions asked in increasing order (tokens are made left to right), counted as Lark's
    lexer counts them: from the last position asked, so a long item costs one pass."""

    __slots__ = ("text", "at", "line", "line_start")

    def __init__(self, text: str):
        self.text, self.at, self.line, self.line_start = text, 0, 1, 0

    def place(self, pos: int) -> tuple[int, int]:
        if pos < self.at:  # (never, as tokens are made; counted again from the start all the same)
            self.at, self.line, self.line_start = 0, 1, 0
        newlines = self.text.count("\n", self.at, pos)
        if newlines:
            self.line += newlines
            self.line_start = self.text.rfind("\n", self.at, pos) + 1
        self.at = pos
        return self.line, pos - self.line_start + 1


class _Trees:
    """Builds Lark's own objects: tokens placed as Lark places them (``lines`` None: the text holds no newline)."""

    __slots__ = ("text", "lines")

    def __init__(self, text: str):
        self.text, self.lines = text, _Lines(text) if "\n" in text else None

    def token(self, kind: str, m: re.Match[str], group: int) -> Token:
        start, end = m.span(group)
        lines = self.lines
        if lines is None:
            return Token(kind, self.text[start:end], start, 1, start + 1, 1, end + 1, end)
        line, column = lines.place(start)
        end_line, end_column = lines.place(end)
        return Token(kind, self.text[start:end], start, line, column, end_line, end_column, end)

    @staticmethod
    def node(data: tuple[str, str], children: list[Any]) -> Any:
        return Tree(data[0], children)  # (Lark's own name: a rule's is a Token)


class _Folds:
    """Folds the tree as it is read: each rule's node is its action's value (``actions[rule](children)``), as a
    Lark ``Transformer`` would make it from the tree; a rule with no action stays a ``Tree``. Tokens are unplaced
    (type and text only), or their bare text when the actions do not ask their types (``typed`` False)."""

    __slots__ = ("text", "actions", "typed")

    def __init__(self, text: str, actions: Actions, typed: bool):
        self.text, self.actions, self.typed = text, actions, typed

    def token(self, kind: str, m: re.Match[str], group: int) -> str:
        start, end = m.span(group)
        return Token(kind, self.text[start:end]) if self.typed else self.text[start:end]

    def node(self, data: tuple[str, str], children: list[Any]) -> Any:
        action = self.actions.get(data[1])  # (looked up by the plain string: a Token compares slowly)
        return Tree(data[0], children) if action is None else action(children)


_Build = Union[_Trees, _Folds]


def fold_tree(tree: Any, actions: Actions) -> Any:
    """A tree Lark parsed, folded as ``GrammarProgram.fold`` folds what it reads (the same actions, bottom up).
    Without recursion: a tree of any depth folds."""
    if not isinstance(tree, Tree):
        return tree
    done: list[Any] = []  # the values of the children folded so far, in order
    stack: list[tuple[Tree[Any], int]] = [(tree, 0)]  # (a node, how many of its children are folded)
    while stack:
        node, folded = stack.pop()
        if folded < len(node.children):
            child = node.children[folded]
            stack.append((node, folded + 1))
            if isinstance(child, Tree):
                stack.append((child, 0))
            else:
                done.append(child)
            continue
        children = done[len(done) - folded :] if folded else []
        del done[len(done) - folded :]
        action = actions.get(node.data)
        done.append(Tree(node.data, children) if action is None else action(children))
    return done[0]


class _Reader:
    """Builds one rule place's node from a match: the sequence read (its end group took part), which of its
    optional places were read (their groups took part), so the alternative read, then that alternative's children.

    ``ways``: per sequence, (its end group's index in ``m.groups()``, unused when there is one sequence; the indexes
    of its optional places' groups; by mask of those read: (children as (kind, what, ``None`` placeholders
    before), placeholders after, the tree's name (as Lark gives it, and as a plain string), ``?rule``))."""

    __slots__ = ("ways",)

    def __init__(self) -> None:
        self.ways: list[tuple[int, tuple[int, ...],
                              dict[int, tuple[tuple[tuple[int, Any, int], ...], int, tuple[str, str], bool]]]] = []

    def children(self, m: re.Match[str], groups: tuple[str | None, ...], build: _Build
                 ) -> tuple[list[Any], tuple[str, str], bool]:
        ways = self.ways
        way = ways[0]
        if len(ways) > 1:
            for way in ways:
                if groups[way[0]] is not None:
                    break
            else:
                raise _Retiled  # no sequence of this place took part (the regex says one did)
        mask = 0
        if way[1]:
            bit = 1
            for group in way[1]:
                if groups[group] is not None:
                    mask |= bit
                bit <<= 1
        items, nones_after, data, expand1 = way[2][mask]
        out: list[Any] = []
        for kind, what, nones in items:
            if nones:
                out += [None] * nones
            if kind == _TOKEN:
                out.append(build.token(what[1], m, what[0]))
            elif kind == _NODE:
                out.append(what.node(m, groups, build))
            elif kind == _SPLICE:
                out += what.children(m, groups, build)[0]
            else:
                out += what.readings(m, build)
        if nones_after:
            out += [None] * nones_after
        return out, data, expand1

    def node(self, m: re.Match[str], groups: tuple[str | None, ...], build: _Build) -> Any:
        out, data, expand1 = self.children(m, groups, build)
        return out[0] if expand1 and len(out) == 1 else build.node(data, out)


class _Repeat:
    """A repetition's span (``group``), re-read one reading at a time with ``regex`` (its ``b`` alone)."""

    __slots__ = ("group", "regex", "reader")

    def __init__(self, group: int, regex: re.Pattern[str], reader: _Reader):
        self.group, self.regex, self.reader = group, regex, reader

    def readings(self, m: re.Match[str], build: _Build) -> list[Any]:
        start, end = m.span(self.group)
        out: list[Any] = []
        while start < end:
            one = self.regex.match(build.text, start)
            if one is None or not start < one.end() <= end:
                raise _Retiled
            out += self.reader.children(one, one.groups(), build)[0]
            start = one.end()
        return out


class _Readers:
    """Makes the readers of a grammar's places for the regexes ``RegexWriter`` writes (groups looked up by name)."""

    def __init__(self, writer: RegexWriter):
        self.writer = writer

    def reader(self, place: RulePlace, groups: Mapping[str, int]) -> _Reader:
        """The reader of ``place``'s alternatives in a regex whose named groups are ``groups``."""
        reader = _Reader()
        for sequence in place.sequences:
            marker = groups[f"e{sequence.ident}"] - 1 if len(place.sequences) > 1 else -1
            optional = tuple(groups[f"t{p.ident}" if isinstance(p, TerminalPlace) else f"o{p.ident}"] - 1
                             for p, maybe in zip(sequence.places, sequence.optional) if maybe)
            by_mask = {mask: (tuple((*self._item(alt.places[i], spliced, groups), nones)
                                    for i, spliced, nones in alt.shape.include),
                              alt.shape.nones_after, (alt.shape.data, str(alt.shape.data)), alt.shape.expand1)
                       for mask, alt in sequence.alternatives.items()}
            reader.ways.append((marker, optional, by_mask))
        return reader

    def _item(self, place: Place, spliced: bool, groups: Mapping[str, int]) -> tuple[int, Any]:
        if isinstance(place, TerminalPlace):
            return _TOKEN, (groups[f"t{place.ident}"], place.terminal.name)
        if place.repeated:
            regex = re.compile(self.writer.readings(place))
            return _REPEAT, _Repeat(groups[f"r{place.ident}"], regex, self.reader(place, regex.groupindex))
        return (_SPLICE if spliced else _NODE), self.reader(place, groups)


class GrammarProgram:
    """One compiled grammar: ``tree(text)`` is Lark's tree for ``text``, ``fold(text, actions)`` that tree as the
    actions fold it (``fold_tree``), without building it; either None when the program declines (ask Lark)."""

    __slots__ = ("name", "regex", "_reader")

    def __init__(self, name: str, regex: re.Pattern[str], reader: _Reader):
        self.name, self.regex, self._reader = name, regex, reader

    def tree(self, text: str) -> Any:
        return self._read(text, _Trees(text))

    def fold(self, text: str, actions: Actions, typed: bool = True) -> Any:
        return self._read(text, _Folds(text, actions, typed))

    def _read(self, text: str, build: _Build) -> Any:
        m = self.regex.match(text)
        if m is None:
            return None
        try:
            return self._reader.node(m, m.groups(), build)
        except _Retiled:
            return None


def _check_options(lark: Lark) -> None:
    options = lark.options
    if options.parser != "lalr" or options.lexer != "contextual":
        raise NotRegular(f"parser {options.parser} with lexer {options.lexer} (only LALR with the contextual lexer)")
    if options.postlex is not None or options.lexer_callbacks or options.regex or options.g_regex_flags \
            or options.transformer is not None or options.tree_class not in (None, Tree) or options.use_bytes \
            or options.edit_terminals is not None or options.propagate_positions:
        raise NotRegular("options that change tokens or trees (postlex, callbacks, regex module, flags, positions)")


def compile_grammar(lark: Lark, name: str = "") -> GrammarProgram:
    """The program of a grammar whose rules reachable from ``start`` are regular; NotRegular says why not."""
    _check_options(lark)
    try:
        start = unfold(lark)
        fill_lexing(lark, start)
        writer = RegexWriter(lark, start)
        regex = re.compile(writer.whole(start))
        reader = _Readers(writer).reader(start, regex.groupindex)
    except (re.error, RecursionError, OverflowError) as exc:
        raise NotRegular(f"too deep, or its regex does not compile: {exc}") from None
    return GrammarProgram(name, regex, reader)


@functools.cache
def _compiled(name: str) -> Union[GrammarProgram, NotRegular]:
    try:
        return compile_grammar(load_grammar(name), name)
    except NotRegular as refused:
        return refused


def program_for(name: str) -> GrammarProgram | None:
    """The program of the grammar called ``name`` (compiled once per process), or None when it does not compile."""
    compiled = _compiled(name)
    return compiled if isinstance(compiled, GrammarProgram) else None


def refusal(name: str) -> str | None:
    """Why the grammar called ``name`` does not compile, or None when it does."""
    compiled = _compiled(name)
    return str(compiled) if isinstance(compiled, NotRegular) else None
