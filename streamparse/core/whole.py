"""A whole answer read without the state machine, when it is plain prose and strict Hermes blocks.

Invariant: ``whole_events(parser, text)`` returns exactly the events the machine returns for ``text``
(``parser.feed(text) + parser.close()`` on that freshly built parser: the same list, the same ids drawn
from its ``id_factory`` in the same order), or None, having changed nothing, so the caller runs the machine.

How it knows: it reads the prose as ``StreamParser._scan_text`` reads it, with the parser's own marker table
(the trigger search, ``match_word`` at line starts, ``match_fence``, ``match``, ``mid_line_call``), and
goes on only while every place the machine would stop at is nothing (the machine reads on) or the opener
of a strict block: ``<tool_call>``, at most ``MAX_WS`` ASCII spaces, one JSON object (the extent and the
value the body scanner's whole-object read and ``json_calls`` give), at most ``MAX_GAP`` ASCII spaces,
``</tool_call>``. Each call is typed by the parser's own ``CallFactory._typed``; a call that brings any
diagnostic (unknown tool, coercion, missing argument, enum...), a repair, a marker of another dialect, a
possible marker cut by the text's end, a fence, a span (``<think>``), a mid-line ``[NAME(``, or an option
the machine reads otherwise (``stream_arguments``, ``start_in_reasoning``/``start_in_response``, a used
parser, a text near ``max_block_chars``) makes it decline. Between blocks the machine emits the prose as
written, one ``TextDelta`` per run, and drops only the whitespace inside a block; a block ends a line for
its reading (``_line_blank`` is true after it), so each block's end is read as a line start here too.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol

from ..arguments.schema import call_from_object, number_value, tool_schemas
from ..dialects import DIALECTS
from ..dialects.decoders import json_calls
from ..dialects.spec import JSON, Opener, peek, ws
from .calls import MAX_BLOCK_CHARS, MAX_CALLS, CallFactory, new_call_id
from .events import Event, TextDelta, ToolCall
from .gaps import MAX_GAP
from .heads import MAX_WS
from .scanner import table_for
from .spans import TEXT

if TYPE_CHECKING:
    from .scanner import MarkerTable

__all__ = ["whole_events", "fresh_whole", "FreshParser"]

_OPENER, _END = "<tool_call>", "</tool_call>"
_HERMES = DIALECTS.get("hermes")
# What this module assumes of Hermes' declaration; a change there turns the fast route off (it never guesses).
_READY = (_HERMES is not None and _HERMES.body == JSON and _HERMES.end == (_END,) and not _HERMES.closers
          and _HERMES.decode is json_calls and not _HERMES.text_values and not _HERMES.eos_ends
          and _HERMES.openers == (Opener(_OPENER, head=(ws(),), look=(peek("[{"),)),))
# A strict block's parts (ASCII whitespace only: the head reads str.isspace(), the body \S; these agree on it).
_HEAD = re.compile(rf"<tool_call>[ \t\r\n]{{0,{MAX_WS}}}(?=\{{)").match
_OPENS: dict[int, tuple[Mapping[str, Any], bool]] = {}  # id(table.literals) -> (them, _opens_hermes)
_BLANK = frozenset((" ", "\t"))  # what match_word skips before a line-start marker
_TAIL = re.compile(rf"[ \t\r\n]{{0,{MAX_GAP}}}</tool_call>").match


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# The body scanner finds a whole object's end with a strict JSONDecoder; json_calls then reads the same text with
# relaxed_json's decoder (control characters allowed, numbers by number_value, NaN refused). Where a strict read
# with those hooks succeeds, both succeed, on the same extent, with this value: one read stands for the two.
# (Integers are read by int itself: number_value gives int(text) for JSON's integer text, and both raise past
# Python's digit limit. The C scanner is called as is: StopIteration where no value starts.)
_READ: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder(  # type: ignore[attr-defined]  # (not in the stub)
    parse_float=number_value, parse_constant=_no_constant).scan_once


class WholeReader(Protocol):
    """What ``whole_events`` reads of a parser (``StreamParser``), read-only."""

    @property
    def _table(self) -> MarkerTable: ...
    @property
    def _factory(self) -> CallFactory: ...
    @property
    def _mode(self) -> int: ...
    @property
    def _streaming(self) -> bool: ...
    @property
    def _max_block(self) -> int: ...
    @property
    def _held(self) -> str: ...
    @property
    def _look(self) -> str: ...
    @property
    def _line_blank(self) -> bool: ...
    @property
    def _closed(self) -> bool | str: ...
    @property
    def _resume(self) -> int: ...


class FreshParser:
    """A ``StreamParser(tools)`` just built, with no option, as far as ``whole_events`` reads one: its table and
    its call factory, built as the parser builds them, and the parser's starting state (a test holds each field
    equal to a fresh parser's). ``parse()`` reads a clean answer with it and builds no machine."""

    __slots__ = ("_table", "_factory")
    _mode = _resume = TEXT
    _streaming = False
    _max_block = MAX_BLOCK_CHARS
    _held = _look = ""
    _line_blank = True
    _closed = False

    def __init__(self, tools: Any):
        schemas = tool_schemas(tools) or None
        self._table = table_for(schemas)
        self._factory = CallFactory(schemas, MAX_CALLS, new_call_id)


def fresh_whole(text: str, tools: Any) -> list[Event] | None:
    """``StreamParser(tools).read_whole(text)`` when the whole route reads ``text`` (else None, nothing done)."""
    return whole_events(FreshParser(tools), text) if _READY and type(text) is str else None


def whole_events(parser: WholeReader, text: str) -> list[Event] | None:
    """The events of ``parser.feed(text) + parser.close()``, or None (nothing changed: run the machine).
    On success the calls' ids are drawn and counted: the parser has then served, and is not fed."""
    if not _READY or type(text) is not str:
        return None
    if (parser._mode != TEXT or parser._resume != TEXT or parser._streaming or parser._held or parser._look
            or not parser._line_blank or parser._closed or len(text) >= parser._max_block):
        return None  # not a fresh parser reading prose, or an option the machine reads otherwise
    table = parser._table
    factory = parser._factory
    search, match, match_word = table.trigger.search, table.match, table.match_word
    mid_line = table.mid_line
    n = len(text)
    near_end = n - table.max_marker  # a marker starting past this may be read as cut by the end (match: PARTIAL)
    strict_opener = _opens_hermes(table)
    out: list[Event] = []  # the events, in order; the calls' ids and indexes are set once all is read
    calls: list[ToolCall] = []
    pos = i = 0  # pos: where the current prose run starts (a line start as the machine reads it)
    words = table.word_firsts  # match_word reads a marker only past spaces and tabs, at one of these
    c = text[:1]
    if (c in words or c in _BLANK) and match_word(text, 0, False)[1] is not None:
        return None
    while True:
        m = search(text, i)
        if m is None:
            break
        j = m.start()
        ch = text[j]
        if ch == "\n":
            if match_word(text, j + 1, False)[1] is not None:
                return None  # a line-start marker (or the start of one)
            i = j + 1
            continue
        if not (strict_opener and j <= near_end and text.startswith(_OPENER, j)):
            nl = text.rfind("\n", pos, j)  # the line is blank at j: spaces and tabs since the run's start or a newline
            blank = not text[nl + 1 if nl >= 0 else pos : j].strip(" \t")
            if ch == "`":
                if blank and table.match_fence(text, j, False) is not None:
                    return None  # a fence (or its start): the machine reads what it opens
                i = j + 1
                continue
            found = match(text, j, False, blank)
            if found is None:
                if ch == "[" and mid_line and not blank and table.mid_line_call(text, j, False) is not None:
                    return None  # "[NAME(" mid-line: reported by the machine
                i = j + 1
                continue
            if type(found) is not tuple or found[1][0].dialect is not _HERMES:
                return None  # another dialect's marker, a span, or a marker cut by the text's end
        # (else: what match() gives here without asking, see _opens_hermes: Hermes' opener, first)
        block = _block(factory, text, j)
        if block is None:
            return None
        if j > pos:
            out.append(TextDelta(text[pos:j]))
        pos = i = block[0]
        calls.append(ToolCall(0, "", block[1], block[2], "hermes"))
        out.append(calls[-1])
        c = text[pos : pos + 1]
        if (c in words or c in _BLANK) and match_word(text, pos, False)[1] is not None:
            return None  # after a block the line counts as blank: a line-start marker may follow at once
    if pos < n:
        out.append(TextDelta(text[pos:]))
    count = factory.count
    if count + len(calls) > factory.max_calls:
        return None
    new_id = factory.new_id
    for event in calls:  # (the machine draws each id as its call leaves: in this order)
        event.index, event.id = count, new_id()
        count += 1
    factory.count = count
    return out


def _opens_hermes(table: MarkerTable) -> bool:
    """Does ``table.match`` read a lowercase ``<tool_call>`` as Hermes' opener, first among its candidates, wherever
    the text goes on (the text's end aside: PARTIAL is looked for within ``max_marker`` of it)? Its one regex tries
    the literals longest first, so yes when no other literal begins with ``<tool_call>`` and Hermes comes first in
    that literal's candidates (its opener is read mid-line too, so the line-start filter leaves it first).
    Answered once per set of literals (shared by every tool list of a dialect selection)."""
    literals = table.literals
    seen = _OPENS.get(id(literals))
    if seen is not None and seen[0] is literals:
        return seen[1]
    cands = literals.get(_OPENER)
    ok = (bool(cands) and cands is not None and cands[0].dialect is _HERMES and cands[0].span is None
          and not any(m != _OPENER and m.startswith(_OPENER) for m in literals))
    if len(_OPENS) >= 64:
        _OPENS.clear()
    _OPENS[id(literals)] = (literals, ok)  # (held: its id is not reused while it is here)
    return ok


def _block(factory: CallFactory, text: str, j: int) -> tuple[int, str, str] | None:
    """A strict Hermes block at ``text[j]``: ``(its end, name, arguments JSON)``, as the machine reads and types
    it with no event but the call, or None."""
    assert _HERMES is not None
    head = _HEAD(text, j)
    if head is None:
        return None
    k = head.end()
    try:
        value, stop = _READ(text, k)
    except (ValueError, StopIteration, RecursionError):
        return None
    tail = _TAIL(text, stop)
    if tail is None or type(value) is not dict or "name" not in value:
        return None  # (no "name": maybe {"tool_calls": [...]}, read by the machine)
    try:
        name, arguments = value["name"], value.get("arguments")
        if type(name) is str and type(arguments) is dict and name.strip():  # call_from_object's reading, shortened:
            name = name.strip()  # a strict JSON value holds no expression to refuse
        else:
            name, arguments = call_from_object(value)
        if type(arguments) is not dict:
            return None  # arguments written as text that is not an object: a repair, said
        schemas = factory.schemas
        if schemas is not None and name not in schemas:
            return None  # unknown_tool
        typed_name, arguments_json, notes = factory._typed(_HERMES, name, arguments)
    except Exception:  # (whatever the machine makes of it, it makes it itself)
        return None
    if notes:
        return None
    return tail.end(), typed_name, arguments_json
