"""xgrammar, the grammar engine under vLLM and SGLang, for the constraint tests: its EBNF reader,
its structural tags, and a matcher that says whether a whole text is accepted.

Invariant: ``accepts`` answers what xgrammar's matcher answers for ``text`` fed at once, with no
stop token needed to end. xgrammar imports torch, so it is not in the ``test`` extra (pip would
pull CUDA torch); it comes with the engine comparators' install (bench/requirements-engines.txt,
CPU torch). The tests that import this module are skipped without it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

xgr = pytest.importorskip("xgrammar")

_COMPILER: Any = None


def accepts(grammar: Any, text: str) -> bool:
    """Whether ``grammar`` (an ``xgrammar.Grammar``) takes the whole of ``text`` and may end there."""
    global _COMPILER
    if _COMPILER is None:
        _COMPILER = xgr.GrammarCompiler(xgr.TokenizerInfo([]), cache_enabled=False)
    matcher = xgr.GrammarMatcher(_COMPILER.compile_grammar(grammar), terminate_without_stop_token=True)
    return bool(matcher.accept_string(text)) and bool(matcher.is_terminated())


def from_ebnf(text: str) -> Any:
    return xgr.Grammar.from_ebnf(text)


def from_structural_tag(tag: dict[str, Any]) -> Any:
    """The grammar of a current-shape structural tag, validated first by the pydantic model vLLM
    hands its ``format`` to."""
    xgr.StructuralTag.model_validate(tag)
    return xgr.Grammar.from_structural_tag(json.dumps(tag))


def from_vllm_fields(fields: dict[str, Any]) -> Any:
    """The grammar vLLM's xgrammar backend builds from the fields streamparse sends: a structural
    tag (``response_format``) or a GBNF grammar (``structured_outputs.grammar``, which vLLM hands to
    xgrammar's EBNF reader since it holds ``::=``)."""
    if "structured_outputs" in fields:
        grammar = fields["structured_outputs"]["grammar"]
        assert "::=" in grammar
        return from_ebnf(grammar)
    return from_structural_tag(fields["response_format"])
