"""The streaming core: text deltas in, events out. Pure, synchronous, no I/O.

How it stays linear: in prose, one compiled-regex search per delta finds the
few characters that can start markup (``<``, and where enabled a line-start
``{``, a line-start fence, ``[``); everything before such a character leaves at
once. Inside a block only the new characters are scanned (JSON bodies with a
string/depth tracker, XML bodies with one search for the end tag); the block's
pieces are joined and parsed once, when it closes. What is held back between
feeds is never more than the longest marker (or, inside a block, the block).

Whitespace rule (the one place where output depends on more than "verbatim"):
a block runs from its first marker character (or its opening markdown fence)
to its last closing marker (or closing fence); whitespace *between* a call's
body and its optional closers (``</tool_call>``, closing fence, ``>``) belongs
to the block. All text outside blocks is emitted verbatim, whitespace included.
"""

from __future__ import annotations

import bisect
import json
import re
import uuid
from typing import Any, Callable, Iterable, Mapping, Sequence

from . import arguments as args_mod
from .arguments import ArgumentError
from .dialects import CALLS, DIALECTS, XML, Dialect, calls_from_value, decode_json_block, decode_qwen3_function
from .events import Diagnostic, Event, ReasoningDelta, TextDelta, ToolCall

__all__ = ["StreamParser", "ParseResult", "parse"]

# Parser modes.
_TEXT, _THINK, _BODY_START, _JSON, _XML, _AFTER = range(6)

_PARTIAL = object()  # "could still become a marker: wait for more text"

_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"
_TOOL_CALL_OPEN = "<tool_call>"
_TOOL_CALL_CLOSE = "</tool_call>"
_FUNC_EQ = "<function="
_FUNC_CLOSE = "</function>"
_FENCE = "```"
_MISTRAL_OPEN = "[tool_calls]"

_WS = re.compile(r"\s*")
_NON_WS = re.compile(r"\S")
_STRUCT = re.compile(r"[\"'{}\[\]<`]")
_IN_DQ = re.compile(r'["\\]')
_IN_SQ = re.compile(r"['\\]")
_FENCE_HEAD = re.compile(r"```[\w+.\-]*[ \t]*\r?\n\s*")
_FENCE_HEAD_PREFIX = re.compile(r"`{1,3}(?:(?<=```)[\w+.\-]*[ \t]*\r?)?")
_FENCE_HEAD_MAX = 64
_XML_END = re.compile(r"</function>|</tool_call>", re.I)
_MISTRAL_NAME = re.compile(r"([A-Za-z_][\w.\-]*)\[ARGS\]")
_MISTRAL_NAME_PREFIX = re.compile(r"[A-Za-z_][\w.\-]*(?:\[(?:A(?:R(?:G(?:S)?)?)?)?)?")


class _Block:
    """A block being read: its markers, its body pieces and the JSON scan state."""

    __slots__ = (
        "dialect", "kind", "opener", "fence", "tag_name", "end_tags", "raw_prefix", "parts",
        "starts", "size", "depth", "quote", "esc", "after_inner", "value_end", "elem_start", "emitted", "last_end", "wrapped",
    )

    def __init__(self, kind: str, opener: str, fence: str, tag_name: str | None, end_tags: tuple[str, ...]):
        self.kind = kind  # marker kind: "tool_call", "tools", "function", "angle", "name", "bare", "mistral", "function="
        self.dialect: Dialect | None = None
        self.opener = opener  # the block's own opening marker, as written
        self.fence = fence  # the markdown fence line(s) before it, if any
        self.tag_name = tag_name
        self.end_tags = end_tags  # lowercase closing tags recognised outside JSON strings
        self.raw_prefix = fence + opener  # grows with whitespace before the body
        self.parts: list[str] = []
        self.starts: list[int] = []
        self.size = 0
        self.depth = 0
        self.quote = ""  # the open string's quote character, if inside one
        self.esc = False  # inside a string, the previous piece ended with a lone backslash
        self.after_inner = False  # bare block: an inner value just closed at depth 1
        self.value_end = -1  # body offset just after the balanced JSON value
        self.elem_start = -1  # body offset of the array element being read
        self.emitted = 0  # calls already emitted from this block (arrays)
        self.last_end = 0  # body offset after the last emitted element
        self.wrapped = False  # a Qwen3 function inside <tool_call>

    def add(self, piece: str) -> None:
        if piece:
            self.starts.append(self.size)
            self.parts.append(piece)
            self.size += len(piece)

    def body(self, start: int = 0, end: int | None = None) -> str:
        if end is None:
            end = self.size
        if start == 0 and end == self.size:
            return "".join(self.parts)
        i = max(bisect.bisect_right(self.starts, start) - 1, 0)
        text = "".join(self.parts[i:])
        offset = self.starts[i] if self.starts else 0
        return text[start - offset : end - offset]

    def raw(self) -> str:
        return self.raw_prefix + "".join(self.parts)


class ParseResult:
    """Result of :func:`parse`: the remaining text and the calls, in order."""

    __slots__ = ("content", "tool_calls", "reasoning", "diagnostics")

    def __init__(self, events: Iterable[Event]):
        text: list[str] = []
        reasoning: list[str] = []
        self.tool_calls: list[ToolCall] = []
        self.diagnostics: list[Diagnostic] = []
        for ev in events:
            if isinstance(ev, TextDelta):
                text.append(ev.text)
            elif isinstance(ev, ReasoningDelta):
                reasoning.append(ev.text)
            elif isinstance(ev, ToolCall):
                self.tool_calls.append(ev)
            else:
                self.diagnostics.append(ev)
        self.content: str = "".join(text)
        self.reasoning: str = "".join(reasoning)

    def __repr__(self) -> str:
        return f"ParseResult(content={self.content!r}, tool_calls={self.tool_calls!r})"


def _new_call_id() -> str:
    return "call_" + uuid.uuid4().hex[:24]


class StreamParser:
    """Incremental tool-call parser.

    ``feed(delta)`` returns the events the delta completes; ``close()`` ends the
    stream. ``tools`` (OpenAI tool dicts) gate the forms that look like prose
    (name tags, bare JSON) and type Qwen3-XML values; ``dialects`` restricts
    detection to the named dialects (default: all of ``DIALECTS``).
    """

    def __init__(
        self,
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        dialects: Iterable[str] | None = None,
        max_block_chars: int = 1 << 20,
        max_calls: int = 1000,
        start_in_reasoning: bool = False,
        id_factory: Callable[[], str] = _new_call_id,
    ) -> None:
        self._schemas = args_mod.tool_schemas(tools) or None  # [] means no tools, like None
        names = list(dialects) if dialects is not None else list(DIALECTS)
        unknown = [n for n in names if n not in DIALECTS]
        if unknown:
            raise ValueError(f"unknown dialect(s) {unknown}; known: {sorted(DIALECTS)}")
        self._enabled = {n: DIALECTS[n] for n in names}
        self._max_block = max_block_chars
        self._max_calls = max_calls
        self._new_id = id_factory
        self._tool_names = {n.lower(): n for n in self._schemas} if self._schemas else {}
        self._build_markers()

        self._mode = _THINK if start_in_reasoning else _TEXT
        self._held = ""
        self._block: _Block | None = None
        self._closers: list[str] = []  # _AFTER: optional closers still allowed
        self._after_fence = ""  # _AFTER: the fence of the block just closed
        self._line_blank = True  # only whitespace since the last newline (or stream start)
        self._calls = 0
        self._closed = False
        self._acc: list[str] = []
        self._acc_cls: type = TextDelta
        self._out: list[Event] = []

    # ------------------------------------------------------------------ setup

    def _build_markers(self) -> None:
        on = self._enabled
        markers: dict[str, str] = {_THINK_OPEN: "think"}
        if "qwen3_xml" in on or "tool_call_json" in on:
            markers[_TOOL_CALL_OPEN] = "tool_call"
        if "qwen3_xml" in on:
            markers[_FUNC_EQ] = "function="
        if "tools_array" in on:
            markers["<tools>"] = "tools"
        if "function_tag" in on:
            markers["<function>"] = "function"
        if "angle_json" in on:
            markers["<{"] = "angle"
        if "mistral" in on or "mistral_v11" in on:
            markers[_MISTRAL_OPEN] = "mistral"
        if "name_tag" in on:
            for low in self._tool_names:
                markers.setdefault(f"<{low}>", "name")
        self._markers = markers
        self._marker_re = re.compile("|".join(re.escape(m) for m in sorted(markers, key=len, reverse=True)), re.I)
        self._max_marker = max(len(m) for m in markers)
        self._bare = bool(self._tool_names) and ("bare_json" in on or "tool_calls_json" in on)
        trigger = "<`"
        if "mistral" in on or "mistral_v11" in on:
            trigger += r"\["
        if self._bare:
            trigger += "{"
        self._trigger_search = re.compile(f"[{trigger}]").search

    # ------------------------------------------------------------------ public API

    def feed(self, delta: str) -> list[Event]:
        """Consume one text delta; return the events it completes (maybe none)."""
        mode = self._mode
        if not self._held and not self._closed:
            # Fast paths for the two common cases: prose with no markup character,
            # and the inside of a long argument with no character that could end it.
            if mode == _TEXT:
                if not self._trigger_search(delta):
                    if not delta:
                        return []
                    if self._line_blank or "\n" in delta:
                        self._track_line(delta)
                    return [TextDelta(delta)]
            elif mode == _XML or mode == _JSON:
                b: _Block = self._block  # type: ignore[assignment]  # always set in these modes
                if b.size + len(delta) <= self._max_block:
                    if mode == _XML:
                        fast = "<" not in delta
                    elif b.quote == '"':
                        end = _string_end(delta, 1 if b.esc else 0)
                        fast = end < 0
                        if fast:
                            b.esc = end == _ESCAPE_PENDING
                    else:
                        fast = False
                    if fast:  # _Block.add, inlined: this is the per-delta cost inside long arguments
                        b.starts.append(b.size)
                        b.parts.append(delta)
                        b.size += len(delta)
                        return []
        if self._closed:
            raise RuntimeError("feed() after close()")
        if not isinstance(delta, str):
            raise TypeError(f"delta must be str, not {type(delta).__name__}")
        return self._run(self._held + delta, final=False)

    def close(self) -> list[Event]:
        """End of stream: flush held text, finish or release any open block."""
        if self._closed:
            return []
        events = self._run(self._held, final=True)
        self._closed = True
        return events

    @property
    def held_text(self) -> str:
        """Characters received but not yet emitted, outside a block (a possible marker)."""
        return self._held if self._mode in (_TEXT, _THINK, _AFTER) else ""

    # ------------------------------------------------------------------ driver

    def _run(self, text: str, final: bool) -> list[Event]:
        self._out = []
        self._held = ""
        pos = 0
        n = len(text)
        while pos < n:
            mode = self._mode
            if mode == _TEXT:
                new = self._scan_text(text, pos, final)
            elif mode == _JSON:
                new = self._scan_json(text, pos, final)
            elif mode == _XML:
                new = self._scan_xml(text, pos, final)
            elif mode == _THINK:
                new = self._scan_think(text, pos, final)
            elif mode == _BODY_START:
                new = self._scan_body_start(text, pos, final)
            else:
                new = self._scan_after(text, pos, final)
            if new == pos and self._mode == mode:
                break  # this mode needs more text
            pos = new
        if final:
            self._finish(text[pos:])
            pos = n
        self._held = text[pos:]
        self._flush()
        return self._out

    # ------------------------------------------------------------------ output helpers

    def _track_line(self, s: str) -> None:
        nl = s.rfind("\n")
        if nl >= 0:
            self._line_blank = nl == len(s) - 1 or s[nl + 1 :].isspace()
        elif self._line_blank and not s.isspace():
            self._line_blank = False

    def _text(self, s: str) -> None:
        if s:
            self._delta(TextDelta, s)
            self._track_line(s)

    def _reasoning(self, s: str) -> None:
        if s:
            self._delta(ReasoningDelta, s)

    def _delta(self, cls: type, s: str) -> None:
        """Adjacent deltas of one kind leave a feed() as one event."""
        if self._acc and self._acc_cls is not cls:
            self._out.append(self._acc_cls("".join(self._acc)))
            self._acc = []
        self._acc_cls = cls
        self._acc.append(s)

    def _event(self, ev: Event) -> None:
        self._flush()
        self._out.append(ev)

    def _flush(self) -> None:
        if self._acc:
            self._out.append(self._acc_cls("".join(self._acc)))
            self._acc = []

    # ------------------------------------------------------------------ TEXT

    def _scan_text(self, text: str, pos: int, final: bool) -> int:
        search = self._trigger_search
        i = pos
        while True:
            m = search(text, i)
            if m is None:
                self._text(text[pos:])
                return len(text)
            j = m.start()
            self._text(text[pos:j])
            pos = j
            found = self._match_start(text, j, final)
            if found is None:
                i = j + 1
            elif found is _PARTIAL:
                return j  # hold from j
            else:
                return self._begin(text, j, found)

    def _match_start(self, text: str, i: int, final: bool) -> Any:
        """What starts at ``text[i]``: ``(kind, opener_len, fence_len, tag_name)``, _PARTIAL or None."""
        ch = text[i]
        if ch == "`":
            return self._match_fence(text, i, final) if self._line_blank else None
        if ch == "{":
            return self._match_bare(text, i, final, 0) if self._line_blank else None
        return self._match_marker(text, i, final, 0)

    def _match_marker(self, text: str, i: int, final: bool, fence_len: int) -> Any:
        m = self._marker_re.match(text, i)
        if m is not None:
            low = m.group().lower()
            kind = self._markers[low]
            if kind == "name":
                return ("name", len(low), fence_len, self._tool_names[low[1:-1]])
            if kind == "think" and fence_len:
                return None
            # "<{" and "<function=" keep their last characters in the body.
            opener_len = 1 if kind == "angle" else 0 if kind == "function=" else len(low)
            return (kind, opener_len, fence_len, None)
        tail = text[i : i + self._max_marker].lower()
        if not final and i + len(tail) == len(text) and any(mk.startswith(tail) for mk in self._markers):
            return _PARTIAL
        return None

    def _match_fence(self, text: str, i: int, final: bool) -> Any:
        """A line-start fence opens a block only when a call marker follows it."""
        m = _FENCE_HEAD.match(text, i)
        if m is None or m.end() - i > _FENCE_HEAD_MAX:
            p = _FENCE_HEAD_PREFIX.match(text, i)
            if not final and p is not None and p.end() == len(text) and len(text) - i <= _FENCE_HEAD_MAX:
                return _PARTIAL
            return None
        j = m.end()
        if j >= len(text):
            return None if final or j - i > _FENCE_HEAD_MAX else _PARTIAL
        if text[j] == "{":
            return self._match_bare(text, j, final, j - i)
        return self._match_marker(text, j, final, j - i)

    def _match_bare(self, text: str, i: int, final: bool, fence_len: int) -> Any:
        """A line-start ``{``: is it ``{"name": "<known tool>"`` or ``{"tool_calls": [``?

        Decided on the first key (and the name's value), so JSON in prose is released quickly.
        """
        if not self._bare:
            return None
        more = None if final else _PARTIAL
        names = self._schemas or {}
        n = len(text)
        limit = i + 64 + max((len(t) for t in names), default=0)
        k = _skip_ws(text, i + 1)
        if k >= n:
            return more if n < limit else None
        if text[k] != '"':
            return None
        end = text.find('"', k + 1)
        on = self._enabled
        if end < 0:
            key = text[k + 1 :]
            ok = ("name".startswith(key) and "bare_json" in on) or ("tool_calls".startswith(key) and "tool_calls_json" in on)
            return more if ok and n < limit else None
        key = text[k + 1 : end]
        if key == "tool_calls" and "tool_calls_json" in on:
            want = "["
        elif key == "name" and "bare_json" in on:
            want = '"'
        else:
            return None
        k = _skip_ws(text, end + 1)
        if k < n and text[k] == ":":
            k = _skip_ws(text, k + 1)
            if k < n and text[k] != want:
                return None
        elif k < n:
            return None
        if k >= n:
            return more if n < limit else None
        if want == "[":
            return ("tool_calls", 0, fence_len, None)
        end = text.find('"', k + 1)
        if end < 0:
            partial = text[k + 1 :]
            return more if n < limit and any(t.startswith(partial) for t in names) else None
        return ("bare", 0, fence_len, None) if text[k + 1 : end] in names else None

    # ------------------------------------------------------------------ blocks: entry

    def _begin(self, text: str, i: int, found: tuple[Any, ...]) -> int:
        kind, opener_len, fence_len, tag_name = found
        if kind == "think":
            self._mode = _THINK
            return i + opener_len
        fence = text[i : i + fence_len]
        start = i + fence_len
        self._block = _Block(kind, text[start : start + opener_len], fence, tag_name, _END_TAGS.get(kind, ()))
        if kind == "name":
            self._block.end_tags = (_FUNC_CLOSE, f"</{tag_name.lower()}>")
        self._mode = _BODY_START
        return start + opener_len

    def _scan_body_start(self, text: str, pos: int, final: bool) -> int:
        """Between an opening marker and its body: decide the body kind, or give up early."""
        b = self._block
        assert b is not None
        k = _skip_ws(text, pos)
        if k >= len(text):
            return self._abort(pos) if final else pos
        on = self._enabled
        ch = text[k]
        dialect: Dialect | None = None
        if b.kind in ("tool_call", "function="):
            head = text[k : k + len(_FUNC_EQ)].lower()
            if "qwen3_xml" in on and head == _FUNC_EQ:
                dialect = DIALECTS["qwen3_xml"]
                b.wrapped = b.kind == "tool_call"
            elif "qwen3_xml" in on and not final and k + len(head) == len(text) and _FUNC_EQ.startswith(head):
                return pos  # wait for more
            elif b.kind == "tool_call" and ch in "{[" and "tool_call_json" in on:
                dialect = DIALECTS["tool_call_json"]
        elif b.kind == "mistral" and ch not in "{[":
            # Newer Mistral: [TOOL_CALLS]NAME[ARGS]{...}
            m = _MISTRAL_NAME.match(text, k)
            if m is None:
                if not final and _MISTRAL_NAME_PREFIX.fullmatch(text, k) and len(text) - k < 128:
                    return pos  # wait for more
                return self._abort(pos)
            if "mistral_v11" not in on or not self._known(m.group(1)):
                return self._abort(pos)
            b.opener += text[pos : m.end()]
            b.raw_prefix += text[pos : m.end()]
            b.tag_name = m.group(1)
            b.dialect = DIALECTS["mistral_v11"]
            self._mode = _JSON
            return m.end()
        else:
            candidate = DIALECTS[_KIND_DIALECT[b.kind]]
            if (ch == "{" or (ch == "[" and candidate.shape == CALLS)) and candidate.name in on:
                dialect = candidate
        if dialect is None:
            return self._abort(pos)
        b.raw_prefix += text[pos:k]
        b.dialect = dialect
        self._mode = _XML if dialect.shape == XML else _JSON
        return k

    def _abort(self, resume: int) -> int:
        """Early give-up: the opener is text, and scanning resumes right after it."""
        b = self._block
        assert b is not None
        self._block = None
        self._mode = _TEXT
        self._text(b.raw_prefix)
        return resume

    # ------------------------------------------------------------------ blocks: JSON bodies

    def _scan_json(self, text: str, pos: int, final: bool) -> int:
        """Track strings and depth over the new characters only; stop at the block's end."""
        b = self._block
        assert b is not None and b.dialect is not None
        n = len(text)
        i = pos
        elements = b.dialect.shape == CALLS
        tagged = bool(b.end_tags)
        while i < n:
            if b.quote:
                j = _string_end(text, i + 1 if b.esc else i, _IN_DQ if b.quote == '"' else _IN_SQ)
                b.esc = j == _ESCAPE_PENDING
                if j < 0:
                    i = n
                    break
                b.quote = ""
                i = j + 1
                continue
            if b.value_end >= 0 or b.after_inner:
                m = _NON_WS.search(text, i)
                if m is None:
                    i = n
                    break
                j = m.start()
                ch = text[j]
                if b.value_end >= 0:
                    # The value is complete: whitespace, stray closers or the end tag may follow.
                    if ch == "}" or ch == "]":
                        i = j + 1
                        continue
                    b.add(text[pos:j])
                    if ch == "<" or ch == "`":
                        r = self._match_closer(text, j, final)
                        if r is _PARTIAL:
                            return j
                        if r is not None:
                            return self._complete(text[j:r], r)
                    return self._complete("", j)  # the end tag is missing: the value ends the block
                # Bare block, depth 1, right after a value: only "," or a closer may follow.
                # Anything else means the model left out the final brace: the block ends here.
                b.after_inner = False
                if ch == ",":
                    i = j + 1
                    continue
                if ch not in "}]`":
                    b.add(text[pos:j])
                    return self._complete("", j)
                i = j
            m = _STRUCT.search(text, i)
            if m is None:
                i = n
                break
            j = m.start()
            ch = text[j]
            i = j + 1
            if ch == '"' or ch == "'":
                b.quote = ch
            elif ch == "{" or ch == "[":
                b.depth += 1
                if elements and b.depth == 2 and ch == "{":
                    b.elem_start = b.size + (j - pos)
            elif ch == "}" or ch == "]":
                b.depth -= 1
                if elements and b.depth == 1 and b.elem_start >= 0:
                    b.add(text[pos:i])
                    pos = i
                    self._emit_element(b)
                if b.depth <= 0:
                    b.add(text[pos:i])
                    pos = i
                    b.value_end = b.size
                    if not tagged:
                        return self._complete("", i)
                elif b.depth == 1 and b.kind in _BRACE_MAY_BE_MISSING:
                    b.after_inner = True
            elif (ch == "<" and tagged) or (ch == "`" and b.fence):
                r = self._match_closer(text, j, final)
                if r is _PARTIAL:
                    b.add(text[pos:j])
                    return self._check_size(j)
                if r is not None:
                    b.add(text[pos:j])
                    return self._complete(text[j:r], r)
        b.add(text[pos:i])
        return self._check_size(i)

    def _match_closer(self, text: str, j: int, final: bool) -> Any:
        """At ``text[j]`` in a JSON block: the end of its end tag or closing fence, _PARTIAL or None."""
        b = self._block
        assert b is not None
        candidates = b.end_tags + ((_FENCE,) if b.fence else ())
        if not candidates:
            return None
        seg = text[j : j + max(len(c) for c in candidates)].lower()
        for c in candidates:
            if seg.startswith(c):
                return j + len(c)
        if not final and j + len(seg) == len(text) and any(c.startswith(seg) for c in candidates):
            return _PARTIAL
        return None

    def _check_size(self, resume: int) -> int:
        b = self._block
        if b is not None and b.size > self._max_block:
            self._block = None
            self._mode = _TEXT
            self._reject(b, "block_too_large", f"block over {self._max_block} characters released as text")
        return resume

    # ------------------------------------------------------------------ blocks: Qwen3 XML bodies

    def _scan_xml(self, text: str, pos: int, final: bool) -> int:
        b = self._block
        assert b is not None
        m = _XML_END.search(text, pos)
        if m is None:
            hold = len(text) if final else _partial_tail(text, pos, _XML_ENDS)
            b.add(text[pos:hold])
            return self._check_size(hold)
        b.add(text[pos : m.start()])
        return self._complete(m.group(), m.end())

    # ------------------------------------------------------------------ reasoning

    def _scan_think(self, text: str, pos: int, final: bool) -> int:
        m = _THINK_END.search(text, pos)
        if m is not None:
            self._reasoning(text[pos : m.start()])
            self._mode = _TEXT
            self._line_blank = False
            return m.end()
        hold = len(text) if final else _partial_tail(text, pos, (_THINK_CLOSE,))
        self._reasoning(text[pos:hold])
        return hold

    # ------------------------------------------------------------------ after a call

    def _scan_after(self, text: str, pos: int, final: bool) -> int:
        """Optional closers after a call (``</tool_call>``, fence, ``>``); the whitespace before them is the block's."""
        k = _skip_ws(text, pos)
        if k >= len(text):
            if not final:
                return pos  # hold the whitespace until we know
            return self._end_after(text, pos, k)
        seg = text[k : k + 16].lower()
        at_end = not final and k + len(seg) == len(text)
        for idx, closer in enumerate(self._closers):
            if seg.startswith(closer):
                self._closers = self._closers[idx + 1 :]
                if not self._closers:
                    self._mode = _TEXT
                return k + len(closer)
            if at_end and closer.startswith(seg):
                return pos
        if self._closers and self._closers[0] == _TOOL_CALL_CLOSE:
            # Several <function=…> in one <tool_call>: read the next one.
            if seg.startswith(_FUNC_EQ):
                b = _Block("function=", "", "", None, ())
                b.dialect, b.wrapped, b.raw_prefix = DIALECTS["qwen3_xml"], True, text[pos:k]
                b.fence = self._after_fence
                self._block, self._mode = b, _XML
                return k
            if at_end and _FUNC_EQ.startswith(seg):
                return pos
        return self._end_after(text, pos, k)

    def _end_after(self, text: str, pos: int, k: int) -> int:
        self._mode = _TEXT
        self._closers = []
        self._text(text[pos:k])
        return k

    # ------------------------------------------------------------------ completing blocks

    def _complete(self, closer: str, resume: int) -> int:
        """The current block's body is complete (``closer`` is its end marker as written,
        possibly empty): decode it, emit its calls, and expect its optional closers.
        A block that holds no valid call is released as text, verbatim."""
        b = self._block
        assert b is not None and b.dialect is not None
        self._block = None
        self._mode = _TEXT
        trailing_ws = ""
        if not closer:
            # No closing marker: whitespace after the body is not the block's.
            rest = b.body(max(b.value_end, 0))
            trailing_ws = rest[len(rest.rstrip()) :]
        if b.emitted:
            self._finish_elements(b)
        else:
            calls = self._decode(b, closer)
            if calls is None:
                self._text(closer)
                return resume
            for name, arguments in calls:
                self._emit_call(b.dialect, name, arguments)
        self._line_blank = False
        self._text(trailing_ws)
        closers: list[str] = []
        if b.dialect.shape == XML and b.wrapped and closer.lower() != _TOOL_CALL_CLOSE:
            closers.append(_TOOL_CALL_CLOSE)
        elif b.kind == "angle":
            closers.append(">")
        if b.fence and closer != _FENCE:
            closers.append(_FENCE)
        if closers:
            self._closers = closers
            self._after_fence = b.fence
            self._mode = _AFTER
        return resume

    def _decode(self, b: _Block, closer: str) -> list[tuple[str, dict[str, Any]]] | None:
        """Decode a whole block into checked calls, or release it (returns None)."""
        dialect = b.dialect
        assert dialect is not None
        if self._calls >= self._max_calls:
            self._reject(b, "too_many_calls", f"more than {self._max_calls} calls in one stream")
            return None
        try:
            if dialect.shape == XML:
                # The closer is not in the body; a missing </function> (ended by </tool_call>) is implied.
                name, raw_values = decode_qwen3_function(b.body() + _FUNC_CLOSE)
                schema = (self._schemas or {}).get(name)
                props = (schema or {}).get("properties") or {}
                calls = [(name, {k: args_mod.coerce_xml_value(v, props.get(k)) for k, v in raw_values.items()})]
                repaired = False
            else:
                body = b.body(0, b.value_end) if b.value_end >= 0 else b.body()
                value, repaired = decode_json_block(dialect, body, b.opener, closer if closer != _FENCE else "")
                calls = calls_from_value(dialect, value, b.tag_name)
        except ArgumentError as exc:
            self._reject(b, "rejected", str(exc))
            return None
        unknown = [name for name, _ in calls if not self._known(name)]
        if unknown:
            self._reject(b, "unknown_tool", f"unknown tool name(s) {unknown}: block kept as text")
            return None
        if repaired:
            self._event(Diagnostic("repaired", f"{dialect.name}: block repaired before parsing", dialect.name))
        return calls

    def _known(self, name: str) -> bool:
        return self._schemas is None or name in self._schemas

    def _reject(self, b: _Block, code: str, message: str) -> None:
        """The block is not a call: say why, and give it back as text, verbatim."""
        self._event(Diagnostic(code, message, b.dialect.name if b.dialect else ""))
        self._text(b.raw())

    def _emit_call(self, dialect: Dialect, name: str, arguments: dict[str, Any]) -> None:
        schema = (self._schemas or {}).get(name)
        if schema:
            if dialect.shape != XML:
                arguments = args_mod.coerce_value(arguments, schema)
            missing = args_mod.missing_required(arguments, schema)
            if missing:
                self._event(Diagnostic("missing_required", f"{name}: missing required {missing}", dialect.name,
                                       {"name": name, "missing": missing}))
        index = self._calls
        self._calls += 1
        self._event(ToolCall(index, self._new_id(), name, json.dumps(arguments, ensure_ascii=False), dialect.name))

    # ------------------------------------------------------------------ arrays: one call per element

    def _emit_element(self, b: _Block) -> None:
        """An element of ``<tools>[…]`` / ``[TOOL_CALLS][…]`` just closed: emit it now."""
        element = b.body(b.elem_start, b.size)
        start, b.elem_start = b.elem_start, -1
        dialect = b.dialect
        assert dialect is not None
        try:
            value, repaired = args_mod.loads_relaxed(element)
            name, arguments = calls_from_value(DIALECTS["tool_call_json"], value)[0]
        except ArgumentError as exc:
            if not b.emitted:
                return  # nothing emitted yet: the whole block is decided at its end
            self._event(Diagnostic("rejected", str(exc), dialect.name))
            self._text(element)
            return
        if not self._known(name) or self._calls >= self._max_calls:
            if not b.emitted:
                return
            self._event(Diagnostic("unknown_tool" if not self._known(name) else "too_many_calls",
                                   f"array element {name!r} kept as text", dialect.name))
            self._text(element)
            return
        if not b.emitted and start > 0 and b.body(0, start).strip() not in ("[", ""):
            return  # junk before the first element: decide the whole block at its end
        if repaired:
            self._event(Diagnostic("repaired", f"{dialect.name}: element repaired before parsing", dialect.name))
        b.emitted += 1
        b.last_end = b.size
        self._emit_call(dialect, name, arguments)

    def _finish_elements(self, b: _Block) -> None:
        """An array block whose elements were emitted one by one: what is left must be only punctuation."""
        rest = b.body(b.last_end)
        if rest.strip(" \t\r\n,]"):
            self._event(Diagnostic("rejected", "text after the last array element kept as text", b.dialect.name if b.dialect else ""))
            self._text(rest)

    # ------------------------------------------------------------------ end of stream

    def _finish(self, rest: str) -> None:
        """close(): decide what is still open."""
        mode = self._mode
        b = self._block
        if mode == _THINK:
            self._reasoning(rest)
        elif mode in (_TEXT, _AFTER):
            self._text(rest)
        elif b is not None:
            b.add(rest)
            # Complete: the value closed, or only its outermost brace is missing
            # (the body then ends with an inner value's closer).
            body_end = b.body().rstrip()[-1:]
            complete = (b.dialect is not None and b.dialect.shape != XML and not b.quote
                        and (b.value_end >= 0 or (b.depth == 1 and body_end in ("}", "]"))))
            if mode == _JSON and complete:
                self._complete("", 0)
                if self._mode == _AFTER:
                    self._mode = _TEXT
            elif b.emitted:
                self._block = None
                self._finish_elements(b)
            else:
                self._block = None
                self._reject(b, "incomplete", "block still open at end of stream: kept as text")
        self._mode = _TEXT
        self._block = None


_STRING_OPEN = -1
_ESCAPE_PENDING = -2


def _skip_ws(text: str, pos: int) -> int:
    """Index of the first non-whitespace character at or after ``pos`` (or ``len(text)``)."""
    return _WS.match(text, pos).end()  # type: ignore[union-attr]  # r"\s*" always matches


def _string_end(text: str, start: int, pattern: re.Pattern[str] = _IN_DQ) -> int:
    """Inside a JSON string from ``start``: the index of its closing quote, or
    _STRING_OPEN (still open), or _ESCAPE_PENDING (open, and the last character is a lone backslash)."""
    search = pattern.search
    m = search(text, start)
    while m is not None:
        j = m.start()
        if text[j] != "\\":
            return j
        if j + 1 == len(text):
            return _ESCAPE_PENDING
        m = search(text, j + 2)
    return _STRING_OPEN


def _partial_tail(text: str, pos: int, markers: tuple[str, ...]) -> int:
    """Index from which ``text`` ends with a proper prefix of one of ``markers`` (else ``len(text)``)."""
    longest = max(len(m) for m in markers)
    k = text.rfind("<", max(pos, len(text) - longest + 1))
    if k >= 0:
        tail = text[k:].lower()
        if any(m.startswith(tail) for m in markers):
            return k
    return len(text)


_END_TAGS = {
    "tool_call": (_TOOL_CALL_CLOSE,),
    "tools": ("</tools>",),
    "function": (_FUNC_CLOSE,),
}
_KIND_DIALECT = {
    "tools": "tools_array", "function": "function_tag", "angle": "angle_json", "name": "name_tag",
    "bare": "bare_json", "tool_calls": "tool_calls_json", "mistral": "mistral",
}
_XML_ENDS = (_FUNC_CLOSE, _TOOL_CALL_CLOSE)
# Bare (untagged) blocks that small models often leave without their final brace.
_BRACE_MAY_BE_MISSING = frozenset({"bare", "tool_calls"})
_THINK_END = re.compile(re.escape(_THINK_CLOSE), re.I)


def parse(text: str, tools: Sequence[Mapping[str, Any]] | None = None, **options: Any) -> ParseResult:
    """Parse a whole model output at once (the same machine as streaming, so the same result)."""
    parser = StreamParser(tools, **options)
    return ParseResult(parser.feed(text) + parser.close())
