"""One GBNF grammar for a dialect's calls: free text (or not), then calls to the declared tools only.

Invariant: the grammar accepts exactly: an optional leading ``<think>…</think>`` span (anything
inside), then — unless a call is required — free text in which no trigger occurs, then (optionally,
or at least once when required) calls written as the dialect's tags, one after another, then
whitespace, an optional closing code fence (```` ``` ````, for a model that fenced its calls), and
at most one line of text in which no call can stand (no line break, none of ``< [ { ```).
A line-start trigger counts at the start of the text, after a newline, and right after a call (as
the parser reads it), so a bare ``[`` or ``{"name"`` in the middle of prose stays free text; free
text avoids triggers in any letter case, as the parser matches them.
With ``lazy``, the grammar starts at a trigger (llama.cpp feeds it from there) and holds the
calls only. With ``parallel`` off, it holds one call.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .forms import THINK, THINK_END, Tag
from .gbnf import Grammar, char_class, literal
from .values import Values, normalise_schema

__all__ = ["build_gbnf", "args_grammar", "object_schema"]

_TAIL_BANNED = "\n\r\t<[{`"  # the text after the last call: no line break, and no character a call needs



def object_schema(schema: Any) -> dict[str, Any]:
    """A tool's parameters as an object schema (a schema without a type is taken as an object)."""
    schema = normalise_schema(schema) if isinstance(schema, Mapping) else {}
    return {"type": "object", **{k: v for k, v in schema.items() if k != "type"}}


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[ \t\n]+|[^ \t\n{}\[\],:"]+')


def json_tokens(text: str) -> list[str]:
    """``text`` cut into JSON strings, punctuation, whitespace runs and other runs."""
    return _JSON_TOKEN.findall(text)


def _flex(ws: str, text: str, tag: Tag, *, begin: bool) -> str:
    """A tag's ``begin`` or ``end`` as a GBNF sequence.

    In JSON forms, the JSON part (``begin`` from its first ``{``; ``end`` up to its last closing
    bracket) may be spaced as the model likes: whitespace may stand between any two of its tokens,
    as JSON allows, and where the renderer puts layout between markup and JSON (``<tool_call>\n{``)
    any layout may stand. The markup itself stays exactly as the renderer writes it, and so does
    a fence's line (```` ```json ```` then a newline).
    """
    if not text:
        return ""
    if tag.style != "json" or (begin and "{" not in text):
        return literal(text)
    if begin:
        markup, json_part = text[: text.index("{")], text[text.index("{"):]
    else:
        run = len(text) - len(text.lstrip("}] \t\n"))
        json_part, markup = text[:run], text[run:]
    flexible = f" {ws} ".join(literal(t) for t in json_tokens(json_part) if t.strip())
    if begin:
        head = markup.rstrip(" \t\n")
        gap = markup[len(head):]
        layout = (literal(gap) if head.endswith("```json") else ws) if gap else ""
        parts = [literal(head) if head else "", layout, flexible, ws]
    else:
        if not flexible:  # no closing bracket: the markup follows the arguments as written
            return " ".join(p for p in (ws if json_part else "", literal(markup) if markup else "") if p)
        layout = ws if json_part != json_part.rstrip(" \t\n") else ""
        parts = [ws, flexible, layout if markup else "", literal(markup) if markup else ""]
    return " ".join(p for p in parts if p)


def args_grammar(values: Values, tag: Tag, schema: Any) -> str:
    """The rule for a call's arguments written in ``tag.style``."""
    g, ws = values.g, values.ws
    obj = object_schema(schema)
    values.root = obj  # "#/…" references resolve in this tool's schema
    hint = f"{tag.tool}-{tag.style}"
    if tag.style == "json":
        return values.value(obj, "json", hint)
    if tag.style == "python":
        ident = g.rule("py-ident", "[A-Za-z_] [A-Za-z0-9_]*")
        other = g.rule("py-kwarg", f"{ident} {ws} \"=\" {ws} {values.value(True, 'python')}")
        return values.members(obj, lambda k, v: f"{literal(k)} {ws} \"=\" {ws} {v}", f'{ws} "," {ws}', "python",
                              hint, other)
    markup = tag.xml
    if markup is None:
        raise ValueError(f"the {tag.style} tag of {tag.tool!r} names no XML-parameter markup")
    close, head, head_end = literal(markup.value_close), literal(markup.param_open), literal(markup.name_close)
    other = g.rule("xml-param", f'{head} [^>\\n]+ {head_end} {values.xml_text} {close}')
    def param(key: str, value: str) -> str:
        return f"{literal(markup.param_open + key + markup.name_close)} {ws} {value} {ws} {close}"

    params = values.members(obj, param, ws, "xml", hint, other)
    return g.rule(f"{hint}-params", f"{ws} {params} {ws}")


def _call_rules(g: Grammar, values: Values, tags: Sequence[Tag], schemas: Mapping[str, Any],
                parallel: bool) -> tuple[list[str], list[str]]:
    """The rules for one block each, ``(word-triggered, line-start)``.

    A dialect whose block is a list (``[f(a=1), g(b=2)]``: ``Tag.joiner``) gets one rule per list
    form, holding one call, or with ``parallel`` any number of calls to any of the tools.
    """
    ws = values.ws
    word_calls: list[str] = []
    line_calls: list[str] = []
    lists: dict[tuple[str, str, str, bool], list[str]] = {}
    for tag in tags:
        args = args_grammar(values, tag, schemas[tag.tool])
        begin, end = tag.inner
        body = " ".join(p for p in (_flex(ws, begin, tag, begin=True), args, _flex(ws, end, tag, begin=False)) if p)
        call = g.rule(f"call-{tag.tool}", body)
        if tag.joiner:
            lists.setdefault(tag.list_key, []).append(call)
        else:
            (line_calls if tag.line_start else word_calls).append(call)
    for (opener, closer, joiner, line_start), calls in lists.items():
        item = g.rule("list-item", " | ".join(dict.fromkeys(calls)))
        more = f" ({ws} {literal(joiner.strip())} {ws} {item})*" if parallel else ""
        block = g.rule("call-list", f"{literal(opener)} {ws} {item}{more} {ws} {literal(closer)}")
        (line_calls if line_start else word_calls).append(block)
    return word_calls, line_calls


def build_gbnf(tags: Sequence[Tag], schemas: Mapping[str, Any], *, required: bool, parallel: bool,
               lazy: bool) -> str:
    """The grammar text (see the module's invariant)."""
    g = Grammar()
    values = Values(g, xml_close=_xml_close(tags))
    ws = values.ws
    word_calls, line_calls = _call_rules(g, values, tags, schemas, parallel)
    word = g.rule("word-call", " | ".join(dict.fromkeys(word_calls))) if word_calls else None
    line = g.rule("line-call", " | ".join(dict.fromkeys(line_calls))) if line_calls else None
    any_call = " | ".join(x for x in (word, line) if x)
    words = tuple(t.trigger for t in tags if not t.line_start)
    lines = tuple("\n" + v for t in tags if t.line_start for v in _spacings(t))
    # A line-start form may also follow a call on the same line: the parser reads it there (after a call
    # block, only whitespace since counts as a line start), and small models write "[f(..)] [f(..)]".
    following = " | ".join(x for x in (f"{ws} {word}" if word else "", f"{ws} {line}" if line else "") if x)
    # After the last call: the end, or one line of text. Without that way out, a model that wants to add a
    # sentence is left only a new call, and writes calls until it is cut off. The line holds none of
    # < [ { ` (every opener of every dialect the parser reads needs one of them to complete a call) and
    # no line break, so no call can stand in it, whatever the dialect, case or indentation. A closing fence
    # comes first: a model that wrote ```json before its calls, left no way to close it, writes calls on.
    after = g.rule("after-calls", f'{ws} ({literal("```")} {ws})? ({literal(chr(10))} '
                                  f'{char_class(_TAIL_BANNED + " ", negate=True)} {char_class(_TAIL_BANNED, negate=True)}*)?')
    rest = g.rule("more-calls", f"({following})* {after}" if parallel else after)
    if lazy:
        g.define("root", f"({any_call}) {rest}")
        return g.text()
    think_text = g.avoiding("think-text", (THINK_END,))
    think = g.rule("think", f"{ws} {literal(THINK)} {think_text} {literal(THINK_END)} {ws}")
    if required:
        g.define("root", f"{think}? {ws} ({any_call}) {rest}")
        return g.text()
    free = g.avoiding("free", words + lines, after="\n")
    options = [free]
    if word:
        options.append(f"{free} {word} {rest}")
    if line:
        options.append(f'({free} "\\n")? {line} {rest}')
    g.define("root", f"{think}? ({' | '.join(options)})")
    return g.text()


def _xml_close(tags: Sequence[Tag]) -> str:
    """The parameter closer of the tags' XML-parameter markup ("" when none is written so)."""
    return next((t.xml.value_close for t in tags if t.xml is not None), "")


def _spacings(tag: Tag) -> tuple[str, ...]:
    """A line-start trigger as models space it: after its opening bracket, nothing, a space, or a
    newline with some indentation (the grammar takes any; free text avoids these)."""
    trigger = tag.trigger
    if tag.style != "json" or trigger[:1] not in "{[":
        return (trigger,)
    at = len(trigger) - len(trigger.lstrip("[{"))
    return tuple(trigger[:at] + gap + trigger[at:] for gap in ("", " ", "\n", "\n  ", "\n    ", "\n\t"))


def kwargs_ebnf(tag: Tag, schema: Any) -> str:
    """A whole grammar (``root``) for one pythonic call's keyword arguments (a structural tag's content)."""
    g = Grammar()
    values = Values(g, xml_close=_xml_close((tag,)))
    g.define("root", args_grammar(values, tag, schema))
    return g.text()
