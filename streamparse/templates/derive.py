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
from typing import Any, Sequence

from ..dialects.decoders import json_calls, pythonic_calls
from ..dialects.spec import JSON, PYTHON, TAGGED, Dialect, Opener, Part, ValueTags, lit, name, peek, ws
from .call_markup import (FIRST, HOLE, KEY1, SECOND, VAL1, Call, DERIVED_TOOLS, Layout, Named, Native, NotDerived,
                          Renderings, holes, layout, native_call, pieces, span_owners, tagged_params)
from .conversations import Renderer
from .derived_calls import MarkedCalls, NativeCalls
from .markup import Pattern, find_json, pattern_of
from .sandbox import TemplateError
from .turns import PromptState, TurnMarks

__all__ = ["Derivation", "derive", "DERIVED_TOOLS"]

@dataclass(frozen=True)
class Derivation:
    """A derived declaration (None when none could be made) and, in words, what was found or why not."""

    dialect: Dialect | None
    summary: str


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
    render = Renderings(renderer, state, stops, marks, opening)
    try:
        call = (FIRST, {KEY1: VAL1})
        one = render(call)
        if FIRST not in one:
            raise NotDerived("the template does not write the probe call's name")
        if render((SECOND, {KEY1: VAL1})) != one.replace(FIRST, SECOND):
            raise NotDerived("two calls that differ only in the tool's name are written otherwise than by the name")
        native = find_json(one, lambda v: native_call(v, *call) is not None)
        if native is not None:
            fields = native_call(native.value, *call)
            assert fields is not None
            return _derive_native(render, Native(fields), one, call)
        if find_json(one, lambda v: v == {KEY1: VAL1}, one.index(FIRST)) is not None:
            return _derive_named(render, Named("json"), one, call)
        if _PYTHON_CALL.search(one):
            return _derive_python(render, one)
        return _derive_named(render, Named("tagged", tagged_params(render, one)), one, call)
    except NotDerived as why:
        return Derivation(None, str(why))
    except TemplateError as exc:
        return Derivation(None, f"a probe call does not render: {exc}")


_PYTHON_CALL = re.compile(re.escape(FIRST) + r"\(\s*" + re.escape(KEY1) + r"\s*=\s*(['\"])" + re.escape(VAL1) + r"\1\s*\)")


def _derive_python(render: Renderings, one: str) -> Derivation:
    """Calls written as a Python list of calls (``[f(k='v'), g()]``) between markers."""
    m = _PYTHON_CALL.search(one)
    assert m is not None
    start, end = one.rfind("[", 0, m.start()), one.find("]", m.end())
    if start < 0 or end < 0 or one[start + 1: m.start()].strip() or one[m.end(): end].strip():
        raise NotDerived("Python calls not in a list")
    opener, closer = one[:start].strip(), one[end + 1:].strip()
    if not opener:
        raise NotDerived("a bare Python list of calls cannot be told from prose")
    first, head = _head_parts(opener)
    dialect = Dialect("derived", (Opener(first, head=(*head, ws()), look=(peek("["),)),), PYTHON, pythonic_calls, "",
                      closers=(closer,) if closer else (),
                      doc=f"derived: a Python list of calls after {opener!r}{', then ' + repr(closer) if closer else ''}")
    return Derivation(dialect, dialect.doc.removeprefix("derived: "))


def _derive_native(render: Renderings, shape: Native, one: str, call: Call) -> Derivation:
    placed = layout(render, shape, one, call)
    so, sc = placed.section_open.strip(), placed.section_close.strip()
    if sc and not so and not sc.startswith("]"):
        sc = ""  # a closer with no opener is the turn's end
    co, cc = placed.call_open.strip(), placed.call_close.strip()
    listed = so.endswith("[") and sc.startswith("]") and placed.joiner.strip() in (",", "")
    if listed:
        so, sc = so[:-1].rstrip(), sc[1:].lstrip()
    if so and co or sc and cc:
        raise NotDerived("JSON calls with markup both around the section and around each call")
    opener, end = (so, sc) if listed or so or sc else (co, cc)
    if HOLE in opener or HOLE in end:
        raise NotDerived("a call's id is written outside its JSON object")
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
        raise NotDerived("a bare JSON list of calls cannot be told from prose")
    owners = span_owners([one, render.renderer.prompt(tools=DERIVED_TOOLS)])
    dialect = Dialect("derived", openers, JSON, decoder, "", end=(end,) if end else (), several=True, separators=",;",
                      aliases=owners,
                      doc=f"derived: JSON calls ({fields}){' in a list' if listed else ''} after "
                          f"{opener or 'a line start'!r}{', then ' + repr(end) if end else ''}")
    return Derivation(dialect, dialect.doc.removeprefix("derived: "))


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


def _section(placed: Layout) -> tuple[str, str]:
    """The section's opener and closer; a closer with no opener is the turn's end (a stop token), not markup."""
    so, sc = placed.section_open.strip(), placed.section_close.strip()
    return (so, sc) if so else ("", "")


def _derive_named(render: Renderings, shape: Named, one: str, call: Call) -> Derivation:
    placed = layout(render, shape, one, call)
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
            raise NotDerived("the markup between a call's name and its arguments is not one pattern")
        between = found
    between = holes(between)
    so, sc = _section(placed)
    call_open, call_close = pieces(placed.call_open), pieces(placed.call_close)
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
            raise NotDerived("the calls' section has an opener and no closer")
        item_open, item_close = call_open.pieces[0].strip(), _last_tag(call_close.pieces[-1].strip())
        if not item_open or not item_close or placed.joiner.strip():
            raise NotDerived("the calls in a section are not each between markers of their own")
        if HOLE in so or HOLE in sc:
            raise NotDerived("a call's id is written in the section's markup")
        if not (item_open.startswith("<") and sc.startswith("<")):
            raise NotDerived("a call's or the section's markup is not a tag (a tag body reads tags beginning with '<')")
        first, head = _head_parts(so)
        decoder = MarkedCalls(call_open, between, call_close, params)
        dialect = Dialect("derived", (Opener(first, head=(*head, ws())),), TAGGED, decoder, "", end=(sc,),
                          item=(item_open, item_close), **common,
                          doc=f"derived: calls between {so!r} and {sc!r}, each between {item_open!r} and "
                              f"{item_close!r}: the name, then {kind}")
        return Derivation(dialect, dialect.doc.removeprefix("derived: "))
    co, cc = placed.call_open.strip(), placed.call_close.strip()
    if not co or not call_open.fixed:
        raise NotDerived("a call's markup does not begin with fixed text")
    if HOLE in cc:
        raise NotDerived("a call's id is written after its arguments")
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
        raise NotDerived("a call with no tag after its arguments cannot end (a tag body ends at a tag)")
    decoder = MarkedCalls(Pattern(("",)), between, Pattern((cc[: len(cc) - len(end)],)), params)
    dialect = Dialect("derived", (Opener(first, head=(*head, ws())),), TAGGED, decoder, "", end=(end,), **common,
                      doc=f"derived: calls between {co!r} and {cc!r}: the name, then {kind}")
    return Derivation(dialect, dialect.doc.removeprefix("derived: "))
