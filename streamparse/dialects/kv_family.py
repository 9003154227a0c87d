"""The key/value-tag family (GLM-4.5/4.7, LongCat's XML form, Tencent Hy3, K2 Horizon's IFM): one call is a bare
name followed by ``<KEY>k</KEY><VALUE>v</VALUE>`` pairs whose values are raw text.

Invariant: a ``KvCall`` is the only place a member's markup is written. Its Lark grammar (the definition, and what
decodes), how its arguments stream, how the body scanner tells a
value's closer from one quoted in it, the look that decides its block and its renderer are derived here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from ..arguments.grammar import define_grammar
from .decoders import _TagCalls, GrammarDecoder
from .markup import in_lark_regex
from .spec import TAGGED, Calls, Dialect, Opener, Part, TagParams, ValueTags, lit, name, ws

__all__ = ["KvCall", "kv_dialect"]

Decoded = tuple[Calls, bool]


def _lark(literal: str) -> str:
    """``literal`` inside a Lark ``/regex/``."""
    return in_lark_regex(re.escape(literal))


@dataclass(frozen=True)
class KvCall:
    """``[<ITEM>] NAME [<SEP>] (<KEY>k</KEY> <VALUE>v</VALUE>)* [</ITEM>]``.

    ``key`` and ``value`` are the two elements' tag words. ``item``: the call's own element, when calls are items of
    a wrapper (Hy3, IFM); without it the call is the whole block, between its opener and closer (GLM). ``sep``: a tag
    that ends the name (Hy3's ``<tool_sep>``). Values are as written between their tags (no layout taken off).
    """

    key: str
    value: str
    item: str = ""
    sep: str = ""

    def _tag(self, word: str, closing: bool = False) -> str:
        return f"</{word}>" if closing else f"<{word}>"

    @property
    def key_open(self) -> str:
        return self._tag(self.key)

    @property
    def value_close(self) -> str:
        return self._tag(self.value, True)

    @property
    def sep_tag(self) -> str:
        """The tag that ends the name (``sep``), or ``""``."""
        return self._tag(self.sep) if self.sep else ""

    @property
    def item_tags(self) -> tuple[str, str] | None:
        return (self._tag(self.item), self._tag(self.item, True)) if self.item else None

    @property
    def value_tags(self) -> ValueTags:
        """How the body scanner tells a value's closer from one quoted in it (``core.tag_body``)."""
        return ValueTags((self._tag(self.value),), self.value_close, (self.key_open,))

    @property
    def tag_params(self) -> TagParams:
        """How the arguments stream as they are written (``core.stream_tags``)."""
        item_open, item_close = self.item_tags or ("", "")
        head = rf"\s*{re.escape(item_open)}\s*([^<\s]+)" + (rf"\s*{re.escape(self.sep_tag)}" if self.sep else "")
        param = rf"{re.escape(self.key_open)}([^<]*){re.escape(self._tag(self.key, True))}\s*{re.escape(self._tag(self.value))}"
        return TagParams(head, param, self.value_close, item_close, bare_name=not self.sep)

    def look(self, closer: str) -> tuple[Part, ...]:
        """What follows a whole-block call's opener: its name, then its separator, a key or ``closer`` (the call's
        end); an item's wrapper is followed by the item's opener."""
        if self.item:
            return ws(), lit(self._tag(self.item))
        return ws(), name(), ws(), lit(self.sep_tag) if self.sep else lit(self.key_open, closer)

    def _end(self) -> str:
        return self._tag(self.item, True) if self.item else ""

    def grammar(self, source: str) -> str:
        """One call's Lark grammar. A value ends at *its* closer: the one followed by whitespace and then the next
        key, the item's end or the text's end; the last value's closer may be left out (a repair: GLM-4.7 does it,
        vLLM's test reads it), its value then holding no tag of the family's, nor a closer misspelt (``3/arg_value>``)."""
        k, kc, v, vc = (_lark(t) for t in (self.key_open, self._tag(self.key, True), self._tag(self.value),
                                            self.value_close))
        end = _lark(self._end())
        follow = rf"\s*(?:{k}|{end + '|' if end else ''}\Z)"
        words = "|".join(_lark(w) for w in (self.key, self.value))
        item_open = f"{_string(self._tag(self.item))} _WS? " if self.item else ""
        sep = f"_WS? {_string(self.sep_tag)} " if self.sep else ""
        item_close = f"_WS? {_string(self._end())}? " if self.item else ""
        # A value is read one run at a time (a run holds no character a stop can begin with); it stops at its closer
        # (VALUE), or (OPEN_VALUE, its closer left out) before any tag of the family's, the item's end, or a closer
        # misspelt (``/arg_value>``, ``arg_value>``).
        first, rest = _lark(self.value[0]), _lark(self.value[1:])
        open_value = (rf"(?:[^<\/{first}]++|<(?!\/?(?:{words})>{'|' + end[1:] if end else ''})|\/(?!{first}{rest}>)"
                      rf"|{first}(?!{rest}>))++")
        header = "".join(f"// {line}\n" for line in source.splitlines())
        return header + "\n".join([
            "start: glm_call",
            f"glm_call: _WS? {item_open}NAME {sep}(_WS? pair)* (_WS? open_pair)? {item_close}_WS?",
            "pair: _KEY_OPEN KEY _KEY_CLOSE _WS? _VALUE_OPEN VALUE? _VALUE_CLOSE",
            "open_pair: _KEY_OPEN KEY _KEY_CLOSE _WS? _VALUE_OPEN OPEN_VALUE",
            f"OPEN_VALUE.1: /{open_value}" + (rf"(?=(?:{end}\s*)?\Z)/s" if end else r"\Z/s"),
            r"NAME: /[^<\s]+/",
            r"KEY: /[^<]+/",
            rf"VALUE.2: /(?:[^<]++|<(?!{vc[1:]}{follow}))++(?={vc}{follow})/s",
            f"_KEY_OPEN: {_string(self.key_open)}",
            f"_KEY_CLOSE: {_string(self._tag(self.key, True))}",
            f"_VALUE_OPEN: {_string(self._tag(self.value))}",
            rf"_VALUE_CLOSE: /{vc}(?={follow})/",
            r"_WS: /\s+/",
        ]) + "\n"

    def decoder(self, grammar: str) -> Callable[[str, str | None], Decoded]:
        """One call -> itself: read by the grammar registered as ``grammar``."""
        return GrammarDecoder(grammar, _TagCalls())

    def render(self, name: str, args: dict[str, Any], wrap: tuple[str, str], lines: bool = True) -> str:
        """One call as its template writes it, in ``wrap`` (the block's or the wrapper's opener and closer), one tag
        per line when ``lines`` (GLM-4.5, Hy3) or none (GLM-4.7). Strings as they are, other values as JSON."""
        nl = "\n" if lines else ""
        pairs = "".join(f"{nl}{self.key_open}{k}{self._tag(self.key, True)}{nl}{self._tag(self.value)}{_text(v)}"
                        f"{self.value_close}" for k, v in args.items())
        sep = self.sep_tag
        call = f"{name}{sep}{pairs}{nl}"
        if self.item:
            call = f"{nl}{self._tag(self.item)}{call}{self._end()}{nl}"
        return f"{wrap[0]}{call}{wrap[1]}"


def _string(literal: str) -> str:
    """``literal`` as a Lark string."""
    return json.dumps(literal, ensure_ascii=False)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def kv_dialect(dialect: str, markup: KvCall, *, opener: str, closer: str, source: str, **fields: Any) -> Dialect:
    """A member of the family: ``opener`` … ``closer`` is the call itself (GLM), or the wrapper of its items."""
    define_grammar(dialect, markup.grammar(source))
    return Dialect(dialect, (Opener(opener, look=markup.look(closer)),), TAGGED, markup.decoder(dialect), dialect, kv=markup,
                   source=source, end=(closer,), item=markup.item_tags,
                   nest=None if markup.item else (opener, closer), text_values=True, value_layout=False,
                   stream=markup.tag_params, values=markup.value_tags, **fields)
