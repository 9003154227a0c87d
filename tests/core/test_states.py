"""The parser's state table (``core/states.py``): the only place its state changes, and what each move does."""

from __future__ import annotations

import ast
import pathlib

import pytest

import streamparse.core as core_pkg
from helpers import TOOLS
from streamparse import StreamParser
from streamparse.core.states import RESUME, TABLE, Move, State, step

CORE = pathlib.Path(core_pkg.__file__).parent


def test_every_move_is_made_from_some_state_and_every_state_is_reached() -> None:
    assert {move for _, move in TABLE} == set(Move)
    reached = {nxt for nxt in TABLE.values() if nxt is not RESUME} | {State.TEXT}
    assert reached == set(State)


def test_a_move_the_table_does_not_list_is_a_bug() -> None:
    with pytest.raises(AssertionError, match="no move HEAD_READ from TEXT"):
        step(State.TEXT, Move.HEAD_READ, State.TEXT)


@pytest.mark.parametrize("resume", [State.TEXT, State.SPAN])
def test_a_block_gives_back_the_state_it_opened_in(resume: State) -> None:
    for state, move in [(State.HEAD, Move.NO_HEAD), (State.BODY, Move.BLOCK_ENDS), (State.AFTER, Move.CLOSERS_END),
                        (State.BODY, Move.DROPPED)]:
        assert step(state, move, resume) == resume


def test_the_parser_state_is_assigned_in_one_place() -> None:
    """``_mode`` is set by ``__init__`` and by ``_go`` (the table's move) only, in every core module."""
    places = []
    for path in CORE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef):
                continue
            for node in ast.walk(func):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                    node, ast.AnnAssign) else []
                for t in targets:
                    for sub in ast.walk(t):
                        if isinstance(sub, ast.Attribute) and sub.attr == "_mode":
                            places.append((path.name, func.name))
    assert sorted(places) == [("parser.py", "__init__"), ("parser.py", "_go")]


def test_moves_seen_on_a_stream_follow_the_table() -> None:
    seen = []

    class Watched(StreamParser):
        def _go(self, move: Move) -> None:
            before = self._mode
            super()._go(move)
            seen.append((before.name, move.name, self._mode.name))

    parser = Watched(TOOLS)
    parser.feed("<think>hmm</think>Sure.\n<tool_call>\n")
    parser.feed('{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call> <tool_cake>')
    parser.close()
    assert seen == [("TEXT", "SPAN_OPENS", "SPAN"), ("SPAN", "SPAN_ENDS", "TEXT"), ("TEXT", "BLOCK_OPENS", "HEAD"),
                    ("HEAD", "HEAD_READ", "BODY"), ("BODY", "BLOCK_ENDS", "TEXT")]
