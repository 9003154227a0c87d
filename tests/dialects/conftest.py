"""The dialect tests also hold every grammar program to Lark: each item a program reads (or folds) while a test runs
is parsed by Lark too, and a test whose items read differently fails at teardown (``grammar_program``'s invariant, checked on
every sample these tests write, beyond those ``test_grammar_program`` gathers).
"""

from __future__ import annotations

from typing import Any, Iterator

from lark.exceptions import LarkError
import pytest

from streamparse.arguments.grammar import load_grammar
from streamparse.dialects.grammar_program import Actions, GrammarProgram


@pytest.fixture(autouse=True)
def grammar_programs_read_as_lark(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    differences: list[str] = []
    read, fold = GrammarProgram.tree, GrammarProgram.fold

    def checked(program: GrammarProgram, text: str) -> Any:
        mine = read(program, text)
        if mine is not None and program.name:  # (a program compiled from a Lark object has no name to load)
            try:
                theirs: Any = load_grammar(program.name).parse(text)
            except LarkError as exc:
                theirs = exc
            if mine != theirs:
                differences.append(f"{program.name}: {text!r}: program {mine!r}, Lark {theirs!r}")
        return mine

    def folded_and_checked(program: GrammarProgram, text: str, actions: Actions, typed: bool = True) -> Any:
        value = fold(program, text, actions, typed)
        tree = checked(program, text)  # the tree the fold stands for, held to Lark's
        if (value is None) != (tree is None):
            differences.append(f"{program.name}: {text!r}: the fold declined where the tree did not, or the reverse")
        return value

    monkeypatch.setattr(GrammarProgram, "tree", checked)
    monkeypatch.setattr(GrammarProgram, "fold", folded_and_checked)
    yield
    assert not differences, "\n".join(differences)
