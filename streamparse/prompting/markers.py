"""The markers a dialect's tool-prompt template names: each read from the dialect's declaration, none written there.

Invariant: ``template_markers(d)`` maps every placeholder a template of ``d`` may use for ``d``'s own markup to the
text the declaration gives it, so the templates spell no marker of their own format:

- every plain terminal of the dialect's grammar (``dialects.markup.plain_terminals``), under the terminal's own
  name as the ``.lark`` file writes it (``${_OPEN}``, ``${_CALLS_END}``);
- for an XML-parameter family member (``XmlCall``): ``call_open``, ``name_close``, ``param_open``,
  ``value_close``, ``call_close`` and the tag words ``call`` and ``param``;
- for a key/value family member (``KvCall``): ``key_open``, ``value_close``, ``item_open``/``item_close`` (when
  calls are items) and the tag words ``key``, ``value``, ``item``, ``sep``;
- for either family: the wrapper (``nest_open``, ``nest_close``), the first opener (``opener``), the literals its
  head checks (``opener_head_1``, …) and the first end marker (``end``);
- the spans the dialect enables (``dialects.SPANS``), numbered per kind in their order: ``reasoning_1`` (the
  opener), ``reasoning_1_close`` (its first closer), ``content_1``, ``drop_1`` ….

Pure; computed once per dialect. A name absent from the declaration is absent here, so ``Template.substitute``
refuses a template that names it.
"""

from __future__ import annotations

import functools

from ..dialects import DIALECTS, SPANS
from ..dialects.kv_family import KvCall
from ..dialects.markup import plain_terminals
from ..dialects.spec import LIT
from ..dialects.xml_family import XmlCall

__all__ = ["template_markers"]


def _xml(markup: XmlCall) -> dict[str, str]:
    words = {"call_open": markup.call_open, "name_close": markup.name_close, "param_open": markup.param_open,
             "value_close": markup.value_close, "call_close": markup.call_close, "call": markup.call,
             "param": markup.param}
    if markup.cdata:
        words.update(cdata_open=markup.cdata_open, cdata_close=markup.cdata_close)
    return words


def _kv(markup: KvCall) -> dict[str, str]:
    words = {"key_open": markup.key_open, "value_close": markup.value_close, "key": markup.key, "value": markup.value}
    if markup.item_tags is not None:
        words.update(item_open=markup.item_tags[0], item_close=markup.item_tags[1], item=markup.item)
    if markup.sep:
        words.update(sep=markup.sep, sep_tag=markup.sep_tag)
    return words


@functools.cache
def template_markers(dialect: str) -> dict[str, str]:
    """The placeholders for ``dialect``'s own markers (a name ``dialects.DIALECTS`` holds), with their texts."""
    declared = DIALECTS[dialect]
    found = dict(plain_terminals(declared.grammar))
    family = declared.markup if isinstance(declared.markup, XmlCall) else declared.kv
    if isinstance(family, (XmlCall, KvCall)):
        found.update(_xml(family) if isinstance(family, XmlCall) else _kv(family))
        if declared.nest is not None:
            found.update(nest_open=declared.nest[0], nest_close=declared.nest[1])
        first = declared.openers[0]
        found["opener"] = first.text
        heads = [text for part in first.head if part.kind == LIT for text in part.texts[:1]]
        found.update((f"opener_head_{i}", text) for i, text in enumerate(heads, 1))
        if declared.end:
            found["end"] = declared.end[0]
    counts: dict[str, int] = {}
    for span in (s for s in SPANS if s.dialect == dialect):
        counts[span.kind] = counts.get(span.kind, 0) + 1
        found[f"{span.kind}_{counts[span.kind]}"] = span.opener
        if span.closers:
            found[f"{span.kind}_{counts[span.kind]}_close"] = span.closers[0]
    return found
