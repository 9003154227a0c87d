"""A declaration derived from a chat template, for a format no written declaration reads.

The template renders calls that differ in one thing at a time: the tool's name, the arguments given (none, one,
two), a value's type, the number of calls, the call's id. What stays the same around the name, the arguments
object, or each argument's key and value is the format's markup (llama.cpp's differential autoparser does this in
C++, for llama.cpp alone). Three shapes are told apart:

- ``native``: each call is a JSON object holding the name and the arguments (``{"name": …, "arguments": {…}}``,
  ``{"NAME": {…}}``), alone, in a JSON list, or between markers;
- ``json``: the name is in the markup and the arguments are a JSON object after it (``[TOOL_CALLS]NAME[ARGS]{…}``);
- ``tagged``: the name and each argument's key and raw value are in the markup (``<function=NAME><parameter=K>V``).

The markup around the calls is split into the section's (once, around all calls) and the call's (around each),
and a part that changes between calls (an id, an index) is a hole. The result is an ordinary ``Dialect``: a JSON
body when the calls are JSON or a call's head is fixed text, else a tag body whose items are the calls, decoded by
``derived_calls``.

Invariant: ``derive`` never raises for a template's sake: a shape it cannot tell, or markup it cannot express,
gives no declaration and says why (``Derivation.summary``). What it returns is checked by the caller
(``core.template_reading``) on the template's own renderings before it is used.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..dialects import SPANS
from ..dialects.decoders import json_calls, pythonic_calls
from ..dialects.spec import JSON, PYTHON, TAGGED, Dialect, Opener, Part, ValueTags, lit, name, peek, ws
from .conversations import Renderer
from .derived_calls import MarkedCalls, NativeCalls, TaggedParams
from .markup import Pattern, find_json, pattern_of, token_suffix
from .sandbox import TemplateError
from .turns import PromptState, TurnMarks, answer_text, common_prefix, cut_answer

__all__ = ["Derivation", "derive", "DERIVED_TOOLS"]

FIRST, SECOND = "alpha_probe_fn", "beta_probe_fn"
KEY1, KEY2, KEY3 = "first_probe_key", "second_probe_key", "count_probe_key"
VAL1, VAL2, NUMBER = "value one here", "value two here", 73
HOLE = "\ue000"  # where a call's id was written (a private-use character: no template writes one)
_IDS = ("call00001", "call00002")


def _probe_tool(tool: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": tool, "description": f"The {tool} probe.", "parameters": {
        "type": "object", "properties": {
            KEY1: {"type": "string", "description": "A first text"},
            KEY2: {"type": "string", "description": "A second text"},
            KEY3: {"type": "integer", "description": "A count"}}, "required": []}}}


DERIVED_TOOLS = (_probe_tool(FIRST), _probe_tool(SECOND))


@dataclass(frozen=True)
class Derivation:
    """A derived declaration (None when none could be made) and, in words, what was found or why not."""

    dialect: Dialect | None
    summary: str


class _NotDerived(Exception):
    """Why no declaration can be derived (the message)."""


Call = tuple[str, Mapping[str, Any]]


class _Renderings:
    """The template's answers for probe calls, each as the parser will read it: cut where the turn ends, the
    generation prompt's opening markup first where the answer continues it, the calls' ids as ``HOLE``."""

    def __init__(self, renderer: Renderer, state: PromptState, stops: Sequence[str], marks: TurnMarks, opening: str):
        self.renderer, self.state, self.stops, self.marks, self.opening = renderer, state, stops, marks, opening

    def __call__(self, *calls: Call) -> str:
        as_text = self.renderer.style.string_arguments
        message = {"role": "assistant", "content": "", "tool_calls": [
            {"id": _IDS[n], "type": "function",
             "function": {"name": tool, "arguments": json.dumps(dict(args)) if as_text else dict(args)}}
            for n, (tool, args) in enumerate(calls)]}
        text = cut_answer(answer_text(self.renderer, message, self.state, DERIVED_TOOLS), self.stops, self.marks)
        if self.opening and text.lstrip()[:1].isalpha():
            text = self.opening + text
        for n in range(len(calls)):
            text = text.replace(_IDS[n], HOLE)
        return _trimmed(text, self.state)


def _trimmed(text: str, state: PromptState) -> str:
    """The calls' markup alone: what the answer writes before it in spans (reasoning the prompt opened and its
    closer, whole reasoning or response spans, dropped markers) and after it (dropped markers) left out."""
    if state.reasoning or state.response:
        low = text.lower()
        ends = [(low.find(c.lower()), c) for c in state.closers if c.lower() in low]
        if ends:
            at, closer = min(ends)
            text = text[at + len(closer):]
    changed = True
    while changed:
        changed = False
        stripped = text.lstrip()
        low = stripped.lower()
        for span in SPANS:
            opener = span.opener.lower()
            if not opener or not low.startswith(opener):
                continue
            if span.kind == "drop":
                text, changed = stripped[len(opener):], True
                break
            found = [(low.find(c.lower(), len(opener)), c) for c in span.closers if c.lower() in low[len(opener):]]
            if found:
                close, closer = min(found)
                text, changed = stripped[close + len(closer):], True
                break
    text = text.strip()
    changed = True
    while changed:
        changed = False
        for span in SPANS:
            if span.kind == "drop" and span.opener and text.lower().endswith(span.opener.lower()):
                text, changed = text[: len(text) - len(span.opener)].rstrip(), True
    return text


def span_owners(texts: Sequence[str]) -> tuple[str, ...]:
    """The dialects whose own spans (reasoning, channels, dropped markers) the texts write: a derived declaration
    names them, so a parser reading it reads those spans too."""
    joined = "\n".join(texts).lower()
    return tuple(dict.fromkeys(s.dialect for s in SPANS if s.dialect and s.opener and s.opener.lower() in joined))


# --------------------------------------------------------------------------- where the calls are


@dataclass(frozen=True)
class _Unit:
    """One call in a rendering: ``start``..``end`` (its JSON object, or its name to the end of its arguments),
    and for a named call where its name ends and its arguments begin."""

    start: int
    end: int
    name_end: int = -1
    args_start: int = -1


def _native_call(value: Any, tool: str, arguments: Mapping[str, Any]) -> tuple[str, str, bool] | None:
    """(name field, arguments field, name is the key) when ``value`` is one call object of ``tool``."""
    if not isinstance(value, dict):
        return None
    if len(value) == 1 and value.get(tool) == dict(arguments):
        return tool, "", True
    name_field = next((k for k, v in value.items() if v == tool), None)
    args_field = next((k for k, v in value.items() if v == dict(arguments)
                       or (isinstance(v, str) and _loads(v) == dict(arguments))), None)
    if name_field is None or args_field is None:
        return None
    return name_field, args_field, False


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


class _Shape:
    """How one call is found in a rendering (per shape)."""

    kind = ""

    def unit(self, text: str, call: Call, start: int = 0) -> _Unit:
        raise NotImplementedError


class _Native(_Shape):
    kind = "native"

    def __init__(self, fields: tuple[str, str, bool]):
        self.fields = fields

    def unit(self, text: str, call: Call, start: int = 0) -> _Unit:
        found = find_json(text, lambda v: _native_call(v, call[0], call[1]) is not None, start)
        if found is None:
            raise _NotDerived(f"the call of {call[0]} is not a JSON object where one was before")
        return _Unit(found.start, found.end)


class _Named(_Shape):
    """A call whose name is in the markup; ``args`` finds where its arguments end after the name."""

    def __init__(self, kind: str, params: TaggedParams | None = None):
        self.kind, self.params = kind, params

    def unit(self, text: str, call: Call, start: int = 0) -> _Unit:
        at = text.find(call[0], start)
        if at < 0:
            raise _NotDerived(f"the call of {call[0]} is not written")
        name_end = at + len(call[0])
        if self.kind == "json":
            args = find_json(text, lambda v: v == dict(call[1]), name_end)
            if args is None:
                raise _NotDerived(f"the arguments of {call[0]} are not a JSON object after its name")
            return _Unit(at, args.end, name_end, args.start)
        assert self.params is not None
        end, first = name_end, -1
        for key, value in call[1].items():
            k = text.find(key, end)
            v = text.find(str(value), k + len(key)) if k >= 0 else -1
            if v < 0:
                raise _NotDerived(f"the argument {key} of {call[0]} is not written where expected")
            closer = self.params.closer(key)
            c = text.find(closer, v + len(str(value))) if closer else v + len(str(value))
            if c < 0:
                raise _NotDerived(f"the value of {key} is not closed as the template closes values")
            first = k if first < 0 else first
            end = c + len(closer)
        key_at = text.rfind(self.params.key_open.strip(), name_end, first) if first >= 0 else -1
        return _Unit(at, end, name_end, key_at if key_at >= 0 else end)


# --------------------------------------------------------------------------- the markup around the calls


@dataclass(frozen=True)
class _Layout:
    section_open: str
    call_open: str
    call_close: str
    section_close: str
    joiner: str


def _layout(render: _Renderings, shape: _Shape, one: str, call: Call) -> _Layout:
    """The section's and the call's markup, from one call and from two calls (the second of the other tool)."""
    unit = shape.unit(one, call)
    before, after = one[: unit.start], one[unit.end:]
    second = (SECOND, call[1])
    try:
        two = render(call, second)
    except TemplateError:  # (Llama 3.1's: "This model only supports single tool-calls at once!")
        two = ""
    if SECOND not in two:  # the template writes one call a turn: all the markup is the call's
        return _Layout("", before, after, "", "")
    a = shape.unit(two, call)
    b = shape.unit(two, second, a.end)
    if two[: a.start] != before or two[b.end:] != after:
        raise _NotDerived("two calls are not written as one call is, twice")
    mid = two[a.end: b.start]  # the first call's close, the joiner, the second call's open
    closed = len(_shared_start(after, mid))
    opened = min(token_suffix(before, mid), len(mid) - closed)
    return _Layout(before[: len(before) - opened], before[len(before) - opened:], after[:closed], after[closed:],
                   mid[closed: len(mid) - opened])


def _shared_start(a: str, b: str) -> str:
    return a[: common_prefix(a, b)]


def _pieces(text: str) -> Pattern:
    """Markup with the ids' hole in it."""
    return Pattern(tuple(text.split(HOLE)))


def _head_parts(markup: str) -> tuple[str, tuple[Part, ...]]:
    """An opener and the head that follows it, for fixed markup: its first word, then each other word after free
    whitespace."""
    words = markup.split()
    parts: list[Part] = []
    for word in words[1:]:
        parts += [ws(), lit(word)]
    return words[0], tuple(parts)


# --------------------------------------------------------------------------- derive


def derive(renderer: Renderer, state: PromptState, stops: Sequence[str], marks: TurnMarks = TurnMarks(),
           opening: str = "") -> Derivation:
    """A declaration read from the template's renderings of the probe calls (see the module's note)."""
    render = _Renderings(renderer, state, stops, marks, opening)
    try:
        call = (FIRST, {KEY1: VAL1})
        one = render(call)
        if FIRST not in one:
            raise _NotDerived("the template does not write the probe call's name")
        if render((SECOND, {KEY1: VAL1})) != one.replace(FIRST, SECOND):
            raise _NotDerived("two calls that differ only in the tool's name are written otherwise than by the name")
        native = find_json(one, lambda v: _native_call(v, *call) is not None)
        if native is not None:
            fields = _native_call(native.value, *call)
            assert fields is not None
            return _derive_native(render, _Native(fields), one, call)
        if find_json(one, lambda v: v == {KEY1: VAL1}, one.index(FIRST)) is not None:
            return _derive_named(render, _Named("json"), one, call)
        if _PYTHON_CALL.search(one):
            return _derive_python(render, one)
        return _derive_named(render, _Named("tagged", _tagged_params(render, one)), one, call)
    except _NotDerived as why:
        return Derivation(None, str(why))
    except TemplateError as exc:
        return Derivation(None, f"a probe call does not render: {exc}")


_PYTHON_CALL = re.compile(re.escape(FIRST) + r"\(\s*" + re.escape(KEY1) + r"\s*=\s*(['\"])" + re.escape(VAL1) + r"\1\s*\)")


def _derive_python(render: _Renderings, one: str) -> Derivation:
    """Calls written as a Python list of calls (``[f(k='v'), g()]``) between markers."""
    m = _PYTHON_CALL.search(one)
    assert m is not None
    start, end = one.rfind("[", 0, m.start()), one.find("]", m.end())
    if start < 0 or end < 0 or one[start + 1: m.start()].strip() or one[m.end(): end].strip():
        raise _NotDerived("Python calls not in a list")
    opener, closer = one[:start].strip(), one[end + 1:].strip()
    if not opener:
        raise _NotDerived("a bare Python list of calls cannot be told from prose")
    first, head = _head_parts(opener)
    dialect = Dialect("derived", (Opener(first, head=(*head, ws()), look=(peek("["),)),), PYTHON, pythonic_calls, "",
                      closers=(closer,) if closer else (),
                      doc=f"derived: a Python list of calls after {opener!r}{', then ' + repr(closer) if closer else ''}")
    return Derivation(dialect, dialect.doc.removeprefix("derived: "))


def _derive_native(render: _Renderings, shape: _Native, one: str, call: Call) -> Derivation:
    layout = _layout(render, shape, one, call)
    so, sc = layout.section_open.strip(), layout.section_close.strip()
    if sc and not so and not sc.startswith("]"):
        sc = ""  # a closer with no opener is the turn's end
    co, cc = layout.call_open.strip(), layout.call_close.strip()
    listed = so.endswith("[") and sc.startswith("]") and layout.joiner.strip() in (",", "")
    if listed:
        so, sc = so[:-1].rstrip(), sc[1:].lstrip()
    if so and co or sc and cc:
        raise _NotDerived("JSON calls with markup both around the section and around each call")
    opener, end = (so, sc) if listed or so or sc else (co, cc)
    if HOLE in opener or HOLE in end:
        raise _NotDerived("a call's id is written outside its JSON object")
    name_field, args_field, name_is_key = shape.fields
    decoder = NativeCalls(name_field, args_field, name_is_key)
    fields = "the name as the key" if name_is_key else f"the name in {name_field!r}, the arguments in {args_field!r}"
    if opener:
        first, head = _head_parts(opener)
        openers: tuple[Opener, ...] = (Opener(first, head=(*head, ws()), look=(peek("[{"),)),)
    elif not name_is_key and not listed:
        openers = (Opener("{", keep=1, line_start=True,
                          look=(ws(), lit(json.dumps(name_field)), ws(), lit(":"), ws(), lit('"'), name(gated=True),
                                lit('"'))),)
    else:
        raise _NotDerived("a bare JSON list of calls cannot be told from prose")
    owners = span_owners([one, render.renderer.prompt(tools=DERIVED_TOOLS)])
    dialect = Dialect("derived", openers, JSON, decoder, "", end=(end,) if end else (), several=True, separators=",;",
                      aliases=owners,
                      doc=f"derived: JSON calls ({fields}){' in a list' if listed else ''} after "
                          f"{opener or 'a line start'!r}{', then ' + repr(end) if end else ''}")
    return Derivation(dialect, dialect.doc.removeprefix("derived: "))


def _tagged_params(render: _Renderings, one: str) -> TaggedParams:
    """Each argument's markup, from calls with no, one and two arguments, and one with a number."""
    two = render((FIRST, {KEY1: VAL1, KEY2: VAL2}))
    name_end = one.index(FIRST) + len(FIRST)
    k1, v1 = one.find(KEY1, name_end), one.find(VAL1, name_end)
    k2, v2 = two.find(KEY2, name_end), two.find(VAL2, name_end)
    t_k1, t_v1 = two.find(KEY1, name_end), two.find(VAL1, name_end)
    if min(k1, v1, k2, v2, t_k1, t_v1) < 0 or not k1 < v1 or not t_v1 < k2 < v2:
        raise _NotDerived("the arguments are neither a JSON object nor written key before value")
    head = one[name_end:k1]  # the name's close and the first key's open
    key_close = one[k1 + len(KEY1): v1]
    between = two[t_v1 + len(VAL1): k2]  # value close, joiner, key open
    after = one[v1 + len(VAL1):]  # value close, call close...
    value_close = _shared_start(between, after)  # what ends a value, whatever follows it
    key_open = between[len(value_close):]
    if not value_close.strip() or not key_open.strip() or not head.endswith(key_open):
        raise _NotDerived("a key's or a value's markup is not the same for every argument")
    if key_open[:1].isspace() and head.endswith(key_open.lstrip()):
        key_open = key_open.lstrip()
    number = render((FIRST, {KEY3: NUMBER}))
    k3 = number.find(KEY3, name_end)
    v3 = number.find(str(NUMBER), k3 + len(KEY3)) if k3 >= 0 else -1
    close_pattern = Pattern((key_close,))
    if v3 >= 0 and number[k3 + len(KEY3): v3] != key_close:
        found = pattern_of([key_close, number[k3 + len(KEY3): v3]])
        if found is None or len(found.pieces) > 2:
            raise _NotDerived("a key's markup depends on its value's type in more than one place")
        close_pattern = found
    if v3 >= 0 and not number[v3 + len(str(NUMBER)):].startswith(value_close.replace(KEY1, KEY3)):
        raise _NotDerived("a value's closer depends on its type")
    return TaggedParams(key_open, close_pattern, tuple(value_close.split(KEY1)))


def _holes(pattern: Pattern) -> Pattern:
    """A pattern with the ids' holes (``HOLE``) made holes too."""
    return Pattern(tuple(piece for p in pattern.pieces for piece in p.split(HOLE)))


def _last_tag(markup: str) -> str:
    """The tags ``markup`` ends with (from its first ``<``: text before it, a fence, stays the call's), or ""."""
    at = markup.find("<")
    return markup[at:] if at >= 0 and markup.endswith(">") else ""


def _first_tag(markup: str) -> str:
    """The first tag of ``markup`` when it begins with one (``<tool_call>`` of ``<tool_call>\n<function=``)."""
    end = markup.find(">") + 1
    return markup[:end] if markup.startswith("<") and end > 0 else ""


def _closing_tag(markup: str) -> str:
    """The last tag of ``markup`` when it ends with one (``</tool_call>`` of ``</function>\n</tool_call>``)."""
    at = markup.rfind("<")
    return markup[at:] if at >= 0 and markup.endswith(">") else ""


def _section(layout: _Layout) -> tuple[str, str]:
    """The section's opener and closer; a closer with no opener is the turn's end (a stop token), not markup."""
    so, sc = layout.section_open.strip(), layout.section_close.strip()
    return (so, sc) if so else ("", "")


def _derive_named(render: _Renderings, shape: _Named, one: str, call: Call) -> Derivation:
    layout = _layout(render, shape, one, call)
    unit = shape.unit(one, call)
    name_close = one[unit.name_end: unit.args_start]
    try:
        two = render(call, (SECOND, call[1]))
    except TemplateError:
        two = ""
    between = Pattern((name_close,))
    if SECOND in two:
        b = shape.unit(two, (SECOND, call[1]), shape.unit(two, call).end)
        found = pattern_of([name_close, two[b.name_end: b.args_start]])
        if found is None:
            raise _NotDerived("the markup between a call's name and its arguments is not one pattern")
        between = found
    between = _holes(between)
    so, sc = _section(layout)
    call_open, call_close = _pieces(layout.call_open), _pieces(layout.call_close)
    params = shape.params
    values = None
    if params is not None and len(params.value_close) == 1:
        values = ValueTags((params.key_open.strip().lower(),), params.value_close[0].strip().lower(),
                           (params.key_open.strip().lower(),))
    layout_ws = params is not None and (params.key_close.pieces[-1][-1:].isspace()
                                        or params.value_close[0][:1].isspace())
    kind = "a JSON object" if shape.kind == "json" else "keys and values in tags"
    owners = span_owners([one, render.renderer.prompt(tools=DERIVED_TOOLS)])
    common: dict[str, Any] = {"text_values": params is not None, "json_strings": params is None, "values": values,
                              "value_layout": layout_ws, "aliases": owners}
    if so or sc:  # a section holds the calls: a tag body whose items are the calls
        if not (so and sc):
            raise _NotDerived("the calls' section has an opener and no closer")
        item_open, item_close = call_open.pieces[0].strip(), _last_tag(call_close.pieces[-1].strip())
        if not item_open or not item_close or layout.joiner.strip():
            raise _NotDerived("the calls in a section are not each between markers of their own")
        if HOLE in so or HOLE in sc:
            raise _NotDerived("a call's id is written in the section's markup")
        if not (item_open.startswith("<") and sc.startswith("<")):
            raise _NotDerived("a call's or the section's markup is not a tag (a tag body reads tags beginning with '<')")
        first, head = _head_parts(so)
        decoder = MarkedCalls(call_open, between, call_close, params)
        dialect = Dialect("derived", (Opener(first, head=(*head, ws())),), TAGGED, decoder, "", end=(sc,),
                          item=(item_open, item_close), **common,
                          doc=f"derived: calls between {so!r} and {sc!r}, each between {item_open!r} and "
                              f"{item_close!r}: the name, then {kind}")
        return Derivation(dialect, dialect.doc.removeprefix("derived: "))
    co, cc = layout.call_open.strip(), layout.call_close.strip()
    if not co or not call_open.fixed:
        raise _NotDerived("a call's markup does not begin with fixed text")
    if HOLE in cc:
        raise _NotDerived("a call's id is written after its arguments")
    first, head = _head_parts(co)
    if shape.kind == "json":  # a head names the call (an id or index in it read as a word); the body is the object
        parts: list[Part] = [name()]
        for n, piece in enumerate(between.pieces):
            if n:
                parts.append(name())
            parts += [p for w in piece.split() for p in (ws(), lit(w))]
        dialect = Dialect("derived", (Opener(first, head=(*head, ws(), *parts, ws()), look=(peek("{"),)),), JSON,
                          json_calls, "", end=(cc,) if cc else (), aliases=owners,
                          doc=f"derived: {co!r}, the name, {between.regex('…')!r}, a JSON object"
                              f"{', then ' + repr(cc) if cc else ''}")
        return Derivation(dialect, dialect.doc.removeprefix("derived: "))
    outer, inner = _first_tag(co), _closing_tag(cc)
    item_open, item_close = co[len(outer):].strip(), cc[: len(cc) - len(inner)].strip()
    if outer and inner and item_open.startswith("<") and _last_tag(item_close):
        # a wrapper around each call (<tool_call> … </tool_call>) and the call's own tags inside it: the call is
        # an item, so a value's closer is known by the item's closer that follows it
        decoder = MarkedCalls(Pattern((item_open,)), between, Pattern((item_close,)), params)
        first, head = _head_parts(outer)
        dialect = Dialect("derived", (Opener(first, head=(*head, ws())),), TAGGED, decoder, "", end=(inner,),
                          item=(item_open, _last_tag(item_close)), **common,
                          doc=f"derived: calls in {outer!r} … {inner!r}, each between {item_open!r} and "
                              f"{item_close!r}: the name, then {kind}")
        return Derivation(dialect, dialect.doc.removeprefix("derived: "))
    end = _last_tag(cc)
    if not end:
        raise _NotDerived("a call with no tag after its arguments cannot end (a tag body ends at a tag)")
    decoder = MarkedCalls(Pattern(("",)), between, Pattern((cc[: len(cc) - len(end)],)), params)
    dialect = Dialect("derived", (Opener(first, head=(*head, ws())),), TAGGED, decoder, "", end=(end,), **common,
                      doc=f"derived: calls between {co!r} and {cc!r}: the name, then {kind}")
    return Derivation(dialect, dialect.doc.removeprefix("derived: "))
