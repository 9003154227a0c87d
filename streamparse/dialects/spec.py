"""What a dialect *is*: a declaration the one scanner runs. No scanning happens here.

Invariant: every field is data. The scanner (``streamparse.scanner``) only reads
these declarations; it never names a dialect. Adding a format never touches it.
The marker texts a declaration holds are read from its format's grammar
(``dialects.markup``) or derived from its family's markup; none is written here.

A block is ``[fence] opener head… body [end] [closers]``:

- ``openers``: literal markers that start the block (case-insensitive). ``{name}``
  inside one stands for a provided tool's name (``"<{name}>"``).
- ``head``/``look`` (per ``Opener``): a short check on the text right after the
  opener that decides whether this dialect owns the block (several dialects share
  ``<tool_call>``). ``head`` is consumed as markup; ``look`` is the body's beginning.
- ``body``: how the scanner finds the block's end and its items —
  ``JSON`` (balanced JSON values, strings tracked), ``PYTHON`` (a balanced Python
  list, both quote kinds), ``TAGGED`` (raw text up to an end tag, items delimited
  by ``item`` tags, nested copies of the tags counted).
- ``end``: end markers (``{name}`` is the call's name); empty: the block ends with its value.
- ``closers``: optional markers that may follow the end and belong to the block.
- ``decode``: a function from one item's text to ``([(name, arguments)], repaired)``.
- ``named_only``: never auto-detected; read only when the user names it (``dialects=[…]``,
  ``--dialect``): its markers are too plain to look for in every answer (``Action:``, ``>>>``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import functools
from typing import Any, Callable, NamedTuple

# Body kinds: which incremental scanner finds the block's end.
JSON = "json"
PYTHON = "python"
TAGGED = "tagged"

# Part kinds of a head.
WS, LIT, OPT, NAME, PEEK = "ws", "lit", "opt", "name", "peek"

Calls = list[tuple[str, Any]]  # (name, arguments: a dict, or arguments.UnparsedArguments)
Decoder = Callable[[str, "str | None"], tuple[Calls, bool]]  # (item text, name from the head) -> (calls, repaired)


@dataclass(frozen=True)
class Part:
    """One step of a head check: whitespace, a literal (any of several), an optional literal, a name, a peek."""

    kind: str
    texts: tuple[str, ...] = ()  # LIT/OPT: the literals (lowercase); PEEK: the characters allowed
    gated: bool = False  # NAME: must be a provided tool's name
    # NAME, gated: with tools declared, an undeclared identifier (dotted allowed) directly followed by this
    # literal passes too ("[area(" opens the line-start pythonic list); the block is then judged item by item,
    # so a declared call in it still leaves and an undeclared one stays text, reported (``unknown_tool``).
    called: str = ""


def ws() -> Part:
    return Part(WS)


def lit(*texts: str) -> Part:
    return Part(LIT, tuple(t.lower() for t in texts))


def opt(text: str) -> Part:
    return Part(OPT, (text.lower(),))


def name(gated: bool = False, called: str = "") -> Part:
    return Part(NAME, gated=gated, called=called)


def peek(chars: str) -> Part:
    return Part(PEEK, (chars,))


@dataclass(frozen=True)
class TagParams:
    """How an XML-style dialect's arguments stream (``stream_tags``): regexes for the call's head
    (group 1: the name) and a parameter's head (group 1: the key), and the literal closing a value."""

    head: str
    param: str
    value_close: str
    item_close: str = ""  # the item's own closer ("": the item ends with the block)
    bare_name: bool = False  # the name is bare text that may go on until the first tag (GLM)


class ValueTags(NamedTuple):  # (a tuple: hashed in C, as the body scanner's table key is for every call block)
    """A TAGGED dialect whose values are raw text between tags (XML parameters): how the body scanner tells a
    value's closer from the same markup quoted inside it. Inside an open value only ``close``, the item's closer
    and the block's end are read, and each is the value's text unless what follows it (after whitespace) can
    follow a real one: ``next`` (the next parameter) or the item's closer after ``close``; the next item or the
    block's end after the item's closer; the end of the stream (see ``core.tag_body``)."""

    open: tuple[str, ...]  # a value's head begins with one of these (lowercase)
    close: str  # a value's closer
    next: tuple[str, ...]  # what may follow a value's closer, besides the item's closer and the block's end


@dataclass(frozen=True)
class Opener:
    """One way a dialect's block starts.

    ``head`` is read after the opener and belongs to the block (not to the body);
    ``look`` must follow the head but is not consumed: the body starts there.
    A ``NAME`` part in either (or ``{name}`` in the text) gives the call's name.
    """

    text: str
    head: tuple[Part, ...] = ()
    look: tuple[Part, ...] = ()
    keep: int = 0  # the opener's last N characters are the body's first ("<{" keeps "{")
    line_start: bool = False  # only at the start of a line (or right after a fence line)
    end: tuple[str, ...] | None = None  # overrides the dialect's end markers for this opener


@dataclass(frozen=True)
class Dialect:
    """A markup family: how its blocks open, what decides them, how they end, how they decode."""

    name: str
    openers: tuple[Opener, ...]
    body: str
    decode: Decoder
    grammar: str
    end: tuple[str, ...] = ()
    closers: tuple[str, ...] = ()  # optional, after a block that ended without an end marker
    item: tuple[str, str] | None = None  # TAGGED: (item opener, item closer); each item is a call
    nest: tuple[str, str] | None = None  # TAGGED: a wrapper pair whose copies inside a value are counted
    separators: str = ""  # JSON/PYTHON: characters that may stand between several values (";" for Llama 3)
    several: bool = False  # JSON: several top-level values may follow each other in one block
    needs_tools: bool = False  # only recognised when tools are provided
    named_only: bool = False  # never in auto mode (``resolve(None)``): read only when named
    text_values: bool = False  # argument values are raw text, typed by the tool's schema
    value_layout: bool = True  # text_values: newlines just inside a value's tags are layout (Qwen3); False: as written (GLM)
    eos_ends: bool = False  # the end marker is a stop token servers may strip: end of stream completes the item
    stream: TagParams | None = None  # TAGGED: how arguments stream as written; None: whole, when the item closes
    values: ValueTags | None = None  # TAGGED: raw-text values, whose quoted closers are the value's (see ValueTags)
    json_strings: bool = False  # TAGGED: arguments written as JSON; a tag inside an open JSON string is the string's
    quotes: tuple[str, ...] = ()  # TAGGED: delimiters that open and close strings in the arguments, besides JSON's:
    # Python's ' and " (backslash escapes), Gemma 4's <|"|> (none); a tag inside such a string is the string's

    @functools.cached_property  # (read for every call block a tag body opens)
    def strings(self) -> tuple[str, ...]:
        """The delimiters of the strings a tag body tracks (none: every tag is read)."""
        return ('"',) * self.json_strings + self.quotes
    aliases: tuple[str, ...] = ()
    doc: str = ""
    source: str = ""
    # A family member's markup, from which the rest of the declaration is derived (typed loosely: the families'
    # modules build on this one): an ``xml_family.XmlCall`` (XML parameters), a ``kv_family.KvCall`` (key/value tags).
    markup: Any = None
    kv: Any = None


@dataclass(frozen=True)
class Span:
    """A stretch of output that is not a call: reasoning (``<think>``), content, or markup to drop."""

    opener: str
    closers: tuple[str, ...] = ()
    kind: str = "reasoning"  # "reasoning" | "content" | "drop" (no body: the opener alone is removed)
    dialect: str = ""  # enabled with this dialect ("" = always)


@dataclass(frozen=True)
class Registry:
    """Dialects by name plus their spans and aliases."""

    dialects: dict[str, Dialect]
    spans: tuple[Span, ...]
    aliases: dict[str, str] = field(default_factory=dict)

    @functools.cached_property
    def auto(self) -> tuple[str, ...]:
        """Every dialect but the named-only ones (auto mode), in order: read for every parser built, made once."""
        return tuple(n for n, d in self.dialects.items() if not d.named_only)

    def resolve(self, names: Any) -> list[str]:
        """Canonical dialect names for user-given names or aliases (ValueError names the unknown ones).
        None (auto mode) is every dialect but the named-only ones."""
        if names is None:
            return list(self.auto)
        if isinstance(names, str):
            names = [names]
        out: list[str] = []
        unknown = []
        for n in names:
            canonical = self.aliases.get(n, n)
            if canonical not in self.dialects:
                unknown.append(n)
            elif canonical not in out:
                out.append(canonical)
        if unknown:
            raise ValueError(f"unknown dialect(s) {unknown}; known: {sorted(self.known_names())}")
        return out

    def known_names(self) -> list[str]:
        return sorted(set(self.dialects) | set(self.aliases))
