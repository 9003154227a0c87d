"""From a decoded item to ``ToolCall`` events: tool checks, schema typing, ids, the call limit.

Invariant: an item becomes calls all together or not at all. A failure is a
Diagnostic and no state changes, so the caller can release the item as text. One exception,
as a JSON array's elements are items of their own: a Python list that fails whole is judged
element by element, and when some elements are calls, each other element leaves as text, in
place, after its own diagnostic.
"""

from __future__ import annotations

import json
from json import encoder as _json_encoder
from typing import Any, Callable, Mapping

from .. import arguments as args_mod
from ..arguments.relaxed_json import comments_outside_strings
from ..arguments.schema import ArgumentError, UnparsedArguments, checked_types, declared_types, fits_types
from ..arguments.xml_values import strip_layout
from ..dialects.decoders import python_list_elements
from ..dialects.spec import PYTHON, TAGGED, Dialect
from .events import Diagnostic, Event, TextDelta, ToolCall
from .ids import fresh_id

__all__ = ["CallFactory", "new_call_id", "value_note"]

_STRING = ["string"]  # the declared types of a plain string parameter
_NO_TYPES: list[str] = []  # the declared types of a parameter the schema does not name
_NO_KEYS: frozenset[str] = frozenset()
_ENCODER = json.JSONEncoder(ensure_ascii=False)  # json.dumps(..., ensure_ascii=False)


def _not_json(o: Any) -> Any:
    raise TypeError(f"not JSON: {type(o).__name__}")


# A schema's JSON text (compact, as written: no sort), the key under which parsers share what they read from it;
# no check for cycles (a schema with one raises RecursionError: not shared).
_MAKE_ENCODER = getattr(_json_encoder, "c_make_encoder", None)  # None without the C accelerator: nothing is shared
_SCHEMA_TEXT = (_MAKE_ENCODER(None, _not_json, _json_encoder.encode_basestring, None, ":", ",", False, False, True)
                if _MAKE_ENCODER is not None else None)
_ARGUMENTS_TEXT = (_MAKE_ENCODER(None, _ENCODER.default, _json_encoder.encode_basestring, None, ": ", ", ", False, False,
                                 True) if _MAKE_ENCODER is not None else None)  # _ENCODER's own C encoder, made once
_SCALARS = ((bool, True), (int, 1), (float, 0.5), (str, ""), (type(None), None))  # a type, a value of it
_KINDS = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (type(None), "null"))  # JSON's names
_ANY: frozenset[type] = frozenset({object})  # compared by identity: "every value fits" (an empty set is a singleton)
_SHARED: dict[str, "_Tool"] = {}  # schema JSON text -> the tool read from it, for every parser (bounded)
_SHARED_MAX = 512  # entries held at once
_SHARED_MAX_CHARS = 4 << 20  # schema text held at once (its parsed copy and tables take a few times that)
_SHARE_MAX_CHARS = 64 << 10  # a larger schema is read for its parser alone, and freed with it
_shared_chars = 0  # the schema text _SHARED holds now
# A caller's schema object -> (it, the shared tool read from an equal copy): a library caller passes the same tools
# to every parse(), so the same dicts come back; an equality check against the copy stands in for the JSON text.
_BY_OBJECT: dict[int, tuple[Any, "_Tool"]] = {}
_BY_OBJECT_MAX = 64  # entries: it holds the callers' own objects, which a server makes anew for every request


def _of_kinds(kinds_by_key: dict[str, frozenset[type]] | None, arguments: dict[str, Any]) -> bool:
    """Is every value ``kinds_by_key`` names of one of its exact types? (None: no.)"""
    if kinds_by_key is None:
        return False
    for k, v in arguments.items():
        kinds = kinds_by_key.get(k)
        if kinds is not None and type(v) not in kinds:
            return False
    return True


class _Tool:
    """One tool's schema read once: what typing and checking a call's arguments look up per value.
    Each field gives exactly what the ``arguments`` function it stands in for would derive from the schema.
    ``has_enum``: the schema holds an ``enum`` anywhere (no enum, no enum check)."""

    __slots__ = ("schema", "props", "types", "strings", "top_fits", "required", "has_enum", "fits", "plain", "enums",
                 "exact")

    def __init__(self, schema: dict[str, Any], text: str | None = None):
        self.schema = schema
        self.has_enum = '"enum"' in (text if text is not None else json.dumps(schema, default=str))
        props = schema.get("properties")
        self.props: Any = props if type(props) is dict or isinstance(props, Mapping) else None
        self.types = {k: declared_types(v) for k, v in (self.props or {}).items()}  # as coerce_xml_value reads them
        self.strings = frozenset(k for k, types in self.types.items() if types == _STRING)  # typed as written
        self.top_fits = fits_types({}, checked_types(schema))  # mistyped() passes an object value down
        self.required = [k for k in schema.get("required") or [] if isinstance(k, str)]
        # per property: the exact types of the scalar values mistyped() finds nothing in (every value of them fits
        # its checked types; a scalar's schema is not walked), or _ANY (not a schema: nothing is ever found)
        self.fits = {k: frozenset(t for t, sample in _SCALARS if fits_types(sample, checked_types(v)))
                     if isinstance(v, Mapping) else _ANY for k, v in (self.props or {}).items()}
        # per property: the exact scalar types coerce_value() leaves as they are (declared, or an integer where a
        # number is), so typing changes nothing; None when the object itself may change (not an object schema
        # with properties, or an enum on the object)
        self.plain: dict[str, frozenset[type]] | None = None
        if self.props is not None and "object" in (declared_types(schema) or ["object"]) and "enum" not in schema:
            self.plain = {k: frozenset(t for t, kind in _KINDS if not types or kind in types
                                       or (kind == "integer" and "number" in types)) for k, types in self.types.items()}
        # the properties with an enum of their own: review_values() of a plain value finds nothing elsewhere
        self.enums = {k: v for k, v in (self.props or {}).items() if isinstance(v, Mapping) and "enum" in v}
        # per property: the exact types typing leaves as written (plain) that checking finds nothing in (fits), for
        # ``clean``; None when a call can be reviewed otherwise (enums of its own, an object mistyped as a whole)
        self.exact: dict[str, frozenset[type]] | None = None
        if self.plain is not None and not self.enums and self.top_fits:
            self.exact = {k: kinds if self.fits.get(k, _ANY) is _ANY else kinds & self.fits[k]
                          for k, kinds in self.plain.items()}

    def clean(self, arguments: dict[str, Any]) -> bool:
        """Are ``arguments`` typed as written and checked with nothing to say? Every value the schema names is
        of an ``exact`` type of its property, and every required key is there: ``settled``, no enum to review,
        nothing ``mistyped``, nothing missing (the one pass most calls need)."""
        exact = self.exact
        if exact is None:
            return False
        for k, v in arguments.items():  # (_of_kinds, inline: the one pass most calls need)
            kinds = exact.get(k)
            if kinds is not None and type(v) not in kinds:
                return False
        for k in self.required:
            if k not in arguments:
                return False
        return True

    def settled(self, arguments: dict[str, Any]) -> bool:
        """Does typing leave ``arguments`` as written? Every value the schema names is a scalar of a type its
        property declares (``plain``); a value it does not name is never changed."""
        return _of_kinds(self.plain, arguments)

    def review_enums(self, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[args_mod.Note]]:
        """``review_arguments`` of settled arguments: only a value with an enum of its own can be reported (or
        spelled as its enum spells it)."""
        notes: list[args_mod.Note] = []
        out = arguments
        for k, v in arguments.items():
            sub = self.enums.get(k)
            if sub is not None:
                fixed, found = args_mod.review_values(v, v, sub, k)
                if found:
                    notes += found
                    if fixed is not v:
                        out = {**out, k: fixed}
        return out, notes

    def mistyped(self, arguments: dict[str, Any]) -> list[args_mod.Note]:
        """``args_mod.mistyped(arguments, self.schema)``, skipping each value whose exact scalar type always fits
        its property (``fits``: nothing to find there)."""
        if not self.top_fits:
            return args_mod.mistyped(arguments, self.schema)
        props = self.props
        if props is None:
            return []
        notes: list[args_mod.Note] = []
        fits = self.fits
        for k, v in arguments.items():
            ok = fits.get(k, _ANY)  # (a key the schema does not name: nothing to find)
            if ok is not _ANY and type(v) not in ok:
                notes += args_mod.mistyped(v, props.get(k), k)
        return notes


def _encode(arguments: Any) -> str:
    """``_ENCODER.encode(arguments)`` without building its C encoder per call (arguments read from text hold no
    cycle: a nesting too deep raises RecursionError either way)."""
    return "".join(_ARGUMENTS_TEXT(arguments, 0))  # type: ignore[misc]  # (None: _encode is _ENCODER.encode)


if _ARGUMENTS_TEXT is None:  # (no C accelerator)
    _encode = _ENCODER.encode  # type: ignore[assignment]  # noqa: F811


def _read_tool(schema: dict[str, Any]) -> _Tool:
    """The tool read from ``schema``, shared by the parsers given an equal schema (agents send the same tools
    with every request): keyed by its JSON text, read from its own copy (so no caller's later change to its
    dicts reaches it), and used only for a schema equal to that copy (a tuple is not a list). A schema
    that is not plain JSON, or whose text passes _SHARE_MAX_CHARS, is read for this parser alone; what is
    shared is bounded in entries and in characters (clients may send large, ever-different schemas)."""
    seen = _BY_OBJECT.get(id(schema))
    if seen is not None and seen[0] is schema and seen[1].schema == schema:
        return seen[1]
    try:
        text = "".join(_SCHEMA_TEXT(schema, 0)) if _SCHEMA_TEXT is not None else None
    except (TypeError, ValueError, RecursionError):
        text = None
    if text is None or len(text) > _SHARE_MAX_CHARS:
        return _Tool(schema, text)
    tool = _SHARED.get(text)
    if tool is None:
        global _shared_chars
        if len(_SHARED) >= _SHARED_MAX or _shared_chars + len(text) > _SHARED_MAX_CHARS:
            _SHARED.clear()
            _BY_OBJECT.clear()
            _shared_chars = 0
        tool = _SHARED[text] = _Tool(json.loads(text), text)
        _shared_chars += len(text)
    if tool.schema != schema:
        return _Tool(schema, text)
    if len(_BY_OBJECT) >= _BY_OBJECT_MAX:
        _BY_OBJECT.clear()
    _BY_OBJECT[id(schema)] = (schema, tool)  # (held: its id is not reused while it is here)
    return tool


MAX_CALLS = 1000  # a parser's default limit of calls per stream
MAX_BLOCK_CHARS = 1 << 20  # and of characters per block (past it, the block is released as text)


def new_call_id() -> str:
    """An OpenAI-style call id (the default ``id_factory``): ``call_`` and 24 secure random hex digits (``ids``)."""
    return fresh_id("call_")


class CallFactory:
    """Numbers and types the calls of one stream."""

    def __init__(self, schemas: Mapping[str, dict[str, Any]] | None, max_calls: int, id_factory: Callable[[], str]):
        self.schemas = schemas  # None: tools unknown, any name goes
        self.max_calls = max_calls
        self.new_id = id_factory
        self.count = 0
        self._tools: dict[str, tuple[dict[str, Any], _Tool]] = {}  # tool name -> (its schema, read once)

    def _tool(self, name: str, schema: dict[str, Any]) -> _Tool:
        seen = self._tools.get(name)
        if seen is None or seen[0] is not schema:
            seen = self._tools[name] = (schema, _read_tool(schema))
        return seen[1]

    def schema(self, name: str) -> dict[str, Any] | None:
        schemas = self.schemas
        return schemas.get(name) if schemas is not None else None

    def reserve(self, name: str) -> tuple[int, str] | None:
        """A streamed call's index and id, if its name is allowed and the call limit not reached."""
        if (self.schemas is not None and name not in self.schemas) or self.count >= self.max_calls:
            return None
        self.count += 1
        return self.count - 1, self.new_id()

    def arguments_of(self, d: Dialect, item: str, head_name: str | None, name: str) -> tuple[str | None, str]:
        """The arguments JSON whole-call mode gives ``item`` (one call named ``name``), or ``(None, why not)``."""
        try:
            calls, _ = d.decode(item, head_name if d.body != TAGGED else None)
            if len(calls) != 1 or calls[0][0] != name:
                return None, "the item does not read as this one call"
            return self._typed(d, name, calls[0][1], check=False)[1], ""  # its caller checks the arguments
        except (ArgumentError, ValueError, RecursionError) as exc:
            return None, str(exc)[:200]

    def notes(self, d: Dialect, name: str, arguments: Any, enums: bool = True) -> list[Diagnostic]:
        """What the schema says of a call's final arguments: values outside their enum (unless ``enums`` is
        false: checked already), required ones missing."""
        schema = self.schema(name)
        if not schema:
            return []  # no schema, nothing to check
        return self._notes(d, name, self._tool(name, schema), arguments, enums)

    @staticmethod
    def _notes(d: Dialect, name: str, tool: _Tool, arguments: Any, enums: bool) -> list[Diagnostic]:
        schema = tool.schema
        out: list[Diagnostic] = []
        if isinstance(arguments, dict):
            if enums and tool.has_enum:
                _, found = args_mod.review_arguments(arguments, arguments, schema, text_values=True, fix_case=False)
                out += [value_note(d, name, note) for note in found]
            out += [value_note(d, name, note) for note in tool.mistyped(arguments)]
            missing = [k for k in tool.required if k not in arguments]
        else:
            missing = tool.required[:]
        if missing:
            out.append(Diagnostic("missing_required", f"{name}: missing required {missing}", d.name,
                                  {"name": name, "missing": missing}))
        return out

    def from_item(self, d: Dialect, item: str, head_name: str | None,
                  exact: bool = False) -> tuple[list[Event], int, Diagnostic | None]:
        """``(events, number of calls, None)`` or ``([], 0, why not)``. ``exact``: refuse an item that needs repair.
        The events of a Python list judged by element hold ``TextDelta`` for the elements that are not calls."""
        whole = self._from_item(d, item, head_name, exact)
        if whole[2] is None or d.body != PYTHON:
            return whole
        return self._by_element(d, item, exact) or whole

    def _by_element(self, d: Dialect, item: str, exact: bool) -> tuple[list[Event], int, None] | None:
        """A Python list that failed whole, element by element: None unless at least one element is a call."""
        elements = python_list_elements(item)
        if elements is None or len(elements) < 2:
            return None
        judged = []
        for element in elements:
            if not element:
                return None  # an empty element ("[f(), , g()]"): not a list of calls
            judged.append((element, self._from_item(d, f"[{element}]", None, exact)))
        if all(failure is not None for _, (_, _, failure) in judged):
            return None  # nothing was counted: the whole item's own failure stands
        events: list[Event] = []
        for element, (evs, _, failure) in judged:
            events += [failure, TextDelta(element)] if failure is not None else evs
        return events, sum(n for _, (_, n, _) in judged), None

    def _from_item(self, d: Dialect, item: str, head_name: str | None,
                   exact: bool) -> tuple[list[Event], int, Diagnostic | None]:
        try:
            calls, repaired = d.decode(item, head_name if d.body != TAGGED else None)
            if exact and repaired:
                return [], 0, Diagnostic("incomplete", "call cut off by the end of the stream: kept as text", d.name)
            schemas = self.schemas
            if schemas is not None:
                for name, _ in calls:  # (a loop, not a list made for every item: most names are declared)
                    if name not in schemas:
                        unknown = [name for name, _ in calls if name not in schemas]
                        return [], 0, Diagnostic("unknown_tool", f"unknown tool name(s) {unknown}: kept as text",
                                                 d.name, {"names": unknown})
            if self.count + len(calls) > self.max_calls:
                return [], 0, Diagnostic("too_many_calls", f"more than {self.max_calls} calls in one stream", d.name)
            typed = []
            for name, arguments in calls:
                typed.append(self._typed(d, name, arguments))
        except RecursionError:
            return [], 0, Diagnostic("too_deep", "nested too deeply to decode: kept as text", d.name)
        except (ArgumentError, ValueError) as exc:
            return [], 0, Diagnostic("rejected", str(exc), d.name, dict(getattr(exc, "details", {})))
        events: list[Event] = [self._repaired(d, item)] if repaired else []
        count, new_id, dialect = self.count, self.new_id, d.name
        for name, arguments_json, notes in typed:
            if notes:
                events += notes
            events.append(ToolCall(count, new_id(), name, arguments_json, dialect))
            count += 1
        self.count = count
        return events, len(typed), None

    @staticmethod
    def _repaired(d: Dialect, item: str) -> Diagnostic:
        """The ``repaired`` diagnostic of an item read only after repair, naming the comments it removed."""
        removed = [] if d.text_values else comments_outside_strings(item)
        if not removed:
            return Diagnostic("repaired", f"{d.name}: block repaired before parsing", d.name)
        return Diagnostic("repaired", f"{d.name}: block repaired before parsing; comments removed: {removed}",
                          d.name, {"removed": removed})

    def _typed(self, d: Dialect, name: str, arguments: Any, check: bool = True) -> tuple[str, str, list[Diagnostic]]:
        """Type the arguments by the tool's schema: (name, arguments as JSON text, diagnostics). ``check=False``:
        the final checks (:meth:`notes`) are left out, for a caller that makes them itself."""
        schemas = self.schemas
        schema = schemas.get(name) if schemas is not None else None
        tool = self._tool(name, schema) if schema else None
        notes: list[Diagnostic] = []
        if type(arguments) is dict and not d.text_values and tool is not None and tool.clean(arguments):  # (most calls)
            return name, _encode(arguments), notes
        if isinstance(arguments, UnparsedArguments):
            raw = str(arguments)
            arguments, why = args_mod.resolve_unparsed(raw, schema)
            why = why or f"arguments were text, not a JSON object: given whole to its one string parameter {list(arguments)}"
            notes.append(Diagnostic("repaired", f"{name}: {why}", d.name, {"name": name, "raw_arguments": raw}))
        written = arguments
        if d.text_values:
            if tool is not None:
                props, types, strings = tool.props or {}, tool.types, tool.strings
            else:
                props, types, strings = {}, {}, _NO_KEYS
            layout, typed = d.value_layout, {}
            for k, v in arguments.items():
                if not isinstance(v, str):  # (an object or array of text values, MiniMax-M3's: typed member by member)
                    typed[k] = args_mod.coerce_value(v, props[k]) if isinstance(v, (dict, list)) and k in props else v
                elif type(v) is str and (k not in types or k in strings):  # as written (less its layout)
                    typed[k] = strip_layout(v) if layout else v
                else:
                    typed[k] = args_mod.coerce_xml_value(v, props.get(k), layout, types.get(k, _NO_TYPES))
            arguments = typed
        elif tool is not None and type(arguments) is dict and tool.settled(arguments):
            if tool.enums:
                arguments, found = tool.review_enums(arguments)
                notes += [value_note(d, name, note) for note in found]
            if check:
                notes += self._notes(d, name, tool, arguments, False)
            return name, _encode(arguments), notes
        elif schema:
            arguments = args_mod.coerce_value(arguments, schema)
        if tool is not None and isinstance(arguments, dict) and (tool.has_enum or (not d.text_values
                                                                                   and arguments != written)):
            # typed (reported), and case-only enum mismatches spelled as the enum spells them
            arguments, found = args_mod.review_arguments(written, arguments, schema, d.text_values)
            notes += [value_note(d, name, note) for note in found]
        if check and tool is not None and not (type(arguments) is dict and tool.clean(arguments)):  # (no note)
            notes += self._notes(d, name, tool, arguments, False)
        return name, _encode(arguments), notes


def value_note(d: Dialect, name: str, note: args_mod.Note) -> Diagnostic:
    """A value the schema changed (``coerced``) or rules out (``enum_mismatch``, ``type_mismatch``), as a
    diagnostic naming it."""
    code, path, details = note
    if code == "coerced":
        message = f"{name}: {path} written as {details['written']} was given as {details['value']}"
    elif code == "type_mismatch":
        message = f"{name}: {path} = {details['value']} is not of type {details['type']}: kept as written"
    else:
        message = f"{name}: {path} = {details['value']} is not one of {', '.join(details['enum'])}: kept as written"
    return Diagnostic(code, message, d.name, {"name": name, "parameter": path, **details})
