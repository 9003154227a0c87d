"""Re-emitting JSON as it arrives: the model's own text, repaired only where it must be.

Invariant: whatever has been emitted, followed by :meth:`JsonEcho.finish`, is one valid JSON value, for
every input and every chunking; each input character is read once (a long string costs one regex search
per chunk), and nothing recurses on nesting depth.

Repaired as it passes: single quotes, raw control characters, ``True``/``False``/``None``, bare words
(keys become strings; values numbers or strings, several words in a row one string, as written, unless a colon
shows the last was a key; a comment ends such a value, so it is always one piece of the text), a comma before a
closer, a missing comma or colon, a closer of the wrong kind; ``//`` and ``/* */`` comments outside strings are
left out (kept in ``removed``).
Nothing is invented: a member whose value was never written is left out (its key waits, unsent, until its
value begins), so is a member whose value turns out to be an arithmetic expression (a bare value is held
until what follows it shows it is complete; never evaluated; ``expressions`` names it), and a value deeper
than ``MAX_DEPTH`` is left out whole (``too_deep``), so ``json.loads`` reads whatever leaves. Values are typed as whole-call mode types them (``echo_schema``): a scalar whose
schema type differs, or whose schema has an enum, is held until complete and written typed (changes noted
in ``fixes``, array members named ``tags[]``); a string the schema wants as a string streams as it arrives.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Mapping

from ..arguments.schema import Note, declared_types
from .echo_comments import CommentEcho
from .echo_strings import StringEcho
from .echo_schema import COLON as _COLON, KEY as _KEY, NEXT as _NEXT, VALUE as _VALUE, Frame as _Frame, SchemaPosition
from .json_lexis import JSON_WS, TOKEN, WORD_END, scalar

__all__ = ["JsonEcho", "ARGUMENT_KEYS", "MAX_DEPTH"]

_OPERATORS = frozenset("*/%+-")  # after a complete value, one of these starts an arithmetic expression
# A bare word that is not a number or literal but holds an operator or a dotted name is an expression written
# without spaces (as whole-call mode reads it: refused, never evaluated), not a string.
_EXPRESSION_WORD = re.compile(r"[*/%+\-]|[A-Za-z_$]\.[A-Za-z_$]")

MAX_DEPTH = 400  # deeper values are left out of streamed arguments (json.loads recurses once per level)
ARGUMENT_KEYS = ("arguments", "parameters", "input", "args")  # as arguments.call_from_object reads them

class JsonEcho(StringEcho, CommentEcho, SchemaPosition):
    """One JSON value in, the same value out as valid JSON, in pieces through ``out``.

    ``route`` decides what leaves: ``"all"`` (the value is the arguments object) or ``"call"``
    (the value is a call object: only its arguments object leaves, and its ``name`` is
    reported through ``on_name``; ``on_open`` is told when the arguments object opens). ``schema`` types the arguments; it may be set later,
    until the arguments object opens.
    """

    def __init__(self, out: Callable[[str], None], *, route: str = "all", schema: Any = None,
                 on_name: Callable[[str], Any] | None = None, on_open: Callable[[], Any] | None = None):
        self._out = out
        self._on_open = on_open  # the arguments object has opened (its "{" was just written)
        self.schema = schema
        self._call = route == "call"
        self._on_name = on_name
        self._stack: list[_Frame] = []
        self._live = False  # tokens leave (inside the arguments object)
        self._live_depth = 0  # the stack depth of the arguments object
        self._quote = ""  # inside a string: its quote
        self._esc = ""  # inside a string: an escape cut by the chunk's end
        self._held: list[str] | None = None  # a string held until complete (a key, the name, a typed value)
        self._role = ""  # the string's role: "key", "value", "held", "name"
        self._word = ""  # a bare word, maybe cut by the chunk's end
        self._pending = ""  # a comma, a key and its colon (and whitespace) not yet known to be followed by a value
        self._mute = 0  # > 0: inside a value left out for its depth, opened at this stack depth
        self._mute_live = False  # whether tokens left before that value
        self.too_deep = False  # a value was left out for its depth
        self.done = False  # the top-level value is complete
        self.started = False  # the arguments object has opened
        self.streamable = True  # False: the arguments are not an object (the caller decodes the item whole)
        self._comment = ""  # outside strings: "/" (a slash, maybe a comment's start), "//", "/*", "/**" (a "*" read)
        self._comment_text: list[str] = []  # the comment being skipped, as written
        self.removed: list[str] = []  # the comments left out, as written
        self.fixes: list[Note] = []  # values typed or spelled by the schema: ("coerced", parameter path, details)
        self._scalar: str | None = None  # a bare value written, held until what follows shows it is not an operand
        self._scalar_filled = False  # its frame's ``filled`` before it
        self._bare: list[str] | None = None  # the held value is bare words read as a string: its words and spaces
        self._bare_fixes = 0  # len(fixes) before it was typed (typed again as words join it)
        self._in_expression = False  # skipping the rest of an arithmetic expression (left out, never evaluated)
        self.expressions: list[str] = []  # the parameter paths (``end``, ``opts.scale``) whose value was an expression, left out

    # ------------------------------------------------------------------ input

    def feed(self, text: str) -> None:
        i, n = 0, len(text)
        while i < n and not self.done:
            if self._comment:
                i = self._skip_comment(text, i, n)
            elif self._quote:
                i = self._string(text, i, n)
            elif self._word:
                m = WORD_END.search(text, i)
                j = m.start() if m else n
                self._word += text[i:j]
                i = j
                if m is not None:
                    if text[j] == "/":
                        self._comment, i = "/", j + 1  # the word waits: a comment, or its own "/"
                    else:
                        self._end_word()
            else:
                m = TOKEN.match(text, i)
                assert m is not None
                i = m.end()
                self._token(m.group(), i == n or text[i] == "/")  # a word before a "/" may go on past it

    def finish(self, cut: bool = False) -> None:
        """The input ended: complete whatever is open, so that everything emitted is valid JSON. A string
        value is closed where it stopped. ``cut`` (by the end of the stream or a size limit, not by an end
        marker): a number, word or typed value still open may be only the start of what the model meant
        (``12`` of ``12345``), so it is left out, as if never written."""
        self._end_comment()
        if cut and self._quote and self._role == "held":
            self._quote, self._held, self._role = "", None, ""
        elif self._quote:
            if self._esc:
                esc, self._esc = self._esc, ""
                self._put_escape(esc) if len(esc) > 1 else self._str("\\\\")
            self._end_string()
        if self._word and cut:
            self._word = ""
            if self._bare is not None:  # "New York" cut at "New Yo": the value may be longer still, left out
                self._drop_held()
        elif self._word:
            self._end_word()
        self._in_expression = False
        self._release()
        while self._stack and not self.done:
            self._close()

    # ------------------------------------------------------------------ strings

    def _begin_string(self, quote: str) -> None:
        self._quote = quote
        if self._prepare(False) == "key":
            self._role, self._held = "key", []
            return
        f = self._stack[-1] if self._stack else None
        if f is not None and self._call and len(self._stack) == 1:
            if f.key == "name":
                self._role, self._held = "name", []
                return
            if f.key in ARGUMENT_KEYS and not self.started:
                self.streamable = False  # arguments written as a string: decoded whole
        schema = self._schema_here()
        types = declared_types(schema)
        if types and "string" not in types or isinstance(schema, Mapping) and "enum" in schema:
            self._role, self._held = "held", []
        else:
            self._role = "value"
            self._emit('"')

    def _end_string(self) -> None:
        self._quote = ""
        role, held, self._held = self._role, self._held, None
        if role == "value":
            self._emit('"')
            self._value_end()
            return
        try:
            content = json.loads('"' + "".join(held or ()) + '"')
        except ValueError:  # a lone surrogate escape: keep the text as written
            content = "".join(held or ())
        if role == "key":
            f = self._stack[-1]
            f.key, f.state = content, _COLON
            self._pending += '"' + "".join(held or ()) + '"'  # as written (normalised in passing), once a value follows
        elif role == "name":
            if self._on_name is not None:
                self._on_name(content)
            self._value_end()
        else:
            self._emit(json.dumps(self._typed(content), ensure_ascii=False))
            self._value_end()

    # ------------------------------------------------------------------ structure (see the table in _prepare)

    def _token(self, tok: str, at_end: bool) -> None:
        ch = tok[0]
        if self._scalar is not None or self._in_expression:
            if tok.isspace():  # after a held value it waits with it; inside an expression it goes with it
                if self._scalar is not None:
                    self._scalar += tok if all(c in JSON_WS for c in tok) else " "
                if self._bare is not None:
                    self._bare.append(tok)
                return
            if ch == ":" and self._bare is not None and sum(not w.isspace() for w in self._bare) > 1:
                self._key_after_words()
            if ch in "{}[]:,\"'":  # structure or a string: the value is complete, an expression over
                self._in_expression = False
                self._release()
        f = self._stack[-1] if self._stack else None
        if ch in "{[":
            self._open(ch)
        elif ch in "}]":
            if f is not None:
                self._close()
        elif ch == '"' or ch == "'":
            self._begin_string(ch)
        elif ch == "/":
            self._comment = "/"
        elif ch == ":":
            if f is not None and f.state == _COLON:
                f.state = _VALUE
                self._pending += ":"
        elif ch == ",":
            if f is not None:
                self._owe_value(f)
                if f.state == _NEXT:
                    f.state = _KEY if f.kind == "{" else _VALUE
                    self._pending = ","
        elif tok.isspace():
            if f is not None:
                ws = tok if all(c in JSON_WS for c in tok) else " "
                if self._pending:
                    self._pending += ws
                else:
                    self._emit(ws)
        else:
            self._word = tok
            if not at_end:
                self._end_word()

    def _prepare(self, opener: bool) -> str:
        """A string, word or opener is next: write what its position owes first, and say whether it is a key.

        object KEY: a string/word is the key (an opener gets ``"":``); COLON: ``:`` is owed;
        NEXT: ``,`` is owed (then as KEY). array NEXT: ``,`` is owed. What is owed waits in ``_pending``
        until the value's first output, so a value left out (an expression, one too deep) takes it along.
        """
        f = self._stack[-1] if self._stack else None
        if f is None:
            return "value"
        if f.state == _NEXT:
            self._pending = ","  # a missing comma, written once something follows
            f.state = _KEY if f.kind == "{" else _VALUE
        if f.kind == "{":
            if f.state == _KEY:
                if not opener:
                    return "key"
                self._pending += '"":'
            elif f.state == _COLON:
                self._pending += ":"
        f.state = _VALUE
        return "value"

    def _owe_value(self, f: _Frame) -> None:
        """A comma or closer where a member's value is missing: the member is left out (its key was never sent)."""
        if f.kind == "{" and f.state in (_COLON, _VALUE):
            self._drop_member(f)

    def _drop_member(self, f: _Frame) -> None:
        """The member under way is left out: what waits for it (comma, key, colon) goes, as if never written."""
        self._pending = ""
        f.state = _NEXT if f.filled else _KEY if f.kind == "{" else _VALUE

    def _release(self) -> None:
        """The held value is complete (a comma, closer, string or the end follows): it leaves."""
        if self._scalar is not None:
            text, self._scalar, self._bare = self._scalar, None, None
            self._emit(text)

    def _expression(self) -> None:
        """An operator follows a value: the member is an expression, left out whole (nothing is evaluated)."""
        self._in_expression = True
        if self._live:  # in the arguments (one beside them, in a made-up key, is ignored as whole-call mode ignores it)
            self.expressions.append(self._path())
        self._drop_held()

    def _drop_held(self) -> None:
        """The held value is left out, and its member with it (as if never written)."""
        f = self._stack[-1]
        self._scalar, self._bare, f.filled = None, None, self._scalar_filled
        self._drop_member(f)

    def _end_word(self) -> None:
        word, self._word = self._word, ""
        if self._scalar is not None and word[:1] in _OPERATORS:
            self._expression()
            return
        if self._in_expression:
            return  # the rest of an expression
        if self._bare is not None:
            if _EXPRESSION_WORD.search(word):  # "hello world-wide": not a string value, as whole-call mode reads it
                self._expression()
                return
            self._bare.append(word)  # "New York": one value of several bare words, as written
            self._scalar = self._bare_value()
            return
        self._release()
        if not self._stack:
            self.streamable, self.done = False, True  # a bare scalar where an object should be
            return
        if self._prepare(False) == "key":
            f = self._stack[-1]
            f.key, f.state = word, _COLON
            self._pending += json.dumps(word, ensure_ascii=False)
            return
        if self._call and len(self._stack) == 1 and self._stack[-1].key in ARGUMENT_KEYS and not self.started:
            self.streamable = False
        text = scalar(word)
        if text[0] == '"' and _EXPRESSION_WORD.search(word):  # "2*Math.PI", "1-2", "math.pi": never a string
            self._scalar, self._scalar_filled = text, self._stack[-1].filled
            self._expression()
            return
        if text[0] == '"':
            self._bare, self._bare_fixes = [word], len(self.fixes)
            text = self._bare_value()
        elif self._schema_here():
            text = json.dumps(self._typed(json.loads(text)), ensure_ascii=False)
        self._scalar, self._scalar_filled = text, self._stack[-1].filled  # held: an operator may follow
        self._value_end()

    def _bare_value(self) -> str:
        """The held bare words as one JSON string, typed by the schema (typed afresh as each word joins)."""
        assert self._bare is not None
        del self.fixes[self._bare_fixes :]
        value: Any = "".join(self._bare).strip()
        if self._schema_here():
            value = self._typed(value)
        return json.dumps(value, ensure_ascii=False)

    def _key_after_words(self) -> None:
        """``{x: Paris y: 2}``: a colon shows the last bare word was a key after a missing comma. The words
        before it are the value; the last one is read again, as a key."""
        assert self._bare is not None
        value, key = "".join(self._bare).rsplit(None, 1)  # at least two words (the caller counted them)
        self._bare = [value]
        self._scalar = self._bare_value()
        self._release()
        self._word = key
        self._end_word()

    def _open(self, ch: str) -> None:
        if not self._stack and ch != "{":
            self.streamable, self.done = False, True
            return
        self._prepare(True)
        depth = len(self._stack)
        if depth >= MAX_DEPTH and not self._mute:  # left out whole: its frames are still counted, nothing leaves
            self._drop_member(self._stack[-1])
            self._mute, self._mute_live, self._live, self.too_deep = depth + 1, self._live, False, True
            self._stack.append(_Frame(ch, None))
            return
        self._flush_pending()  # before the arguments object goes live: the call object's own keys stay unsent
        schema = self._schema_here()
        if depth == 0 and not self._call or (depth == 1 and self._call and not self.started
                                             and self._stack[0].key in ARGUMENT_KEYS):
            if ch == "{":
                self._live, self._live_depth, self.started, schema = True, depth + 1, True, self.schema
            else:
                self.streamable = False
        self._emit(ch)
        self._stack.append(_Frame(ch, schema))
        if self._live and self._on_open is not None and len(self._stack) == self._live_depth:
            self._on_open()

    def _close(self) -> None:
        f = self._stack[-1]
        self._owe_value(f)
        self._pending = self._pending[1:]  # a comma before a closer is dropped; its whitespace is kept
        self._emit("}" if f.kind == "{" else "]")
        if len(self._stack) == self._live_depth:
            self._live = False
        self._stack.pop()
        if self._mute and len(self._stack) < self._mute:  # the value left out for its depth is over
            self._mute, self._live = 0, self._mute_live
            self._drop_member(self._stack[-1])
            return
        if self._stack:
            self._value_end()
        else:
            self.done = True

    # ------------------------------------------------------------------ helpers

    def _value_end(self) -> None:
        if self._stack:
            f = self._stack[-1]
            f.state, f.filled = _NEXT, True

    def _flush_pending(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, ""
            self._emit(pending)

    def _emit(self, s: str) -> None:
        if self._pending:
            self._flush_pending()
        if self._live:
            self._out(s)
