"""The grammars define the dialects: the fast decoders must agree with them on well-formed blocks.

JSON-bodied dialects are decoded with ``json.loads`` (the grammar is the repair path and the
definition); the XML-parameter dialects (Qwen3-Coder, Seed-OSS, MiniMax) have a linear decoder
of their own. Here every rendered block is parsed both ways and the results compared.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest
from lark import Token, Tree
from lark.exceptions import LarkError

from budget import examples
from streamparse.arguments.grammar import load_grammar
from streamparse.dialects import DIALECTS, warm_up
from streamparse.arguments.schema import ArgumentError
from streamparse.dialects.decoders import check_json_grammar, pythonic_calls
from streamparse.dialects.spec import JSON
from streamparse.dialects.render import RENDERERS, render

KEYS = st.from_regex(r"[a-z_][a-z0-9_]{0,11}", fullmatch=True)
# Values as an agent writes them: prose, code with indentation, markup of its own, unicode.
TEXT_VALUES = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40).map(str.strip).filter(bool),
    st.sampled_from([
        "def f(x):\n    return x < 3 and x > 1",
        "<p>a &amp; b</p>",
        "line one\n\n    indented line\nlast",
        "São Paulo 東京 🌧",
        "<parameter=path>\nnested.txt\n</parameter>",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nX\n</parameter>\n</function>\n</tool_call>",
    ]),
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=8,
)


def _qwen3_tree_params(tree: Tree) -> tuple[str, dict[str, str]]:
    function = next(tree.find_data("call"))
    head = str(function.children[0]).strip()  # (a tag's token holds the whitespace before it)
    params = {}
    for param in function.find_data("param"):
        key = str(param.children[0]).strip()[len("<parameter=") : -1]
        params[key] = str(param.children[1]) if len(param.children) > 1 else ""
    return head[len("<function=") : -1], params


def _minimax_tree_params(tree: Tree) -> tuple[str, dict[str, str]]:
    invoke = next(tree.find_data("call"))
    name = str(invoke.children[0]).split('"')[1]
    params = {}
    for param in invoke.find_data("param"):
        key = str(param.children[0]).split('"')[1]
        params[key] = str(param.children[1]) if len(param.children) > 1 else ""
    return name, params


def _qwen3_item(name: str, params: dict[str, str]) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<function={name}>\n{body}</function>"


def _minimax_item(name: str, params: dict[str, str]) -> str:
    body = "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in params.items())
    return f'<invoke name="{name}">\n{body}</invoke>'


@settings(max_examples=examples(200), deadline=None)
@given(name=KEYS, params=st.dictionaries(KEYS, TEXT_VALUES, max_size=4))
def test_qwen3_decoder_agrees_with_the_grammar(name: str, params: dict[str, str]) -> None:
    item = _qwen3_item(name, params)
    by_grammar = _qwen3_tree_params(load_grammar("qwen3_coder").parse(item))
    (by_decoder,), _ = DIALECTS["qwen3_coder"].decode(item, None)
    assert by_decoder == by_grammar
    assert by_decoder[1] == {k: f"\n{v}\n" for k, v in params.items()}  # raw values: layout is the schema's business


@settings(max_examples=examples(200), deadline=None)
@given(name=KEYS, params=st.dictionaries(KEYS, TEXT_VALUES.filter(lambda v: "<parameter" not in v), max_size=4))
def test_minimax_decoder_agrees_with_the_grammar(name: str, params: dict[str, str]) -> None:
    item = _minimax_item(name, params)
    by_grammar = _minimax_tree_params(load_grammar("minimax_m2").parse(item))
    (by_decoder,), _ = DIALECTS["minimax_m2"].decode(item, None)
    assert by_decoder == by_grammar == (name, params)


def test_seed_reads_each_function_as_qwen3_does() -> None:
    block = RENDERERS["seed_oss"]("get_weather", {"city": "Paris", "days": 2})[0]
    item = block[block.index("<function="): block.index("</function>") + len("</function>")]
    assert load_grammar("seed_oss").parse(item) == load_grammar("qwen3_coder").parse(item)
    assert _qwen3_tree_params(load_grammar("seed_oss").parse(item)) == (
        "get_weather", {"city": "\nParis\n", "days": "\n2\n"})


JSON_DIALECTS = sorted(d.name for d in DIALECTS.values() if d.body == JSON)


@settings(max_examples=examples(150), deadline=None)
@given(dialect=st.sampled_from(JSON_DIALECTS), args=st.dictionaries(KEYS, JSON_VALUES, max_size=4))
def test_json_dialect_grammars_read_what_the_fast_path_reads(dialect: str, args: dict[str, Any]) -> None:
    """Each JSON dialect's grammar parses its rendered block, and the JSON values it finds are the ones
    json.loads finds in the same block."""
    block = render(dialect, "get_weather", args)  # (named-only dialects' renderers too)
    values = check_json_grammar(DIALECTS[dialect].grammar, block)
    expected = json.dumps(args, sort_keys=True)
    dumped = [json.dumps(v, sort_keys=True) for v in values]
    # The arguments object is inside the value(s) the grammar found (as a call object, a list, or itself).
    assert any(expected in d or d == expected for d in dumped), (dialect, block, values)


def test_every_declared_grammar_builds_and_names_its_source() -> None:
    warm_up()
    from streamparse.arguments.grammar import grammar_text

    for dialect in DIALECTS.values():
        header = grammar_text(dialect.grammar).split("\n%", 1)[0]
        assert "Source:" in header or "source:" in header.lower(), dialect.name
    assert isinstance(load_grammar("relaxed_json").parse("{a: 1}"), (Tree, Token))


@pytest.mark.parametrize("grammar, block, names", [
    # SGLang's base-detector test: two call objects in one <tool_call>, a comma between them.
    ("hermes", '<tool_call>{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}} </tool_call>', ["a", "b"]),
    ("hermes", '<tool_call>{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {}}</tool_call>', ["a", "b"]),
    # MiniMax-M1 (vLLM minimax): one call object per line inside <tool_calls>.
    ("hunyuan", '<tool_calls>\n{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {}}\n</tool_calls>', ["a", "b"]),
    ("hunyuan", '<tool_calls>[{"name": "a", "arguments": {}}]</tool_calls>', [["a"]]),
])
def test_json_grammars_read_several_calls_in_one_tag(grammar: str, block: str, names: list[Any]) -> None:
    values = check_json_grammar(grammar, block)
    assert [[v["name"] for v in value] if isinstance(value, list) else value["name"] for value in values] == names


def test_hermes_grammar_takes_one_comma_between_calls_not_two() -> None:
    with pytest.raises(LarkError):
        check_json_grammar("hermes", '<tool_call>{"name": "a", "arguments": {}},, {"name": "b", "arguments": {}}</tool_call>')


def _hex_grouped(n: int) -> str:
    return ("-" if n < 0 else "") + f"0x{abs(n):_x}"  # 0x1_0000_0000


_INT_FORMS = [hex, oct, bin, str, lambda n: f"{n:_}", _hex_grouped]


@settings(max_examples=examples(200), deadline=None)
@given(n=st.integers(-(10**30), 10**30), form=st.sampled_from(_INT_FORMS))
def test_pythonic_integers_read_as_python_reads_them(n: int, form: Any) -> None:
    """0x1F, 0o17, 0b101 and 1_000 are Python literals (vLLM's pythonic parser takes them through ast)."""
    literal = form(n)
    calls, _ = pythonic_calls(f"[f(a={literal})]", None)
    assert calls == [("f", {"a": ast.literal_eval(literal)})]


@pytest.mark.parametrize("literal", ["1_", "1__0", "1._5", "1_.5", "0x", "0x1F_", "0b2", "1e999", "0o8"])
def test_pythonic_numbers_python_rejects_are_not_read(literal: str) -> None:
    with pytest.raises(ArgumentError):
        pythonic_calls(f"[f(a={literal})]", None)


@pytest.mark.parametrize("literal, value", [("1_0.2_5e1_0", 1_0.2_5e1_0), ("-2.5e-3", -2.5e-3), ("1.", 1.0), (".5", 0.5)])
def test_pythonic_floats_read_as_python_reads_them(literal: str, value: float) -> None:
    assert pythonic_calls(f"[f(a={literal})]", None)[0] == [("f", {"a": value})]
