"""The parser's states and every move between them, as one table (as h11 keeps its own in ``_state.py``).

Invariant: the parser's state changes only through :func:`step`, by a move this table allows; a move it does not
list is a bug, raised as one. A block remembers the state it opened in (``resume``: prose, or the reasoning it
sits in) and gives it back when it ends, whatever way it ends.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["State", "Move", "RESUME", "TABLE", "step", "SPAN_OPENS", "SPAN_ENDS", "BLOCK_OPENS", "HEAD_READ", "NO_HEAD",
           "BLOCK_ENDS", "CLOSERS_MAY_FOLLOW", "DROPPED", "CLOSERS_END"]


class State(IntEnum):
    TEXT = 0  # prose: text leaves at once; a marker opens a span or a block
    SPAN = 1  # a reasoning or content span, up to its closer (a call may open inside reasoning)
    HEAD = 2  # a block's marker was read: which dialect's head follows?
    BODY = 3  # a block's body: items and its end
    AFTER = 4  # a call block ended: its optional closers may follow


class Move(IntEnum):
    SPAN_OPENS = 0  # a span's opener
    SPAN_ENDS = 1  # its closer (or the end of the answer the prompt opened it for)
    BLOCK_OPENS = 2  # a call marker
    HEAD_READ = 3  # a dialect's head matched: its body is read
    NO_HEAD = 4  # no dialect's head follows the marker: it is text
    BLOCK_ENDS = 5  # the body ended (with or without its end marker); no optional closer may follow
    CLOSERS_MAY_FOLLOW = 6  # the body ended with calls, and optional closers may follow it
    DROPPED = 7  # a block released as text (too large), or cut off by the end of a truncated stream
    CLOSERS_END = 8  # the optional closers were read, or something else came instead


# Each move as a module name too: reading one off the class (``Move.DROPPED``) is a lookup through the enum's type.
SPAN_OPENS, SPAN_ENDS, BLOCK_OPENS, HEAD_READ, NO_HEAD, BLOCK_ENDS, CLOSERS_MAY_FOLLOW, DROPPED, CLOSERS_END = Move

RESUME = -1  # back to the state the block opened in

TABLE: dict[tuple[State, Move], State | int] = {
    (State.TEXT, Move.SPAN_OPENS): State.SPAN,
    (State.TEXT, Move.BLOCK_OPENS): State.HEAD,
    (State.SPAN, Move.SPAN_ENDS): State.TEXT,
    (State.SPAN, Move.BLOCK_OPENS): State.HEAD,  # a call written inside reasoning
    (State.HEAD, Move.HEAD_READ): State.BODY,
    (State.HEAD, Move.NO_HEAD): RESUME,
    (State.HEAD, Move.DROPPED): RESUME,
    (State.BODY, Move.BLOCK_ENDS): RESUME,
    (State.BODY, Move.CLOSERS_MAY_FOLLOW): State.AFTER,
    (State.BODY, Move.DROPPED): RESUME,
    (State.AFTER, Move.CLOSERS_END): RESUME,
}


def step(state: State, move: Move, resume: State) -> State:
    """The state after ``move`` from ``state``; ``resume``: the state the open block began in."""
    try:
        nxt = TABLE[state, move]
    except KeyError:
        raise AssertionError(f"no move {move.name} from {state.name}") from None
    return resume if nxt is RESUME else nxt  # type: ignore[return-value]  # (a State when not RESUME)
