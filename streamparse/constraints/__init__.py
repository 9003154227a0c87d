"""Constrained decoding aimed at what streamparse prompted: calls in one dialect, to the declared tools only.

From `(dialect, tools, tool_choice, parallel_tool_calls)` it builds the fields a serving engine decodes
under; every call text the constraint allows is one the dialect's parser reads back as the same call, and
every call the dialect's renderer writes for valid arguments is allowed (tested with a real grammar engine).

```python
from streamparse.constraints import build_constraint

c = build_constraint("hermes", tools, tool_choice="auto", parallel_tool_calls=True, backend="llamacpp")
if c is not None:                      # None: nothing to constrain (tool_choice none, no tools,
    body.update(c.request_fields())   # or a dialect without a grammar: unsupported_reason(d))
```

``tools``: OpenAI, bare or Anthropic tool dicts. ``tool_choice``: OpenAI or Anthropic, a string or
a dict, or ``prompting.ToolChoice`` (pass its ``parallel`` as ``parallel_tool_calls``). A named
tool that is not in ``tools`` raises ValueError.

- ``backend="llamacpp"``: ``grammar`` (GBNF). By default the grammar holds the free text before
  the first call itself (works on ``/v1/chat/completions``, which drops client lazy fields);
  ``lazy=True`` adds ``grammar_lazy``, ``grammar_triggers`` (one full-text pattern, integer
  ``type`` as the server reads it) and ``preserved_tokens``, with a grammar rooted at the call.
- ``backend="vllm"``: ``response_format`` = ``{"type": "structural_tag", "format": {"type":
  "triggered_tags", …}}`` (json_schema contents; ``qwen_xml_parameter`` for Qwen3-Coder;
  a ``grammar`` for pythonic arguments; a list block, ``[f(a=1), g(b=2)]``, holds several calls
  joined as the renderer joins them, or one with ``parallel_tool_calls`` false). When that tag's
  JSON would pass ``VLLM_TAG_LIMIT`` (64 KiB) and the whole-answer grammar is smaller, as for the
  line-start list forms (pythonic, xlam, phi4_mini), whose tag grows with the square of the tool
  count with parallel calls: ``structured_outputs`` = ``{"grammar": <GBNF>}`` (xgrammar's EBNF
  reader), linear in the tools. ``Constraint.form`` names the form sent, ``description`` says why.
- ``backend="sglang"``: the legacy ``response_format`` ``{"type": "structural_tag", "structures",
  "triggers"}`` when it can say it all (JSON arguments, no list block, ``tool_choice`` auto,
  parallel calls); otherwise ``ebnf`` with the whole-answer grammar.

What the constraint holds: tool names from ``tools`` only (the named one for a named
``tool_choice``); arguments following each schema (types, ``required``, ``enum``/``const``,
nested objects and arrays, ``additionalProperties`` read strictly as xgrammar does, escapes);
``required``/Anthropic ``any``/named: at least one call, not lazy; ``parallel_tool_calls=False``:
one call, then only whitespace; a leading ``<think>…</think>`` stays free. Triggers are the
dialect's taught opener, plus (``loose=True``) for hermes and llama3_json a fenced
```` ```json ```` block and a bare ``{"name": …}`` at a line start.
"""

# Invariant: sans-I/O and pure (dicts in, dicts out).
# Modules: ``gbnf`` (GBNF writer), ``values`` (JSON Schema to value rules), ``forms`` (each
# dialect's call tags, cut from its renderer), ``grammar`` (the whole grammar), ``structural``
# (structural tags), ``build`` (this API).

from __future__ import annotations

from .build import VLLM_TAG_LIMIT, Backend, Constraint, build_constraint, choice_mode, unsupported_reason
from .forms import UNSUPPORTED, Tag, tags_for

__all__ = ["Backend", "Constraint", "build_constraint", "choice_mode", "unsupported_reason", "UNSUPPORTED", "Tag",
           "tags_for", "VLLM_TAG_LIMIT"]
