"""Events produced by the streaming core.

Every event has a ``type`` string so that callers can dispatch without
isinstance checks. ``Event`` is a discriminated union: each class declares
``type`` as a ``ClassVar`` holding one ``Literal``, so ``if event.type ==
"tool_call":`` (or ``match event:``) narrows the event in mypy and pyright. A
class attribute rather than a field costs nothing per event (the parser makes
one per released piece of text) and leaves construction, equality, ``repr`` and
``dataclasses.fields`` to the data fields alone.

Whole calls (``ToolCall``) are the default output; the ids
and indexes are allocated when a block is *recognised*, so a later option can
announce a call (name first) and stream its arguments under the same id.

Invariant: events are plain data, built by the parser and never changed by it once released; each
class's ``type`` is a single literal that no two classes share.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable, Literal, Union


@dataclass(slots=True)
class TextDelta:
    """Plain text the model wrote, released as soon as it cannot be markup."""

    text: str
    type: ClassVar[Literal["text"]] = "text"


@dataclass(slots=True)
class ReasoningDelta:
    """Text inside ``<think>…</think>``: reasoning, never parsed for calls."""

    text: str
    type: ClassVar[Literal["reasoning"]] = "reasoning"


@dataclass(slots=True)
class ToolCall:
    """One complete tool call.

    ``arguments`` is the JSON text of an object (what OpenAI's wire format
    carries); ``parsed_arguments`` gives it back as a dict.
    """

    index: int
    id: str
    name: str
    arguments: str
    dialect: str = ""
    type: ClassVar[Literal["tool_call"]] = "tool_call"

    @property
    def parsed_arguments(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.arguments)  # always an object: the parser only emits objects
        return parsed


@dataclass(slots=True)
class ToolCallStart:
    """A call begins (``stream_arguments=True``): its name is known and allowed. Its arguments
    follow as ``ToolCallDelta`` events with the same ``index``, then the ``ToolCall`` itself."""

    index: int
    id: str
    name: str
    dialect: str = ""
    type: ClassVar[Literal["tool_call_start"]] = "tool_call_start"


@dataclass(slots=True)
class ToolCallDelta:
    """A piece of a started call's arguments JSON. The pieces of one call, joined, are exactly
    its ``ToolCall.arguments``."""

    index: int
    arguments_fragment: str
    type: ClassVar[Literal["tool_call_delta"]] = "tool_call_delta"

    @property
    def fragment(self) -> str:
        return self.arguments_fragment


@dataclass(slots=True)
class Diagnostic:
    """Something worth knowing that changed nothing in the output's meaning:
    a block that was repaired, rejected (and released as text), or cut by a limit.

    ``code`` is a stable identifier (``details`` holds ``name``, the tool, when one is known):

    - ``repaired``: a block read only after repair (JSON fixed up; ``details.removed``: the ``//`` and
      ``/* */`` comments taken out, as written), or arguments written as text given to a parameter;
    - ``coerced``: a value changed to fit its schema, the call kept: its type (``25`` given as ``"25"`` to a
      string parameter), or its spelling to the enum's (``"metric"`` -> ``"Metric"``, ``details.reason``
      ``"enum spelling"``); ``details``: ``parameter`` (a path: ``unit``, ``options.mode``, ``tags[0]``),
      ``written`` and ``value`` (short JSON text);
    - ``enum_mismatch``: a value outside its schema's ``enum``, kept as written with the call;
      ``details``: ``parameter``, ``value``, ``enum``;
    - ``type_mismatch``: a value of a type its schema does not declare, that no coercion could make fit
      (``"2 * math.pi"`` written for a number), kept as written with the call; ``details``: ``parameter``,
      ``value``, ``type``;
    - ``rejected``: a block that does not read as a call, kept as text;
    - ``empty_block``: a block with nothing but whitespace between its opener and its end marker (Kimi's empty
      tool section): only markup, so it is dropped;
    - ``unknown_tool``: a call to a tool that was not offered, kept as text (``details.names``);
    - ``missing_required``: a call without a required argument, kept (``details.missing``);
    - ``block_too_large``, ``too_many_calls``: a limit reached, the rest kept as text;
    - ``incomplete``: a call cut off (by the end of the stream or a limit);
    - ``truncated``: a stream cut off (max tokens) inside a call block: its unfinished text (``details.text``)
      left neither as a call nor as text;
    - ``too_deep``: a value nested past the depth limit;
    - ``mid_line``: a bare pythonic call to a declared tool written after text on its line (``Sure:
      [get_weather(…)]``), kept as text (the list is read at a line start only), reported right after its ``(``.
    """

    code: str
    message: str
    dialect: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    type: ClassVar[Literal["diagnostic"]] = "diagnostic"


Event = Union[TextDelta, ReasoningDelta, ToolCall, Diagnostic, ToolCallStart, ToolCallDelta]

class ParseResult:
    """Events gathered into what a whole answer holds: its text, reasoning, calls and diagnostics."""

    __slots__ = ("content", "tool_calls", "reasoning", "diagnostics")

    def __init__(self, events: Iterable[Event]):
        text: list[str] = []
        reasoning: list[str] = []
        self.tool_calls: list[ToolCall] = []
        self.diagnostics: list[Diagnostic] = []
        for ev in events:
            if isinstance(ev, TextDelta):
                text.append(ev.text)
            elif isinstance(ev, ReasoningDelta):
                reasoning.append(ev.text)
            elif isinstance(ev, ToolCall):
                self.tool_calls.append(ev)
            elif isinstance(ev, Diagnostic):
                self.diagnostics.append(ev)
        self.content: str = "".join(text)
        self.reasoning: str = "".join(reasoning)

    def __repr__(self) -> str:
        return f"ParseResult(content={self.content!r}, tool_calls={self.tool_calls!r})"
