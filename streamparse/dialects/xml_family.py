"""The XML-parameter family (Qwen3-Coder, Seed-OSS, MiniMax-M2, Claude-style invokes, MiniCPM5, ...): one call is
an element named by its head, holding one element per parameter whose value is raw text.

Invariant: an ``XmlCall`` is the only place a member's markup is written. Its Lark grammar (the definition), its
linear decoder and that decoder's fast path, how its arguments stream, how the body scanner tells a value's closer
from the same markup quoted in it, the look that opens a bare call, and its renderer are all derived here from the
two tag words and the way names are written, so they cannot disagree on a spelling.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from lark import Token

from ..arguments.grammar import define_grammar
from ..arguments.xml_values import strip_layout
from .decoders import _TagCalls, grammar_decoder
from .fast_tags import FastXmlItem
from ..arguments.schema import ArgumentError
from .spec import TAGGED, Dialect, Opener, Part, TagParams, ValueTags, lit, name, ws
from .xml_params import Decoded, XmlParams

__all__ = ["XmlCall", "xml_dialect"]

_WHITESPACE = (" ", "\t", "\n", "\r")  # what may follow a tag word before its attribute
_CDATA = re.compile(r"<!\[CDATA\[(.*)\]\]>\Z", re.S)


@dataclass(frozen=True)
class XmlCall:
    """``<CALL…NAME…>`` ( ``<PARAM…KEY…>VALUE</PARAM>`` )* ``</CALL>``.

    ``call`` and ``param`` are the two elements' tag words (``function``/``parameter``; ``invoke``/``parameter``).
    A name is written after ``=`` in the tag (``<function=NAME>``), or, with ``attribute`` set, in that attribute
    (``<invoke name="NAME">``: whitespace around ``=`` and either quote kind read, double quotes written).
    ``value_lines``: the renderer writes each value on lines of its own (Qwen3's template does; the reader takes
    one newline on each side as layout). ``cdata``: a value may be wrapped in ``<![CDATA[…]]>`` (MiniCPM5 writes
    values holding ``<``, ``&`` or a newline so): the wrapper is markup, the text inside it the value.
    """

    call: str
    param: str
    attribute: str = ""
    value_lines: bool = False
    cdata: bool = False

    # ------------------------------------------------------------------ literal markup

    @property
    def call_open(self) -> str:
        """What a call's head starts with, as written (``<function=``, ``<invoke name="``)."""
        return self._open(self.call)

    @property
    def param_open(self) -> str:
        return self._open(self.param)

    @property
    def name_close(self) -> str:
        """What ends a head after its name, as written."""
        return '">' if self.attribute else ">"

    @property
    def value_close(self) -> str:
        return f"</{self.param}>"

    @property
    def call_close(self) -> str:
        return f"</{self.call}>"

    def _open(self, word: str) -> str:
        return f'<{word} {self.attribute}="' if self.attribute else f"<{word}="

    def _starts(self, word: str) -> tuple[str, ...]:
        """Every way a head of ``word`` may begin, lowercase: ``<word=``, or ``<word`` and a whitespace."""
        return tuple(f"<{word}{c}" for c in _WHITESPACE) if self.attribute else (f"<{word}=",)

    # ------------------------------------------------------------------ patterns (group 1: the name or key)

    def _head(self, word: str, *, key: bool = False) -> str:
        """A head as the lenient readers take it: an attribute with optional quotes and whitespace, or ``=NAME>``."""
        w = re.escape(word)
        if self.attribute:
            return rf"""<{w}\s+{re.escape(self.attribute)}\s*=\s*["']?([^"'>]*)["']?\s*>"""
        return rf"<{w}=([^>\n<]*)>" if key else rf"<{w}=([^>\n]*)>"

    def _exact_head(self, word: str, *, key: bool = False) -> str:
        """A head exactly as the template writes it (the fast path's: case-sensitive, a non-empty name)."""
        w = re.escape(word)
        if self.attribute:
            return rf'<{w} {re.escape(self.attribute)}="([^"\'>]*)">'
        return rf"<{w}=([^>\n<]+)>" if key else rf"<{w}=([^>\n]+)>"

    @property
    def tag_params(self) -> TagParams:
        """How the arguments stream as they are written (``core.stream_tags``)."""
        return TagParams(rf"\s*{self._head(self.call)}", self._head(self.param, key=True), self.value_close,
                         self.call_close)

    @property
    def value_tags(self) -> ValueTags:
        """How the body scanner tells a value's closer from one quoted in it (``core.tag_body``)."""
        starts = self._starts(self.param)
        return ValueTags(starts, self.value_close, starts)

    @property
    def item(self) -> tuple[str, str]:
        """The item's opener and closer, as the body scanner finds them."""
        return (f"<{self.call}" if self.attribute else self.call_open), self.call_close

    def bare_look(self) -> tuple[Part, ...]:
        """What must follow a bare call's opener (``call_open``) for it to be this family's: a name, the head's end,
        then a parameter or the call's end."""
        param = f"<{self.param}" if self.attribute else self.param_open
        return name(), lit(self.name_close), ws(), lit(param, self.call_close)

    def fast_item(self) -> FastXmlItem:
        """The decoder's fast path: a well-formed item in the template's exact spelling, or None (unsure)."""
        return FastXmlItem(self._exact_head(self.call), self._exact_head(self.param, key=True), self.value_close,
                           self.call_close, rf"</?(?:{re.escape(self.call)}|{re.escape(self.param)})")

    def decoder(self) -> Callable[[str, str | None], Decoded]:
        """One item -> its call: the linear decoder (lenient where models slip), its fast path first."""
        stray = None if self.attribute else rf"\s*<{re.escape(self.param)}\b"
        read = XmlParams(rf"\s*{self._head(self.call)}", self._head(self.param, key=True), re.escape(self.value_close),
                         re.escape(self.call_close), fast=self.fast_item(), stray=stray)
        if not self.cdata:
            return read

        def decode(text: str, head_name: str | None) -> Decoded:
            calls, repaired = read(text, head_name)
            return [(n, {k: _unwrapped(v) for k, v in a.items()} if isinstance(a, dict) else a)
                    for n, a in calls], repaired

        return decode

    def grammar_calls(self, grammar: str) -> Callable[[str, str | None], Decoded]:
        """One item read by the family's grammar alone (registered as ``grammar``): the definition the decoder
        and its fast path are tested against."""
        return grammar_decoder(grammar, _TreeCalls(self))

    def grammar(self, source: str) -> str:
        """The Lark grammar of one item: the family's definition, which the decoders agree with on well-formed
        items. A value ends at *its* closer: the one followed by whitespace and then the next parameter or the end
        of the call. ``source``: where the format is documented (the grammar's header)."""
        call, param = re.escape(self.call).replace("/", r"\/"), re.escape(self.param).replace("/", r"\/")
        attr = re.escape(self.attribute)
        if self.attribute:
            call_head, param_head = (rf'<{w}\s+{attr}\s*=\s*"[^"]*"\s*>' for w in (call, param))
            next_param = rf"<{param}\s"
        else:
            call_head, param_head, next_param = rf"<{call}=[^>\n]+>", rf"<{param}=[^>]+>", rf"<{param}=[^>]+>"
        follows = rf"(?=\s*(?:{next_param}|<\/{call}>\s*\Z))"
        header = "".join(f"// {line}\n" for line in source.splitlines())
        return (f"{header}start: _WS? call _WS?\n"
                "call: CALL_HEAD (_WS? param)* _WS? _CALL_CLOSE\n"
                "param: PARAM_HEAD VALUE? _PARAM_CLOSE\n"
                f"CALL_HEAD.3: /{call_head}/\n"
                f"PARAM_HEAD.3: /{param_head}/\n"
                f"_CALL_CLOSE.3: /<\\/{call}>/\n"
                f"_PARAM_CLOSE.3: /<\\/{param}>{follows}/\n"
                f"VALUE.2: /.+?(?=<\\/{param}>{follows[3:]}/s\n"
                "_WS.1: /\\s+/\n")

    def head_name(self, head: str) -> str:
        """The name or key in a head the grammar read (``CALL_HEAD`` / ``PARAM_HEAD``)."""
        return head.split('"')[1] if self.attribute else head[head.index("=") + 1 : -1]

    # ------------------------------------------------------------------ writing

    def render(self, name: str, args: dict[str, Any], wrap: tuple[str, str] = ("", "")) -> str:
        """One call as the family writes it, inside ``wrap`` (a wrapper's opener and closer, each on its own line)."""
        params = "".join(f"{self.param_open}{key}{self.name_close}{self._written(value)}{self.value_close}\n"
                         for key, value in args.items())
        call = f"{self.call_open}{name}{self.name_close}\n{params}{self.call_close}"
        return f"{wrap[0]}\n{call}\n{wrap[1]}" if wrap[0] else call

    def _written(self, value: Any) -> str:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if self.cdata:
            return f"<![CDATA[{text}]]>" if any(c in text for c in "<&\n") else text
        if self.value_lines:
            return f"\n{text}\n"
        return text if strip_layout(text) == text else f"\n{text}\n"  # laid out only where reading would strip it


def _unwrapped(value: Any) -> Any:
    """A value's text without its CDATA wrapper, when the whole value is one."""
    if isinstance(value, str):
        m = _CDATA.match(value.strip())
        if m is not None:
            return m.group(1)
    return value


class _TreeCalls(_TagCalls):
    """Trees of a family's grammar -> calls, named and keyed as ``XmlParams`` names them."""

    def __init__(self, markup: XmlCall) -> None:
        super().__init__()
        self.markup = markup

    def call(self, children: list[Any]) -> tuple[tuple[str, dict[str, Any]], bool]:
        head, *params = children
        called = self.markup.head_name(str(head)).strip()
        if not called:
            raise ArgumentError("empty function name")
        return (called, dict(params)), False

    def param(self, children: list[Token]) -> tuple[str, str]:
        return self.markup.head_name(str(children[0])).strip(), str(children[1]) if len(children) > 1 else ""


def xml_dialect(dialect: str, markup: XmlCall, *, wrapper: tuple[str, str] | None, bare: bool = False,
                closers: tuple[str, ...] = (), stream: bool = True, framed: tuple[Opener, ...] = (), source: str,
                **fields: Any) -> Dialect:
    """A member of the family, declared by its markup: a ``wrapper`` (opener, closer) holding calls, and/or
    (``bare``) a call standing alone, and/or ``framed`` openers (a message header whose head reads up to the
    wrapper's opener). ``stream``: arguments stream as written (off where a value's text is not yet the value, as
    inside CDATA). ``source`` heads its grammar; other fields go to :class:`Dialect` as they are."""
    openers = list(framed)
    if wrapper is not None:
        openers.append(Opener(wrapper[0], head=(ws(),), look=(lit(f"<{markup.call}" if markup.attribute
                                                                   else markup.call_open),)))
    if bare:
        openers.append(Opener(markup.call_open, keep=len(markup.call_open), end=(), look=markup.bare_look()))
    define_grammar(dialect, markup.grammar(source))
    return Dialect(dialect, tuple(openers), TAGGED, markup.decoder(), dialect, markup=markup, source=source,
                   end=(wrapper[1],) if wrapper else (), closers=closers, item=markup.item,
                   nest=wrapper, text_values=True, value_layout=not markup.cdata,
                   stream=markup.tag_params if stream else None, values=markup.value_tags, **fields)
