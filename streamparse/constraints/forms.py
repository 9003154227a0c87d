"""How each dialect writes one call, as tags: ``begin`` (with the tool's name) + arguments + ``end``.

Invariant: a tag's ``begin`` and ``end`` are cut out of what ``streamparse.dialects.render`` writes
for that dialect, so a constraint never teaches markup the parser does not read; ``trigger`` is a
prefix of ``begin`` (the opener the dialect's prompt teaches, or a form small models write instead).
Dialects whose calls cannot be cut this way get no tags and a reason (``UNSUPPORTED``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from ..dialects import DIALECTS, SPANS
from ..dialects.markup import marker
from ..dialects.render import RENDERERS
from ..dialects.xml_family import XmlCall

__all__ = ["Tag", "tags_for", "UNSUPPORTED", "supported", "THINK", "THINK_END"]

# The reasoning span every dialect enables (dialects.SPANS' one span of no dialect): opener and closer.
THINK, THINK_END = next((s.opener, s.closers[0]) for s in SPANS if not s.dialect and s.kind == "reasoning")

ArgStyle = Literal["json", "qwen_xml", "python"]

_NAME = "zqToolNamez"  # a sentinel name the renderers write as is
_ARGS = {"\x00": 0}  # sentinel arguments: JSON-dumped as {"\u0000": 0}, written raw by text dialects
_ARGS_JSON = '{"\\u0000": 0}'

UNSUPPORTED: dict[str, str] = {
    "glm45": "values between <arg_key>/<arg_value> tags: no grammar written for them yet",
    "minimax_m2": "values in <parameter name=…> tags: no grammar written for them yet",
    "deepseek_v32": "DSML parameters with string=true|false: no grammar written for them yet",
    "gemma4": "Gemma's own value syntax (<|\"|> quotes, bare keys): no grammar written for it yet",
    "functiongemma": "Gemma's own value syntax (<escape> quotes, bare keys): no grammar written for it yet",
    "olmo3": "bare pythonic lines inside <function_calls>: no grammar written for them yet",
    "kimi_k3": "XTML arguments typed by their type= attribute: no grammar written for them yet",
    "claude_xml": "values in <parameter name=…> tags: no grammar written for them yet",
    "llama31_builtin": "keyword arguments after TOOL.call(: no grammar written for them yet",
    "minicpm5": "values in <param name=…> tags (CDATA around some): no grammar written for them yet",
    "atem": "values in <atem:parameter name=…> tags: no grammar written for them yet",
    "gigachat35": "GCML parameters with string=true|false: no grammar written for them yet",
    "longcat_xml": "values between <longcat_arg_key>/<longcat_arg_value> tags: no grammar written for them yet",
    "k2_horizon": "values between <ifm|arg_key>/<ifm|arg_value> tags: no grammar written for them yet",
    "minimax_m3": "parameters as tags named after their keys, nested: no grammar written for them yet",
    "dots": "values in <parameter name=…> tags: no grammar written for them yet",
    "hy3": "values between <arg_key:opensource>/<arg_value:opensource> tags: no grammar written for them yet",
    "tool_use": "the name's closing tag precedes the arguments (<name>…</name>): not yet checked against "
                "llguidance's lexer, which misreads a '</' in free reasoning before </think>",
}


@dataclass(frozen=True)
class Tag:
    """One way to write a call to ``tool``: ``begin``, the arguments in ``style``, ``end``."""

    tool: str
    begin: str
    end: str
    style: ArgStyle
    trigger: str
    line_start: bool = False  # the trigger counts only at the start of a line (or of the text)
    loose: bool = False  # a form small models write instead of the taught one (fence, bare object)
    opens: int = 0  # ``begin``'s first ``opens`` characters open a list that may hold several calls…
    closes: int = 0  # …which ``end``'s last ``closes`` characters close
    joiner: str = ""  # what stands between two calls of that list ("" : one call per block)
    xml: XmlCall | None = None  # ``qwen_xml``: the XML-parameter markup the arguments are written in

    @property
    def inner(self) -> tuple[str, str]:
        """``begin`` and ``end`` of one call inside its list (the list's opener and closer cut off)."""
        return self.begin[self.opens:], self.end[: len(self.end) - self.closes]

    @property
    def list_key(self) -> tuple[str, str, str, bool]:
        """The list form this call stands in: its opener, closer, joiner, and whether it needs a line start
        (tags with equal keys share one list block)."""
        return self.begin[: self.opens], self.end[len(self.end) - self.closes:], self.joiner, self.line_start


def _listed(dialect: str, closed: bool) -> tuple[str, str, str]:
    """A list of calls after the grammar's ``_OPEN`` marker, and before its ``_CLOSE`` where the renderer writes one."""
    return marker(dialect, "_OPEN") + "[", "]" + (marker(dialect, "_CLOSE") if closed else ""), ", "


# Dialects whose block is a list of calls (the parser reads ``[f(a=1), g(b=2)]`` as two calls):
# (the list's opener as the renderer writes it, its closer, the separator). The markers are the grammars'.
LISTS: dict[str, tuple[str, str, str]] = {
    "pythonic": ("[", "]", ", "),
    "xlam": ("[", "]", ", "),
    **{d: _listed(d, False) for d in ("mistral", "granite", "phi4_mini")},
    **{d: _listed(d, True) for d in ("tools_array", "hunyuan", "nemotron", "lfm2", "cohere", "apertus")},
}


def xml_markup(dialect: str) -> XmlCall:
    """The XML-parameter markup ``dialect`` declares (a ``qwen_xml`` tag's)."""
    markup = DIALECTS[dialect].markup
    if not isinstance(markup, XmlCall):
        raise ValueError(f"{dialect} declares no XML-parameter markup")
    return markup


def supported(dialect: str) -> bool:
    return dialect in RENDERERS and dialect not in UNSUPPORTED


def _cut(dialect: str, name: str) -> tuple[str, str, ArgStyle] | None:
    """``(begin, end, style)`` of ``dialect``'s rendering of a call to ``name``, or None."""
    text = RENDERERS[dialect](_NAME, _ARGS)[0]
    if text.count(_ARGS_JSON) == 1:
        begin, end = text.split(_ARGS_JSON)
        style: ArgStyle = "json"
    elif dialect in ("qwen3_coder", "seed_oss"):
        markup = xml_markup(dialect)
        value_end = markup.value_close + "\n"
        begin, end = text[: text.index(markup.param_open)], text[text.index(value_end) + len(value_end):]
        style = "qwen_xml"
    elif dialect in ("pythonic", "lfm2"):
        begin, end = text.split("\x00=0")
        style = "python"
    else:
        return None
    if begin.count(_NAME) != 1 or _NAME in end:
        return None
    quoted = f'"{_NAME}"' in begin
    spelled = json.dumps(name, ensure_ascii=False)[1:-1] if quoted else name
    return begin.replace(_NAME, spelled), end, style


def _trigger(dialect: str, begin: str, name: str) -> tuple[str, bool]:
    """The opener of ``dialect`` that starts ``begin`` (longest first), and whether it needs a line start."""
    openers = sorted(DIALECTS[dialect].openers, key=lambda o: -len(o.text))
    for opener in openers:
        text = opener.text.replace("{name}", name)
        if begin.startswith(text):
            if opener.line_start:  # a bare "{" or "[": trigger on the text up to the name, so prose stays free
                at = begin.find(name, len(text))  # the name after the opener ("f" is also in "functools[")
                head = begin[:at] if at >= 0 else text
                return head[: head.index('"name"') + 6] if '"name"' in head else head, True
            return text, False
    return begin, False


def tags_for(dialect: str, tools: dict[str, Any], *, loose: bool = True) -> list[Tag]:
    """Every tag of ``dialect`` for each tool (``tools``: name → schema), taught forms first.

    With ``loose``, hermes and llama3_json also get the forms small models write when prompted
    in them: a fenced JSON block (```` ```json ````) and a bare call object at a line start, both
    read back by streamparse's llama3_json bare-object opener.
    """
    if not supported(dialect):
        return []
    tags: list[Tag] = []
    for name in tools:
        cut = _cut(dialect, name)
        if cut is None:
            return []
        begin, end, style = cut
        trigger, line_start = _trigger(dialect, begin, name)
        opener, closer, joiner = LISTS.get(dialect, ("", "", ""))
        listed = bool(joiner) and begin.startswith(opener) and end.endswith(closer)
        xml = xml_markup(dialect) if style == "qwen_xml" else None
        tags.append(Tag(name, begin, end, style, trigger, line_start,
                        opens=len(opener) if listed else 0, closes=len(closer) if listed else 0,
                        joiner=joiner if listed else "", xml=xml))
        if dialect == "qwen3_coder":  # the <tool_call> wrapper is optional for the parser
            markup = xml_markup(dialect)
            inner = begin[begin.index(markup.call_open):]
            tags.append(Tag(name, inner, end[: end.index(markup.call_close) + len(markup.call_close)], style,
                            markup.call_open, xml=markup))
    if loose and dialect in ("hermes", "llama3_json"):
        key = "arguments" if dialect == "hermes" else "parameters"
        for name in tools:
            head = "{" + f'"name": {json.dumps(name, ensure_ascii=False)}, "{key}": '
            tags.append(Tag(name, "```json\n" + head, "}\n```", "json", "```json", loose=True))
            tags.append(Tag(name, head, "}", "json", '{"name"', line_start=True, loose=True))
    return tags
