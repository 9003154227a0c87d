"""Where the calls are in a chat template's renderings of probe calls, and the markup around them.

The probe calls differ in one thing at a time (the tool's name, the arguments given, a value's type, the number of
calls, the call's id). A call is found in a rendering as a JSON object (``Native``) or by its name (``Named``:
the arguments a JSON object after it, or keys and values in tags, ``tagged_params``); two calls in one rendering
tell the markup written once around all calls from the markup around each (``layout``). An id is written as
``HOLE``: where it stood, the markup has a hole.

Invariant: pure reading of rendered text (``Renderings`` renders through ``turns``); what cannot be told raises
``NotDerived`` with the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..dialects import SPANS
from .conversations import Renderer
from .derived_calls import TaggedParams
from .markup import Pattern, find_json, pattern_of, token_suffix
from .sandbox import TemplateError
from .turns import PromptState, TurnMarks, answer_text, common_prefix, cut_answer

__all__ = ["FIRST", "SECOND", "KEY1", "KEY2", "KEY3", "VAL1", "VAL2", "NUMBER", "HOLE", "DERIVED_TOOLS", "NotDerived",
           "Call", "Renderings", "span_owners", "Unit", "native_call", "Shape", "Native", "Named", "Layout", "layout",
           "tagged_params", "shared_start", "pieces", "holes"]

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


class NotDerived(Exception):
    """Why no declaration can be derived (the message)."""


Call = tuple[str, Mapping[str, Any]]


class Renderings:
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
        return trimmed(text, self.state)


def trimmed(text: str, state: PromptState) -> str:
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
class Unit:
    """One call in a rendering: ``start``..``end`` (its JSON object, or its name to the end of its arguments),
    and for a named call where its name ends and its arguments begin."""

    start: int
    end: int
    name_end: int = -1
    args_start: int = -1


def native_call(value: Any, tool: str, arguments: Mapping[str, Any]) -> tuple[str, str, bool] | None:
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


class Shape:
    """How one call is found in a rendering (per shape)."""

    kind = ""

    def unit(self, text: str, call: Call, start: int = 0) -> Unit:
        raise NotImplementedError


class Native(Shape):
    kind = "native"

    def __init__(self, fields: tuple[str, str, bool]):
        self.fields = fields

    def unit(self, text: str, call: Call, start: int = 0) -> Unit:
        found = find_json(text, lambda v: native_call(v, call[0], call[1]) is not None, start)
        if found is None:
            raise NotDerived(f"the call of {call[0]} is not a JSON object where one was before")
        return Unit(found.start, found.end)


class Named(Shape):
    """A call whose name is in the markup; ``args`` finds where its arguments end after the name."""

    def __init__(self, kind: str, params: TaggedParams | None = None):
        self.kind, self.params = kind, params

    def unit(self, text: str, call: Call, start: int = 0) -> Unit:
        at = text.find(call[0], start)
        if at < 0:
            raise NotDerived(f"the call of {call[0]} is not written")
        name_end = at + len(call[0])
        if self.kind == "json":
            args = find_json(text, lambda v: v == dict(call[1]), name_end)
            if args is None:
                raise NotDerived(f"the arguments of {call[0]} are not a JSON object after its name")
            return Unit(at, args.end, name_end, args.start)
        assert self.params is not None
        end, first = name_end, -1
        for key, value in call[1].items():
            k = text.find(key, end)
            v = text.find(str(value), k + len(key)) if k >= 0 else -1
            if v < 0:
                raise NotDerived(f"the argument {key} of {call[0]} is not written where expected")
            closer = self.params.closer(key)
            c = text.find(closer, v + len(str(value))) if closer else v + len(str(value))
            if c < 0:
                raise NotDerived(f"the value of {key} is not closed as the template closes values")
            first = k if first < 0 else first
            end = c + len(closer)
        key_at = text.rfind(self.params.key_open.strip(), name_end, first) if first >= 0 else -1
        return Unit(at, end, name_end, key_at if key_at >= 0 else end)


# --------------------------------------------------------------------------- the markup around the calls


@dataclass(frozen=True)
class Layout:
    section_open: str
    call_open: str
    call_close: str
    section_close: str
    joiner: str


def layout(render: Renderings, shape: Shape, one: str, call: Call) -> Layout:
    """The section's and the call's markup, from one call and from two calls (the second of the other tool)."""
    unit = shape.unit(one, call)
    before, after = one[: unit.start], one[unit.end:]
    second = (SECOND, call[1])
    try:
        two = render(call, second)
    except TemplateError:  # (Llama 3.1's: "This model only supports single tool-calls at once!")
        two = ""
    if SECOND not in two:  # the template writes one call a turn: all the markup is the call's
        return Layout("", before, after, "", "")
    a = shape.unit(two, call)
    b = shape.unit(two, second, a.end)
    if two[: a.start] != before or two[b.end:] != after:
        raise NotDerived("two calls are not written as one call is, twice")
    mid = two[a.end: b.start]  # the first call's close, the joiner, the second call's open
    closed = len(shared_start(after, mid))
    opened = min(token_suffix(before, mid), len(mid) - closed)
    return Layout(before[: len(before) - opened], before[len(before) - opened:], after[:closed], after[closed:],
                   mid[closed: len(mid) - opened])


def shared_start(a: str, b: str) -> str:
    return a[: common_prefix(a, b)]


def pieces(text: str) -> Pattern:
    """Markup with the ids' hole in it."""
    return Pattern(tuple(text.split(HOLE)))


def tagged_params(render: Renderings, one: str) -> TaggedParams:
    """Each argument's markup, from calls with no, one and two arguments, and one with a number."""
    two = render((FIRST, {KEY1: VAL1, KEY2: VAL2}))
    name_end = one.index(FIRST) + len(FIRST)
    k1, v1 = one.find(KEY1, name_end), one.find(VAL1, name_end)
    k2, v2 = two.find(KEY2, name_end), two.find(VAL2, name_end)
    t_k1, t_v1 = two.find(KEY1, name_end), two.find(VAL1, name_end)
    if min(k1, v1, k2, v2, t_k1, t_v1) < 0 or not k1 < v1 or not t_v1 < k2 < v2:
        raise NotDerived("the arguments are neither a JSON object nor written key before value")
    head = one[name_end:k1]  # the name's close and the first key's open
    key_close = one[k1 + len(KEY1): v1]
    between = two[t_v1 + len(VAL1): k2]  # value close, joiner, key open
    after = one[v1 + len(VAL1):]  # value close, call close...
    value_close = shared_start(between, after)  # what ends a value, whatever follows it
    key_open = between[len(value_close):]
    if not value_close.strip() or not key_open.strip() or not head.endswith(key_open):
        raise NotDerived("a key's or a value's markup is not the same for every argument")
    if key_open[:1].isspace() and head.endswith(key_open.lstrip()):
        key_open = key_open.lstrip()
    number = render((FIRST, {KEY3: NUMBER}))
    k3 = number.find(KEY3, name_end)
    v3 = number.find(str(NUMBER), k3 + len(KEY3)) if k3 >= 0 else -1
    close_pattern = Pattern((key_close,))
    if v3 >= 0 and number[k3 + len(KEY3): v3] != key_close:
        found = pattern_of([key_close, number[k3 + len(KEY3): v3]])
        if found is None or len(found.pieces) > 2:
            raise NotDerived("a key's markup depends on its value's type in more than one place")
        close_pattern = found
    if v3 >= 0 and not number[v3 + len(str(NUMBER)):].startswith(value_close.replace(KEY1, KEY3)):
        raise NotDerived("a value's closer depends on its type")
    return TaggedParams(key_open, close_pattern, tuple(value_close.split(KEY1)))


def holes(pattern: Pattern) -> Pattern:
    """A pattern with the ids' holes (``HOLE``) made holes too."""
    return Pattern(tuple(piece for p in pattern.pieces for piece in p.split(HOLE)))
