"""The XML-parameter family (Qwen3-Coder, Seed-OSS, MiniMax-M2, Claude-style invokes, MiniCPM5, ...): one call is
an element named by its head, holding one element per parameter whose value is raw text.

Invariant: an ``XmlCall`` is the only place a member's markup is written. Its Lark grammar (the definition, and what
decodes, with the family's rules), how its arguments stream, how the body scanner tells a value's closer
from the same markup quoted in it, the look that opens a bare call, and its renderer are all derived here from the
two tag words and the way names are written, so they cannot disagree on a spelling.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from ..arguments.grammar import define_grammar
from ..arguments.xml_values import strip_layout
from ..arguments.schema import ArgumentError
from .decoders import Decoded, Rules, GrammarDecoder
from .markup import in_lark_regex
from .spec import TAGGED, Dialect, Opener, Part, TagParams, ValueTags, lit, name, ws

__all__ = ["XmlCall", "xml_dialect"]

_WHITESPACE = (" ", "\t", "\n", "\r")  # what may follow a tag word before its attribute


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

    @property
    def cdata_open(self) -> str:
        """What opens a value's CDATA wrapper (``cdata``)."""
        return "<![CDATA["

    @property
    def cdata_close(self) -> str:
        return "]]>"

    def _open(self, word: str) -> str:
        return f'<{word} {self.attribute}="' if self.attribute else f"<{word}="

    def _starts(self, word: str) -> tuple[str, ...]:
        """Every way a head of ``word`` may begin, lowercase: ``<word=``, or ``<word`` and a whitespace."""
        return tuple(f"<{word}{c}" for c in _WHITESPACE) if self.attribute else (f"<{word}=",)

    # ------------------------------------------------------------------ patterns (group 1: the name or key)

    def _head(self, word: str, *, key: bool = False, group: bool = True) -> str:
        """A head as the readers take it: an attribute with optional quotes and whitespace, or ``=NAME>``; the name
        or key is group 1 (``group``) or not captured."""
        w, g = re.escape(word), "(" if group else "(?:"
        if self.attribute:
            # (possessive: the spaces, quotes and name never trade characters, so a head that is not one fails
            # at once instead of trying every split of a run of spaces)
            return rf"""<{w}\s++{re.escape(self.attribute)}\s*+=\s*+["']?+{g}[^"'>]*+)["']?+\s*+>"""
        return rf"<{w}={g}[^>\n<]*)>" if key else rf"<{w}={g}[^>\n]*)>"

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

    def decoder(self, grammar: str) -> Callable[[str, str | None], Decoded]:
        """One item -> its call, read by the family's grammar (registered as ``grammar``) and folded by its rules."""
        return GrammarDecoder(grammar, _XmlRules(self))

    def grammar(self, source: str) -> str:
        """The Lark grammar of one item: the family's definition, and what decodes it. Tags are read in any letter
        case, and whitespace before a tag is the tag's. A value ends at *its* closer: the first one followed by
        whitespace and then the next parameter's head, the call's end or the item's end; a value with no such closer
        runs to the call's end, which may be left out (a cut item). A closer followed by a parameter head this
        family cannot read (``<parameter name=…>`` where ``<parameter=…>`` is written) makes the item unreadable.
        A value that lost its own closer is split by the rules (``_XmlRules.call``). ``source``: the grammar's header."""
        call_head = in_lark_regex(self._head(self.call, group=False))
        param_head = in_lark_regex(self._head(self.param, key=True, group=False))
        call_close, param_close = in_lark_regex(re.escape(self.call_close)), in_lark_regex(re.escape(self.value_close))
        follow = rf"\s*(?:{param_head}|{call_close}\s*\Z|\Z)"  # what follows a value's closer
        # A value is read one run at a time: text with no "<", or a "<" that is not where the value stops. A value
        # stops at its closer, and a closer followed by a head this family cannot read stops it too (unreadable).
        # A value with no closer stops at the call's end.
        closer_rest, call_close_rest = param_close[1:], call_close[1:]  # (the closers after their "<")
        value_stops, open_value_stops = [rf"{closer_rest}{follow}"], [rf"{call_close_rest}\s*\Z"]
        if not self.attribute:  # a closer, then a head of the other spelling
            unreadable = rf"{closer_rest}\s*<{in_lark_regex(re.escape(self.param))}\b"
            value_stops.append(unreadable)
            open_value_stops.append(unreadable)
        value, open_value = (rf"(?:[^<]++|<(?!{'|'.join(stops)}))++" for stops in (value_stops, open_value_stops))
        header = "".join(f"// {line}\n" for line in source.splitlines())
        return (f"{header}start: call\n"
                "call: CALL_HEAD _STRAY_CLOSE* param* open_param? _CALL_CLOSE?\n"
                "param: PARAM_HEAD VALUE? _PARAM_CLOSE\n"
                "open_param: PARAM_HEAD OPEN_VALUE?\n"
                f"CALL_HEAD: /\\s*{call_head}/i\n"
                f"PARAM_HEAD: /\\s*{param_head}/i\n"
                f"_PARAM_CLOSE.3: /{param_close}(?={follow})/i\n"
                f"_STRAY_CLOSE: /\\s*{param_close}/i\n"
                f"VALUE.2: /{value}(?={param_close}{follow})/is\n"
                f"OPEN_VALUE.1: /{open_value}/is\n"
                f"_CALL_CLOSE: /\\s*{call_close}\\s*\\Z|\\s+\\Z/i\n")

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
            return f"{self.cdata_open}{text}{self.cdata_close}" if any(c in text for c in "<&\n") else text
        if self.value_lines:
            return f"\n{text}\n"
        return text if strip_layout(text) == text else f"\n{text}\n"  # laid out only where reading would strip it


def _unwrapped(value: Any, cdata: re.Pattern[str]) -> Any:
    """A value's text without its CDATA wrapper, when the whole value is one."""
    if isinstance(value, str):
        m = cdata.match(value.strip())
        if m is not None:
            return m.group(1)
    return value


class _XmlRules(Rules):
    """A family's item, as its grammar reads it -> its call. Names and keys are read by the same head patterns the
    grammar's heads are written from. A value that holds more parameter heads than closers lost its own closer when
    one of its heads starts a line (as the template lays heads out) and names a parameter not given yet (vLLM's
    test: ``<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>``): it ends before that head, which
    opens the next parameter, and the call is read as a repair. Any other tag in a value is its text."""

    token_types = False

    def __init__(self, markup: XmlCall) -> None:
        word = markup.param
        self._call_name = re.compile(markup._head(markup.call), re.I).search
        self._param_key = re.compile(markup._head(word, key=True), re.I).search
        # A value's tags: a parameter head (group "open", its key group 2), or a closer.
        self._tags = re.compile(f"(?P<open>{markup._head(word, key=True)})|{re.escape(markup.value_close)}", re.I).finditer
        # A value wholly inside the CDATA wrapper, when the member wraps values.
        self._cdata = re.compile(rf"{re.escape(markup.cdata_open)}(.*){re.escape(markup.cdata_close)}\Z", re.S) \
            if markup.cdata else None

    def start(self, children: list[Any]) -> list[Any]:
        return children

    def call(self, children: list[Any]) -> tuple[tuple[str, dict[str, Any]], bool]:
        head, *params = children
        found = self._call_name(head)
        called = found.group(1).strip() if found is not None else ""
        if not called:
            raise ArgumentError("empty function name")
        arguments: dict[str, Any] = {}
        repaired = False
        for key, value in params:
            while True:
                lost = self._lost_closer(value, arguments)
                if lost is None:
                    break
                arguments[key] = value[: lost.start()]
                key, value, repaired = lost.group(2).strip(), value[lost.end() :], True
            arguments[key] = value
        if self._cdata is not None:
            arguments = {k: _unwrapped(v, self._cdata) for k, v in arguments.items()}
        return (called, arguments), repaired

    def param(self, children: list[str]) -> tuple[str, str]:
        found = self._param_key(children[0])
        return (found.group(1).strip() if found is not None else ""), str(children[1]) if len(children) > 1 else ""

    open_param = param

    def _lost_closer(self, value: str, given: dict[str, Any]) -> re.Match[str] | None:
        """The head in ``value`` before which it lost its closer, or None (its tags are its text)."""
        if "<" not in value:
            return None
        tags = list(self._tags(value))
        if sum(1 if t.group("open") is not None else -1 for t in tags) <= 0:
            return None
        for tag in tags:
            start = tag.start()
            line_start = value.rfind("\n", 0, start)
            if tag.group("open") is not None and line_start >= 0 and not value[line_start + 1 : start].strip(" \t") \
                    and tag.group(2).strip() not in given:
                return tag
        return None


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
    return Dialect(dialect, tuple(openers), TAGGED, markup.decoder(dialect), dialect, markup=markup, source=source,
                   end=(wrapper[1],) if wrapper else (), closers=closers, item=markup.item,
                   nest=wrapper, text_values=True, value_layout=not markup.cdata,
                   stream=markup.tag_params if stream else None, values=markup.value_tags, **fields)
