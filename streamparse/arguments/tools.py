"""A request's tools: each tool's name, read as the list is given, and its parameters schema.

Invariant: a tool list is read by one rule, for both readings here. Every tool must have a string name (an OpenAI
tool's ``function.name``, or a bare or Anthropic tool's ``name``), else ``ValueError`` as the list is read. A name
maps to the schema of the last tool of that name, names in the order they first appear: the tool's ``parameters``
(else its ``input_schema``) dict as given, another mapping copied into a dict, anything else (``null``, missing,
empty, not a mapping) ``{}``. ``tool_schemas`` reads every schema at once; ``ToolSchemas`` reads each on first use
and gives the same object every time after. ``declared_names`` gives the names as markup is checked against them
(any case), made once for equal names.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping  # isinstance against these is much cheaper than typing's
from typing import Any, final

__all__ = ["DeclaredNames", "ToolSchemas", "declared_names", "read_tools", "tool_schemas"]

_new = object.__new__
_NONE = object()  # a key not there (``parameters: null`` is there: it is read as no schema)


def _names(tools: tuple[Any, ...]) -> list[str]:
    """Each tool's name, in order, repeats kept: ValueError for a tool with none."""
    try:  # every tool in the OpenAI shape: one step per tool, no call
        names = [t["function"]["name"] for t in tools]
        "".join(names)  # TypeError unless every name is a string
        return names
    except Exception:  # noqa: BLE001 - any other list is read tool by tool, which says what is wrong
        pass
    names = []
    for tool in tools:
        fn = _function_of(tool)
        name = fn.get("name") if type(fn) is dict or isinstance(fn, Mapping) else None
        if type(name) is not str and not isinstance(name, str):
            raise ValueError(f"a tool needs a name: {tool!r}")
        names.append(name)
    return names


def _function_of(tool: Any) -> Any:
    """The object holding a tool's name: its ``function``, else the tool itself (None: not a mapping).
    (``type(x) is dict`` first: an isinstance check against Mapping, an ABC, costs far more)"""
    return tool.get("function", tool) if type(tool) is dict or isinstance(tool, Mapping) else None


def _schema_of(tool: Any) -> dict[str, Any]:
    """A tool's parameters schema (module invariant). A dict is kept as given, never changed here: the same object
    in every request lets the typing tables read for it be found again by identity."""
    fn = tool.get("function", tool) if type(tool) is dict or isinstance(tool, Mapping) else None  # _function_of
    if type(fn) is not dict and not isinstance(fn, Mapping):
        return {}
    schema = fn.get("parameters", _NONE)
    if schema is _NONE:
        schema = fn.get("input_schema")
    if type(schema) is dict and schema:
        return schema
    return {} if not schema else (dict(schema) if isinstance(schema, Mapping) else {})


def tool_schemas(tools: Iterable[Mapping[str, Any]] | None) -> dict[str, dict[str, Any]] | None:
    """Map tool name -> its parameters JSON schema, every schema read now.

    Accepts OpenAI tools (``{"type": "function", "function": {...}}``), bare
    function dicts (``{"name", "parameters"}``) and Anthropic tools
    (``{"name", "input_schema"}``). ``None`` means "tools unknown".
    """
    if tools is None:
        return None
    listed = tuple(tools)
    return dict(zip(_names(listed), map(_schema_of, listed)))


def read_tools(tools: Iterable[Mapping[str, Any]] | ToolSchemas | None) -> ToolSchemas | None:
    """``tool_schemas`` as a parser is built: the names now, each schema on first use. ``None``: tools unknown.
    Tools read already (a ``ToolSchemas``: a request's edge may read them once) are given back as they are."""
    if type(tools) is ToolSchemas:
        return tools
    if tools is None:
        return None
    read = _new(ToolSchemas)  # ``ToolSchemas(tools)`` without a call of its __init__ (one a parser built)
    read.tools = listed = tuple(tools)
    read.names = _names(listed)
    read._by_name = read._schemas = None
    return read


@final
class ToolSchemas(Mapping[str, dict[str, Any]]):
    """Tool name -> its parameters JSON schema, as ``tool_schemas`` maps them. Built, it has read each tool's name
    (``names``: as listed, repeats kept; ``ValueError`` for a tool with none) and kept the list (copied, each tool
    as given); the map of names is made on first lookup, and each schema, read from its tool, on its own first
    lookup (so a tool changed in place before then is read as it is then)."""

    __slots__ = ("names", "tools", "_by_name", "_schemas")

    def __init__(self, tools: Iterable[Mapping[str, Any]]):
        self.tools = tuple(tools)  # (a tuple given is kept: it cannot change)
        self.names = _names(self.tools)  # each tool's name, in order, repeats kept
        self._by_name: dict[str, Any] | None = None  # name -> the last tool of that name
        self._schemas: dict[str, dict[str, Any]] | None = None  # name -> its schema, read (made with the first)

    def _index(self) -> dict[str, Any]:
        by_name = self._by_name
        if by_name is None:
            by_name = self._by_name = dict(zip(self.names, self.tools))
        return by_name

    def __getitem__(self, name: str) -> dict[str, Any]:
        schemas = self._schemas
        if schemas is None:
            schemas = self._schemas = {}
        schema = schemas.get(name)
        if schema is None:
            schema = schemas[name] = _schema_of(self._index()[name])
        return schema

    def get(self, name: str, default: Any = None) -> Any:
        schemas = self._schemas
        if schemas is None:
            schemas = self._schemas = {}
        schema = schemas.get(name)
        if schema is None:
            by_name = self._by_name
            if by_name is None:
                by_name = self._by_name = dict(zip(self.names, self.tools))
            if name not in by_name:
                return default
            schema = schemas[name] = _schema_of(by_name[name])
        return schema

    def __contains__(self, name: object) -> bool:
        by_name = self._by_name
        if by_name is None:
            by_name = self._by_name = dict(zip(self.names, self.tools))
        return name in by_name

    def __iter__(self) -> Iterator[str]:
        return iter(self._index())

    def __len__(self) -> int:
        return len(self._index())

    def __bool__(self) -> bool:
        return bool(self.names)

    def __repr__(self) -> str:
        return f"ToolSchemas({list(self.names)!r})"


class DeclaredNames:
    """A tool list's names as markup is checked against them, any case: lowercase -> as declared (of names equal but
    for case, the last one listed; repeats read once), the longest lowercase name's length, and (on first use)
    every prefix of every lowercase name, the empty one too (a name cut by a delta's end)."""

    __slots__ = ("lowered", "longest", "_prefixes")

    def __init__(self, declared: tuple[str, ...]):
        self.lowered = {t.lower(): t for t in dict.fromkeys(declared)}
        self.longest = max(map(len, self.lowered), default=0)
        self._prefixes: frozenset[str] | None = None

    @property
    def prefixes(self) -> frozenset[str]:
        if self._prefixes is None:
            self._prefixes = frozenset(n[:k] for n in self.lowered for k in range(len(n) + 1))
        return self._prefixes


def declared_names(declared: tuple[str, ...]) -> DeclaredNames:
    """The ``DeclaredNames`` of these names, made once for every parser given them (a bounded cache: agents send
    the same tools with every request)."""
    names = _DECLARED.get(declared)
    if names is None:
        if len(_DECLARED) >= 64:
            _DECLARED.clear()
        names = _DECLARED[declared] = DeclaredNames(declared)
    return names


_DECLARED: dict[tuple[str, ...], DeclaredNames] = {}
