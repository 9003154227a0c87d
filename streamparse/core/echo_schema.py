"""Where a streamed JSON value stands in its tool's schema, and the value typed there (``stream_json``).

Invariant: reads the echo's frame stack and never changes it; a value is typed and spelled exactly as
whole-call mode types it (``arguments.coerce_value``, ``arguments.review_values``).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..arguments.schema import Note, coerce_value, review_values

__all__ = ["KEY", "COLON", "VALUE", "NEXT", "Frame", "SchemaPosition"]

KEY, COLON, VALUE, NEXT = range(4)  # what a container expects next


class Frame:
    """One open container of the echoed value: its kind (``{`` or ``[``), what it expects next, its schema."""

    __slots__ = ("kind", "state", "schema", "key", "filled")

    def __init__(self, kind: str, schema: Any):
        self.kind, self.state, self.schema, self.key = kind, (KEY if kind == "{" else VALUE), schema, ""
        self.filled = False  # a member has been written into it


class SchemaPosition:
    """The part of ``JsonEcho`` that knows the schema at the current position (the echo sets the attributes)."""

    schema: Any
    fixes: list[Note]
    _stack: list[Frame]  # the echo's open containers, outermost first
    _live: bool
    _live_depth: int
    _call: bool

    def _typed(self, written: Any) -> Any:
        """A complete scalar typed by its schema (and spelled as its enum spells it); a change is noted in
        ``fixes`` as whole-call mode reports it (``arguments.review_values``)."""
        schema = self._schema_here()
        typed = coerce_value(written, schema)
        value, notes = review_values(written, typed, schema, self._path())
        self.fixes += [note for note in notes if note[0] == "coerced"]  # enum_mismatch: from the final arguments
        return value

    def _path(self) -> str:
        """The current member's parameter path inside the arguments object (``unit``, ``opts.mode``, ``tags[]``)."""
        path = ""
        for f in self._stack[self._live_depth - 1 :] if self._live else ():
            path += ("." if path else "") + f.key if f.kind == "{" else "[]"
        return path

    def _schema_here(self) -> Any:
        """The schema of a value at the current position (None where nothing is typed)."""
        if not self._stack:
            return None if self._call else self.schema
        f = self._stack[-1]
        schema = f.schema
        if not isinstance(schema, Mapping):
            return None
        sub = schema.get("properties") if f.kind == "{" else schema.get("items")
        if f.kind == "{":
            return sub.get(f.key) if isinstance(sub, Mapping) else None
        return sub if isinstance(sub, Mapping) else None
