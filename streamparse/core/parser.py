"""The streaming core: text deltas in, events out. Pure, synchronous, no I/O.

Invariant: every character is examined a bounded number of times. One gate stands before the machine: a delta
holding no character that a token live in the current state can begin with (and nothing held before it) is taken
whole by that state's run, at the cost of one search. Every other delta is read by the machine: each state has one
reader, and the state changes only by a move of ``states.TABLE`` (``_go``). A marker opens a block whose owner is
decided by a short head check (dialect table, no per-dialect branches here); the body's scanner reads only new
characters, each item is decoded once when it closes, and the call leaves in that same feed.

Whitespace rule: text outside blocks is emitted verbatim. A block runs from its first marker character (or
opening fence) to its last closer; whitespace between a body and its optional closers is the block's, up
to ``MAX_GAP`` characters. Limits are positional, so any chunking gives the same result: a block longer
than ``max_block_chars`` is released as text at exactly that length.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

from .. import arguments as args_mod
from .block import Block
from .after import AfterReader
from .bodies import BracketBody
from .calls import MAX_BLOCK_CHARS, MAX_CALLS, CallFactory, new_call_id
from ..dialects.spec import PYTHON, TAGGED, Dialect
from .events import Diagnostic, Event, ParseResult, TextDelta
from .mid_line import MidLine
from .items import SEPARATORS, ItemCalls
from .output import Output
from .head_match import match_head
from .scanner import PARTIAL, Candidate, HeadMatch, table_for
from .tag_body import TagBody
from .tag_values import ValueTagBody
from .chat_template import decide_setup
from .openings import answer_opening
from .parser_class import register_parser
from .spans import SpanReader
from .states import (BLOCK_ENDS, BLOCK_OPENS, CLOSERS_MAY_FOLLOW, DROPPED, HEAD_READ, NO_HEAD, SPAN_ENDS, SPAN_OPENS,
                     Move, State, step)

_TEXT, _SPAN, _HEAD, _BODY, _AFTER = State

__all__ = ["StreamParser", "ParseResult", "parse"]

_NO_LIMIT = 1 << 62
SLOW_BLOCK_CHARS = 200_000  # a block this large takes a few ms to decode
_new = object.__new__  # TextDelta's one field is set by hand by the prose gate's run (tests/core/test_gate.py)


class StreamParser:
    """Incremental tool-call parser.

    ``feed(delta)`` returns the events the delta completes; ``close()`` ends the
    stream. ``tools`` (OpenAI, bare or Anthropic tool dicts, or a list read already:
    ``arguments.read_tools``) gate the forms that look like prose and type argument values;
    ``dialects`` restricts detection (names or aliases; default: every dialect but the named-only ones). Exactly
    one dialect named is *pinned*: its prose-like forms are read without tools, as its engine parser reads
    them. ``calls_in_reasoning``: a call to a declared tool written inside reasoning
    leaves as a call (off by default: thinking aloud can look like a call).
    ``start_in_reasoning`` / ``start_in_response``: the chat template's generation prompt opened reasoning
    (``<think>``) or a response channel (Kimi K3's ``<|open|>response<|sep|>``), so the answer starts inside it
    and its closer, never written before, ends it.

    ``chat_template`` (the model's Jinja chat template, as text), with ``chat_template_kwargs`` (what the request
    passes to it): the format, the start state and the generation prompt are read from it
    (``core.chat_template.read_template``, cached per template and kwargs). ``generation_prompt``: the text the
    rendered prompt ended with, when known; it wins over rendering, and its last line, when it begins a marker of
    the dialects read (functionary's ``>>>``), is read as the answer's beginning. ``dialects``,
    ``start_in_reasoning`` and ``start_in_response`` given here win over what the template says.
    """

    # The parser's state, every name of it (states.py: the moves; the components hold their own)
    __slots__ = ("_schemas", "_table", "_prose_gate", "_line_gate", "_gate", "_pass", "_room", "_max_block", "_held",
                 "_closed", "_block", "_cands", "_resume", "_calls_in_reasoning", "_call_options", "_items", "_after",
                 "_mid", "_output", "_text", "_event", "_mode", "_spans")

    def __init__(
        self,
        tools: Sequence[Mapping[str, Any]] | args_mod.ToolSchemas | None = None,
        *,
        dialects: Iterable[str | Dialect] | None = None,
        max_block_chars: int = MAX_BLOCK_CHARS,
        max_calls: int = MAX_CALLS,
        start_in_reasoning: bool | None = None,
        start_in_response: bool | None = None,
        id_factory: Callable[[], str] = new_call_id,
        stream_arguments: bool = False,
        calls_in_reasoning: bool = False,
        chat_template: str | None = None,
        chat_template_kwargs: Mapping[str, Any] | None = None,
        generation_prompt: str | None = None,
    ) -> None:
        # Every name is a slot (``__slots__``); derived values are read from self._table. What only a block, a span
        # or optional closers need is made when one first opens (``_items``, ``_spans``, ``_after``; ``_mid`` at the
        # first "[" read mid-line), so a parser that meets none (and its construction) pays nothing for it.
        if chat_template is not None or generation_prompt is not None:
            listed = tools.tools if type(tools) is args_mod.ToolSchemas else tools  # (rendered as the tools given)
            setup = decide_setup(listed, chat_template, chat_template_kwargs, generation_prompt, dialects,
                                 start_in_reasoning, start_in_response)
            dialects, start_in_reasoning, start_in_response, generation_prompt = setup
        self._schemas = args_mod.read_tools(tools) or None  # names now, schemas on first use; [] means no tools
        self._table = table = table_for(self._schemas, dialects)
        self._prose_gate, self._line_gate = table.prose_search, table.line_search
        self._gate: Callable[[str], object] = type  # feed()'s first test: None means "the run takes it whole"
        self._pass: Callable[[str], list[Event]] | None = None  # the gated state's run (``_arm_gate``; None: prose)
        self._room = _NO_LIMIT  # the longest delta the gate's run may take
        self._max_block = max_block_chars
        self._held = ""
        self._closed: bool | str = False  # "truncated" / "" while close() runs
        self._block: Block | None = None
        self._resume: State = _TEXT  # the state the open block began in, given back when it ends
        self._calls_in_reasoning = calls_in_reasoning and self._schemas is not None
        self._call_options = (max_calls, id_factory, stream_arguments)  # for ``_items``, made with the first block
        self._items: ItemCalls | None = None  # a block's items into calls (items.py), from the first block on
        self._after: AfterReader | None = None  # AFTER's reader and its state (after.py), while closers may follow
        self._mid: MidLine | None = None  # "[NAME(" mid-line, reported (mid_line.py): made at the first "[" it reads
        self._output = output = Output()  # the feed's events, and whether the line is blank (output.py)
        self._text: Callable[[str], None] = output.prose  # where text goes (a block inside reasoning: the reasoning)
        self._event: Callable[[Event], None] = output.event
        # SPAN's reader and the span open (spans.py), from the first span on; or the span the prompt opened, whose
        # closer, never written, ends it
        in_span = start_in_reasoning or start_in_response
        self._mode: State = _SPAN if in_span else _TEXT
        self._spans: SpanReader | None = SpanReader(self, table.prompt_reasoning if start_in_reasoning
                                                    else table.prompt_response) if in_span else None
        if generation_prompt:
            opening = answer_opening(generation_prompt, self._table)
            if opening:
                self.feed(opening)  # the prompt's, so never text of the answer: what it releases is dropped

    # ------------------------------------------------------------------ public API

    def feed(self, delta: str) -> list[Event]:
        """Consume one text delta; return the events it completes (maybe none)."""
        # The one gate: a delta holding no character that any token live in this state can begin with is the
        # state's text (prose, a span's, the value being read), taken whole by the state's run (``_arm_gate``).
        try:
            if self._gate(delta) is None and 0 < len(delta) < self._room:
                run = self._pass
                if run is None:  # prose mid-line: one TextDelta, its one field set by hand (a third of this path)
                    event = _new(TextDelta)
                    event.text = delta
                    return [event]
                return run(delta)
        except TypeError:
            pass  # not a str: said below
        if self._closed:
            raise RuntimeError("feed() after close()")
        if not isinstance(delta, str):
            raise TypeError(f"delta must be str, not {type(delta).__name__}")
        if not delta:
            return []
        return self._run(self._held + delta, final=False)

    def close(self, truncated: bool = False) -> list[Event]:
        """End of stream: flush held text, finish or release any open block.

        ``truncated``: the stream was cut off (``finish_reason: "length"``, max tokens), so a call block still
        open is one the model never finished. It leaves neither as a call (no repair completes it) nor as text
        (it is markup, not prose): a ``truncated`` diagnostic carries its text. Calls it finished still leave,
        and so does a call whose start already left (``stream_arguments``): its arguments end as written so far."""
        if self._closed:
            return []
        self._closed = "truncated" if truncated else ""  # read by _settle; feed() after close() sees it as closed
        events = self._run(self._held, final=True)
        self._closed = True
        return events

    def read_whole(self, text: str, truncated: bool = False) -> list[Event]:
        """A whole answer on a parser not fed yet: ``feed(text) + close(truncated)``, the same machine in one feed.
        (Reading it in close's one run instead lost a marker's prefix cut at the end of an answer whose block was
        released as too large: the long fuzz, seeds 4601-4602.)"""
        return self.feed(text) + self.close(truncated)

    def may_be_slow(self, delta: str | None = None) -> bool:
        """Could feeding ``delta`` (None: closing) decode a block of ``SLOW_BLOCK_CHARS`` or more?
        Transports run such a step in a worker thread, so other streams are not stalled."""
        b = self._block
        if (b.size if b else 0) + len(delta or "") < SLOW_BLOCK_CHARS:
            return False
        return b is None or delta is None or self._mode != _BODY or b.scanner is None or b.scanner.may_finish(delta)

    @property
    def held_text(self) -> str:
        """Characters received but not yet emitted, outside a block (a possible marker)."""
        mode = self._mode
        if mode == _AFTER:
            return self._held + self._after.ws  # type: ignore[union-attr]  # (AFTER has its reader)
        return self._held if mode == _TEXT or mode == _SPAN else ""

    # ------------------------------------------------------------------ driver

    def _run(self, text: str, final: bool) -> list[Event]:
        """Read ``text`` (what was held, then the delta) through the state table until a state needs more."""
        output = self._output
        output.begin()
        self._held = ""
        mid = self._mid
        pos, n = mid.look_on(text, final) if mid is not None and mid.look else 0, len(text)
        readers = _READERS
        while True:
            while pos < n:
                mode = self._mode
                new = readers[mode](self, text, pos, final)
                if new == pos and self._mode == mode:
                    break  # this state needs more text
                pos = new
            if not final or self._settle():
                break
        self._held = text[pos:]
        if self._items is not None:
            for ev in self._items.take():
                output.event(ev)
        self._arm_gate(final)
        return output.end()

    def _arm_gate(self, final: bool) -> None:
        """The gate for the next delta, by state: the search for a character a live token may begin with, the run
        that takes a delta holding none, and how long a delta it may take (a block's room to its limit). Only
        with nothing held, so the delta is all the run's: prose mid-line with no look pending; a span whose
        closer alone can end it; a block's value, where its scanner names its tokens (``gate``) and no streamed
        call waits to start. Elsewhere (a head, a gap, a tentative closer) every character is the machine's."""
        gate: Callable[[str], object] = type  # (never None: every delta goes to the machine)
        if final or self._held or self._mid is not None and self._mid.look:
            pass
        elif self._mode == _TEXT:
            if self._resume == _TEXT:
                blank = self._output.line_blank
                gate, self._room = self._line_gate if blank else self._prose_gate, _NO_LIMIT
                self._pass = self._pass_line if blank else None
        elif self._mode == _SPAN:
            spans = self._spans
            span_gate = spans.gate() if spans is not None else None
            if span_gate is not None:
                gate, self._pass, self._room = span_gate, spans.pass_delta, _NO_LIMIT  # type: ignore[union-attr]
        elif self._mode == _BODY and self._resume == _TEXT:
            b = self._block
            lives = self._items.lives  # type: ignore[union-attr]  # (a block is open: its calls' reader is made)
            live = lives[-1] if lives else None
            if b is not None and b.scanner is not None and (live is None or not live.waiting):
                body_gate = b.scanner.gate()
                if body_gate is not None:
                    gate, self._pass = body_gate, self._pass_body
                    self._room = self._max_block - b.size - len(b.scanner.unread())
        self._gate = gate

    def _pass_line(self, delta: str) -> list[Event]:
        """Prose at a line start (no line break, no marker's start): its text; the line is blank no longer unless
        the delta is spaces and tabs, and then the gate is the mid-line one."""
        output = self._output
        output.track_line(delta)
        if not output.line_blank:  # mid-line now: the mid-line gate, and its run inline in feed
            self._gate, self._pass = self._prose_gate, None
        return [TextDelta(delta)]

    def _pass_body(self, delta: str) -> list[Event]:
        """A block's value text (no token in it): written to the block (a streamed call reads it as written)."""
        self._room -= len(delta)
        self._block.write(delta)  # type: ignore[union-attr]  # (the gate is armed only with a block)
        return self._items.take()  # type: ignore[union-attr]

    def _settle(self) -> bool:
        """End of stream: move an open state towards TEXT. True once nothing is open."""
        if self._closed == "truncated" and self._mode in (_HEAD, _BODY):
            self._items.drop_unfinished()  # type: ignore[union-attr]  # (a block is open: see _begin)
        elif self._mode == _HEAD:
            self._abort_head()
        elif self._mode == _BODY:
            self._items.finish_block()  # type: ignore[union-attr]
        elif self._mode == _AFTER:
            self._after.end(0)  # type: ignore[union-attr]  # (AFTER has its reader)
        else:
            return True
        return False

    # ------------------------------------------------------------------ TEXT

    def _scan_text(self, text: str, pos: int, final: bool) -> int:
        table = self._table
        search = table.trigger.search
        output = self._output
        i = pos
        if output.line_blank:
            k, word = table.match_word(text, pos, final)
            if word is not None:
                self._text(text[pos:k])
                return k if word == PARTIAL else self._begin(text, k, 0, word)
        while True:
            m = search(text, i)
            if m is None:
                self._text(text[pos:])
                return len(text)
            j = m.start()
            self._text(text[pos:j])
            pos = j
            fence = 0
            if text[j] == "\n":
                k, word = table.match_word(text, j + 1, final)
                if word is None:
                    i = j + 1
                    continue
                self._text(text[j:k])
                pos = k
                if word == PARTIAL:
                    return k
                return self._begin(text, k, 0, word)
            if text[j] == "`":
                fence_or = table.match_fence(text, j, final) if output.line_blank else None
                if fence_or == PARTIAL:
                    return j
                found = table.match(text, j + fence_or, final, True) if isinstance(fence_or, int) else None
                fence = fence_or if isinstance(fence_or, int) else 0
                if isinstance(found, tuple) and found[1][0].span is not None:
                    found = None  # a fence opens calls, not reasoning
            else:
                found = table.match(text, j, final, output.line_blank)
            if found == PARTIAL:
                return j
            if found is None:
                mid = self._mid
                if mid is None and text[j] == "[" and table.mid_line:
                    mid = self._mid = MidLine(self)
                end = mid.at(text, j, final) if mid is not None else None  # "[NAME(" mid-line: reported, its text
                # up to "(" out
                pos = end or pos
                i = end or j + 1
                continue
            return self._begin(text, j, fence, found)

    def _begin(self, text: str, j: int, fence: int, found: tuple[str, list[Candidate], str | None]) -> int:
        marker, cands, tool_name = found
        after = j + fence + len(marker)
        span = cands[0].span
        if span is not None:
            if span.kind != "drop":
                if self._spans is None:
                    self._spans = SpanReader(self, span)
                self._spans.span = span
                self._go(SPAN_OPENS)
            return after
        if self._items is None:  # the first block: its calls' reader (the call count and limit run from here)
            max_calls, id_factory, streaming = self._call_options
            self._items = ItemCalls(self, CallFactory(self._schemas, max_calls, id_factory), streaming)
        self._block = Block(text[j : j + fence], text[j:after])
        self._block.name = tool_name
        self._cands = cands
        self._go(BLOCK_OPENS)
        return after

    def _go(self, move: Move) -> None:
        """The one place the state changes: by the table's move (``states.step``). A block opening remembers the
        state it opens in; a span ending is back in prose."""
        mode = self._mode
        if move == BLOCK_OPENS:
            self._resume = mode
        elif move == SPAN_ENDS:
            self._resume = _TEXT
        self._mode = step(mode, move, self._resume)

    # ------------------------------------------------------------------ HEAD: which dialect owns the block?

    def _scan_head(self, text: str, pos: int, final: bool) -> int:
        waiting: list[Candidate] = []  # candidates that need more text, in order (one that failed never revives)
        for cand in self._cands:
            assert cand.opener is not None  # a span's marker never opens a block (_begin)
            r = match_head(cand.opener, text, pos, final, self._table)
            if r is PARTIAL:  # (identity: r may be a HeadMatch, whose dataclass __eq__ costs a call)
                waiting.append(cand)
            elif isinstance(r, HeadMatch):
                if not waiting:
                    return self._open_body(text, pos, cand, r)
                waiting.append(cand)  # an earlier candidate may still take the block: this one waits behind it
                break
        if not waiting:
            return self._abort_head(pos)
        self._cands = waiting
        return pos

    def _abort_head(self, resume: int = 0) -> int:
        """No dialect wants it: the marker is text, and scanning resumes right after it."""
        b = self._block
        assert b is not None
        self._block = None
        self._go(NO_HEAD)
        self._text(b.head)
        return resume

    def _open_body(self, text: str, pos: int, cand: Candidate, head: HeadMatch) -> int:
        b = self._block
        d, op = cand.dialect, cand.opener
        assert b is not None and d is not None and op is not None
        b.dialect, b.opener = d, op
        b.name = head.name or b.name
        b.head += text[pos : head.end]
        kept = b.head[len(b.head) - op.keep :] if op.keep else ""
        b.head = b.head[: len(b.head) - len(kept)]
        b.size = len(b.head)
        ends = op.end if op.end is not None else d.end
        if b.name:
            ends = tuple(e.replace("{name}", b.name) for e in ends)
        items = self._items
        assert items is not None  # (made as the block opened)
        if items.streaming:
            b.watch = items.watch_item
        if d.body == TAGGED:
            b.scanner = (TagBody if d.values is None else ValueTagBody)(b, ends, d.item, d.nest, not ends, d.values, d.strings)
        else:
            b.scanner = BracketBody(b, ends, bool(b.fence), d.separators, d.several or bool(b.fence), d.body == PYTHON,
                                    op.line_start)
        self._go(HEAD_READ)
        if kept:
            b.scanner.scan(kept, 0, len(kept), False)
        return head.end

    # ------------------------------------------------------------------ BODY

    def _read_body(self, text: str, pos: int, final: bool) -> int:
        """BODY's reader: the body, up to the reasoning's closer when the block sits inside reasoning."""
        if self._resume == _SPAN:
            return self._spans.scan_body(text, pos, final)  # type: ignore[union-attr]  # (a span opened it)
        return self._scan_body(text, pos, final)

    def _scan_span(self, text: str, pos: int, final: bool) -> int:  # SPAN's reader (spans.py)
        return self._spans.scan(text, pos, final)  # type: ignore[union-attr]  # (SPAN has its reader)

    def _scan_after(self, text: str, pos: int, final: bool) -> int:  # AFTER's reader (after.py)
        return self._after.scan(text, pos, final)  # type: ignore[union-attr]  # (AFTER has its reader)

    def _scan_body(self, text: str, pos: int, final: bool) -> int:
        b = self._block
        items = self._items
        assert b is not None and b.scanner is not None and items is not None
        n = len(text)
        room = self._max_block - b.size - len(b.scanner.unread())  # (what the scanner holds is the block's too)
        end = n if n - pos <= room else pos + max(room, 0)
        new = b.scanner.scan(text, pos, end, final and end == n)
        if b.items:
            items.drain(b)
        if b.done:
            return self._end_block(b, new)
        if end < n or b.size + len(b.scanner.unread()) + (end - new) >= self._max_block:
            if items.lives and items.lives[-1].started:
                b.close_item()  # a call under way always ends as a call: cut here
                items.drain(b, True)
            if b.calls and not b.in_item:  # its calls are out and nothing is open: the block ends here
                if b.scanner.has_end:
                    self._event(Diagnostic("block_too_large", f"end marker not within {self._max_block} characters: "
                                           "it stays text", b.dialect.name))
                b.end("", b.scanner.unread())  # (a block end met in a value, held, is text too)
                b.scanner.pending = ""
                return self._end_block(b, new)
            self._block = None
            self._go(DROPPED)
            items.lives.clear()
            self._event(Diagnostic("block_too_large", f"block over {self._max_block} characters released as text",
                                   b.dialect.name))
            self._text(b.unemitted() + b.scanner.unread() + text[new:end])
            return end
        return new

    def _end_block(self, b: Block, resume: int = 0) -> int:
        d = b.dialect
        self._items.lives.clear()  # type: ignore[union-attr]  # (made as the block opened)
        self._block = None
        closers = [c.lower() for c in d.closers] if not b.closer else []
        if b.fence and b.closer != "```":
            closers.append("```")
        if closers and b.calls:  # a block released as text leaves its optional closers as text too
            self._after = AfterReader(self, closers)
            self._go(CLOSERS_MAY_FOLLOW)
        else:
            self._go(BLOCK_ENDS)
        if not b.calls and b.closer and not b.failed and not b.raw()[len(b.head):].strip():
            # only markup: the opener, whitespace, the end marker (Kimi's empty tool section)
            self._event(Diagnostic("empty_block", "a call block with nothing in it: its markup is dropped", d.name))
        elif not b.calls:
            for diag, _ in b.failed:
                self._event(diag)
            if not b.failed:
                self._event(Diagnostic("incomplete" if not b.closer else "rejected",
                                       "block holds no complete call: kept as text", d.name))
            self._text(b.raw() + b.closer)
            self._output.line_blank = False
        else:
            rest = b.unemitted()
            if rest.strip(SEPARATORS):
                self._event(Diagnostic("rejected", "text in a call block that is not a call: kept as text", d.name))
                self._text(rest)
            self._output.line_blank = not rest.strip(SEPARATORS)  # after calls, the next call may follow on the line
        self._text(b.trailing)
        return resume


def parse(text: str, tools: Sequence[Mapping[str, Any]] | args_mod.ToolSchemas | None = None,
          **options: Any) -> ParseResult:
    """Parse a whole model output at once: one feed through the same machine, so the same result as streaming."""
    return ParseResult(StreamParser(tools, **options).read_whole(text))


_READERS: tuple[Callable[[StreamParser, str, int, bool], int], ...] = (
    StreamParser._scan_text, StreamParser._scan_span, StreamParser._scan_head, StreamParser._read_body,
    StreamParser._scan_after)  # each state's reader, by ``State`` (states.py: the moves)

register_parser(StreamParser)  # (core.parser_class: how template trial reading reaches the parser)
