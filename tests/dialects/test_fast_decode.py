"""The tag fast paths (dialects/fast_tags.py) give the grammar's exact result or decline.

Each property draws items two ways: in the plain shape (the fast path must read them,
and read them as the grammar does) and mutated (slices dropped, tag fragments put in,
letters swapped in case...): there the fast path may decline, but whatever it returns
must be exactly the grammar's ``(calls, repaired)``, and for Qwen3-Coder / MiniMax also
exactly the lenient decoder's, so that the fast path never changes what a stream gives.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any, Callable, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
import streamparse
from streamparse.arguments.schema import ArgumentError
from streamparse.dialects import DIALECTS
from streamparse.dialects.decoders import _TagCalls, grammar_decoder
from streamparse.dialects.xml_params import XmlParams
from streamparse.harness.workloads import build_workload, split

# The family's readers, all derived from one declared markup each (dialects/xml_family.py).
_QWEN3, _MINIMAX = DIALECTS["qwen3_coder"].markup, DIALECTS["minimax_m2"].markup
assert _QWEN3 is not None and _MINIMAX is not None
qwen3_calls, minimax_calls = DIALECTS["qwen3_coder"].decode, DIALECTS["minimax_m2"].decode
qwen3_fast, minimax_fast = _QWEN3.fast_item(), _MINIMAX.fast_item()
qwen3_grammar_calls, minimax_grammar_calls = _QWEN3.grammar_calls("qwen3_coder"), _MINIMAX.grammar_calls("minimax_m2")
_GLM = DIALECTS["glm45"].kv
assert _GLM is not None
glm_calls, glm_fast = DIALECTS["glm45"].decode, _GLM.fast
glm_grammar_calls = grammar_decoder("glm45", _TagCalls())  # the grammar alone, without the fast path

# The decoders as they were before the fast paths: the lenient XmlParams alone.
QWEN3_LENIENT = XmlParams(r"\s*<function=([^>\n]*)>", r"<parameter=([^>]*)>", r"</parameter>", r"</function>")
MINIMAX_LENIENT = XmlParams(r"""\s*<invoke\s+name\s*=\s*["']?([^"'>]*)["']?\s*>""",
                            r"""<parameter\s+name\s*=\s*["']?([^"'>]*)["']?\s*>""", r"</parameter>", r"</invoke>")

Decoder = Callable[[str, Optional[str]], Any]


def outcome(decoder: Decoder, text: str) -> Any:
    try:
        return decoder(text, None)
    except ArgumentError:
        return "rejected"


def agrees(fast: Callable[[str], Any], grammar: Decoder, lenient: Decoder | None, text: str) -> bool:
    """The fast path's result, when it gives one, is the grammar's and the lenient decoder's. True if it read the item."""
    got = fast(text)
    if got is None:
        return False
    assert got == outcome(grammar, text), text
    if lenient is not None:
        assert got == outcome(lenient, text), text
    return True


# --------------------------------------------------------------------------- strategies

ANY = st.characters(blacklist_categories=("Cs",))
WS = st.sampled_from(["", "\n", " ", "\n\n", " \t\n", "\r\n", "\t", "\u3000", "\x85", "\x1c", "\u2028"])
SOME_WS = WS.filter(bool)
FRAGMENTS = [
    "<", ">", "</", "=", '"', "'", "\n", " ", "&lt;", "</parameter", "</parameter>", "<parameter=", "<parameter=x>",
    "<parameter=>", '<parameter name="x">', "<parameter ", "</function>", "<function=f>", "</invoke>", '<invoke name="g">',
    "</PARAMETER>", "<Parameter=y>", "</Function>", "</functıon>", "<functİon=h>", "</arg_value>", "<arg_value>",
    "<arg_key>", "</arg_key>", "<tool_call>", "</tool_call>", '{"a": [1, "</parameter>"]}', "<div>a < b</div>",
]
FRAGMENTED = st.lists(st.sampled_from(FRAGMENTS) | st.text(ANY, max_size=4), max_size=6).map("".join)
JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.text(ANY, max_size=8),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                       max_leaves=6).map(lambda v: json.dumps(v, ensure_ascii=False, indent=None))
VALUES = st.one_of(st.just(""), st.text(ANY, max_size=30), FRAGMENTED, JSONISH,
                   JSONISH.map(lambda s: json.dumps(json.loads(s), indent=2)))
# Plain values: no '<' at all, or '<' that forms no tag of any of these dialects.
PLAIN_VALUES = st.one_of(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="<"), max_size=30),
                         st.sampled_from(["a < b", "<div>x</div>", "if x<3 and y>2:", "vector<int>", "<", "<<>>"]), JSONISH)
NAMES = st.text(ANY, min_size=1, max_size=12)
PLAIN_NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,15}", fullmatch=True)
LAYOUT = st.sampled_from(["{}", "\n{}\n", " {} ", "\n{}", "{}\n  "])

_ANY_TAG = re.compile(r"</?(?:function|parameter|invoke)|</?arg_(?:key|value)", re.I)


@st.composite
def qwen3_items(draw: Any, names: Any = NAMES, keys: Any = NAMES, values: Any = VALUES) -> str:
    out = [draw(WS), f"<function={draw(names)}>"]
    for _ in range(draw(st.integers(0, 4))):
        value = draw(LAYOUT).format(draw(values))
        out += [draw(WS), f"<parameter={draw(keys)}>", value, "</parameter>"]
    out += [draw(WS), "</function>", draw(WS)]
    return "".join(out)


@st.composite
def minimax_items(draw: Any, names: Any = NAMES, values: Any = VALUES) -> str:
    out = [draw(WS), f'<invoke name="{draw(names)}">']
    for _ in range(draw(st.integers(0, 4))):
        out += [draw(WS), f'<parameter name="{draw(names)}">', draw(values), "</parameter>"]
    out += [draw(WS), "</invoke>", draw(WS)]
    return "".join(out)


@st.composite
def glm_items(draw: Any, names: Any = NAMES, keys: Any = NAMES, values: Any = VALUES) -> str:
    out = [draw(WS), draw(names)]
    for _ in range(draw(st.integers(0, 4))):
        out += [draw(WS), f"<arg_key>{draw(keys)}</arg_key>", draw(WS), f"<arg_value>{draw(values)}</arg_value>"]
    out.append(draw(WS))
    return "".join(out)


@st.composite
def mutated(draw: Any, items: Any) -> str:
    """An item with one to three edits: a slice dropped or repeated, a fragment put in, a case swapped, a cut."""
    text = draw(items)
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 14)))
        edit = draw(st.sampled_from(["drop", "insert", "repeat", "case", "cut"]))
        if edit == "drop":
            text = text[:i] + text[j:]
        elif edit == "insert":
            text = text[:i] + draw(st.sampled_from(FRAGMENTS) | SOME_WS) + text[i:]
        elif edit == "repeat":
            text = text[:j] + text[i:j] + text[j:]
        elif edit == "case":
            text = text[:i] + text[i:j].swapcase() + text[j:]
        else:
            text = text[:i]
    return text


PROPERTY = settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- properties: Qwen3-Coder / Seed-OSS

@PROPERTY
@given(item=qwen3_items())
def test_qwen3_fast_path_is_the_grammar_on_generated_items(item: str) -> None:
    agrees(qwen3_fast, qwen3_grammar_calls, QWEN3_LENIENT, item)


@PROPERTY
@given(item=mutated(qwen3_items()))
def test_qwen3_fast_path_is_the_grammar_on_mutated_items(item: str) -> None:
    agrees(qwen3_fast, qwen3_grammar_calls, QWEN3_LENIENT, item)


@PROPERTY
@given(name=PLAIN_NAMES, params=st.lists(st.tuples(PLAIN_NAMES, PLAIN_VALUES), max_size=5), layout=LAYOUT,
       gaps=st.lists(WS, min_size=7, max_size=7))
def test_qwen3_fast_path_reads_the_plain_shape(name: str, params: list[tuple[str, str]], layout: str,
                                               gaps: list[str]) -> None:
    body = "".join(f"{gaps[i % 5]}<parameter={k}>{layout.format(v)}</parameter>" for i, (k, v) in enumerate(params))
    item = f"{gaps[5]}<function={name}>{body}{gaps[6]}</function>\n"
    assert agrees(qwen3_fast, qwen3_grammar_calls, QWEN3_LENIENT, item), item
    assert qwen3_fast(item) == ([(name, {k: layout.format(v) for k, v in params})], False)


# --------------------------------------------------------------------------- properties: MiniMax-M2

@PROPERTY
@given(item=minimax_items() | mutated(minimax_items()))
def test_minimax_fast_path_is_the_grammar(item: str) -> None:
    agrees(minimax_fast, minimax_grammar_calls, MINIMAX_LENIENT, item)


@PROPERTY
@given(name=PLAIN_NAMES, params=st.dictionaries(PLAIN_NAMES, PLAIN_VALUES, max_size=5), gap=WS)
def test_minimax_fast_path_reads_the_plain_shape(name: str, params: dict[str, str], gap: str) -> None:
    body = "".join(f'{gap}<parameter name="{k}">{v}</parameter>' for k, v in params.items())
    item = f'<invoke name="{name}">{body}\n</invoke>'
    assert agrees(minimax_fast, minimax_grammar_calls, MINIMAX_LENIENT, item), item
    assert minimax_fast(item) == ([(name, params)], False)


# --------------------------------------------------------------------------- properties: GLM-4.5 / 4.7

@PROPERTY
@given(item=glm_items() | mutated(glm_items()))
def test_glm_fast_path_is_the_grammar(item: str) -> None:
    agrees(glm_fast, glm_grammar_calls, None, item)


@PROPERTY
@given(name=PLAIN_NAMES, params=st.dictionaries(PLAIN_NAMES, PLAIN_VALUES, max_size=5),
       gaps=st.lists(WS, min_size=3, max_size=3))
def test_glm_fast_path_reads_the_plain_shape(name: str, params: dict[str, str], gaps: list[str]) -> None:
    pairs = "".join(f"{gaps[0]}<arg_key>{k}</arg_key>{gaps[1]}<arg_value>{v}</arg_value>" for k, v in params.items())
    item = f"{name}{pairs}{gaps[2]}"
    assert agrees(glm_fast, glm_grammar_calls, None, item), item
    assert glm_fast(item) == ([(name, params)], False)


def test_a_seeded_sweep_of_mutations_agrees_and_mostly_reads() -> None:
    """Breadth beyond hypothesis' examples: 3000 random edits of rendered items per dialect."""
    rng = random.Random(11)
    pieces = ["<", ">", "</parameter>", "<parameter=k>", "</function>", "</arg_value>", "<arg_key>", "\n", " ", "x"]
    cases = [
        (qwen3_fast, qwen3_grammar_calls, QWEN3_LENIENT,
         "<function=write_file>\n<parameter=path>\nsrc/a.py\n</parameter>\n<parameter=content>\nx = 1\n</parameter>\n</function>"),
        (minimax_fast, minimax_grammar_calls, MINIMAX_LENIENT,
         '<invoke name="write_file">\n<parameter name="path">src/a.py</parameter>\n<parameter name="n">1</parameter>\n</invoke>'),
        (glm_fast, glm_grammar_calls, None,
         "write_file\n<arg_key>path</arg_key>\n<arg_value>src/a.py</arg_value>\n<arg_key>n</arg_key>\n<arg_value>1</arg_value>\n"),
    ]
    for fast, grammar, lenient, base in cases:
        read = 0
        for _ in range(3000):
            text = base
            for _ in range(rng.randint(1, 2)):
                i = rng.randrange(len(text) + 1)
                j = min(len(text), i + rng.randint(0, 6))
                text = text[:i] + rng.choice(["", rng.choice(pieces), text[i:j].swapcase()]) + text[j:]
            read += agrees(fast, grammar, lenient, text)
        assert read > 300, (base, read)  # edits inside values and names are still read fast


# --------------------------------------------------------------------------- examples: Qwen3-Coder

CALC = ("<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n"
        '<parameter=dimensions>\n{"width": 10, \n "height": 20}\n</parameter>\n<parameter=precision>\n2\n</parameter>\n'
        "</function>")


def test_a_typical_item_is_read_fast_with_its_layout_kept_raw() -> None:
    assert qwen3_fast(CALC) == ([("calculate_area", {"shape": "\nrectangle\n",
                                                     "dimensions": '\n{"width": 10, \n "height": 20}\n',
                                                     "precision": "\n2\n"})], False)
    assert qwen3_calls(CALC, None) == qwen3_grammar_calls(CALC, None) == qwen3_fast(CALC)


def test_layout_and_types_still_come_from_the_schema_downstream() -> None:
    tools = [{"type": "function", "function": {"name": "calculate_area", "parameters": {"type": "object", "properties": {
        "shape": {"type": "string"}, "dimensions": {"type": "object"}, "precision": {"type": "integer"}}}}}]
    result = streamparse.parse(f"Let me work that out.<tool_call>\n{CALC}\n</tool_call>", tools=tools)
    assert json.loads(result.tool_calls[0].arguments) == {
        "shape": "rectangle", "dimensions": {"width": 10, "height": 20}, "precision": 2}


@pytest.mark.parametrize("item, params", [
    ("<function=f><parameter=a></parameter><parameter=b>x</parameter></function>", {"a": "", "b": "x"}),
    ("<function=f>\n<parameter=a>\n</parameter>\n</function>", {"a": "\n"}),
    ("<function=f>\n</function>", {}),
    ("<function=f></function>", {}),
    ("\n\n<function=f>\t<parameter=a>1</parameter>\r\n</function>  \n", {"a": "1"}),
    ("<function=f>\u3000<parameter=a>1</parameter>\u2028</function>\x85", {"a": "1"}),
    ("<function=f><parameter= spaced key >1</parameter></function>", {"spaced key": "1"}),
    ("<function=f><parameter=a>1</parameter><parameter=a>2</parameter></function>", {"a": "2"}),
    ("<function=f><parameter=html>\n<p>a &amp; b</p> <br/>\n</parameter></function>", {"html": "\n<p>a &amp; b</p> <br/>\n"}),
    ("<function=f><parameter=cmp>if a<b and c>d:</parameter></function>", {"cmp": "if a<b and c>d:"}),
    ("<function=f><parameter=s>São Paulo 東京 🌧</parameter></function>", {"s": "São Paulo 東京 🌧"}),
])
def test_qwen3_edge_cases_read_fast(item: str, params: dict[str, str]) -> None:
    assert qwen3_fast(item) == ([("f", params)], False)
    assert qwen3_grammar_calls(item, None) == QWEN3_LENIENT(item, None) == qwen3_fast(item)


def test_a_function_name_with_spaces_is_trimmed_like_the_grammar_path_does() -> None:
    item = "<function= get weather >\n<parameter=city>\nParis\n</parameter>\n</function>"
    assert qwen3_fast(item) == ([("get weather", {"city": "\nParis\n"})], False) == qwen3_grammar_calls(item, None)


@pytest.mark.parametrize("item", [
    # a closer inside a value (the grammar reads on to the closer that is followed by a head or the end)
    '<function=f>\n<parameter=code>\nx = "</parameter>"\n</parameter>\n</function>',
    # a parameter pair written inside a value
    "<function=f>\n<parameter=doc>\n<parameter=path>\nnested.txt\n</parameter>\n</parameter>\n</function>",
    # a closer that is followed by neither a head nor the end
    "<function=f>\n<parameter=a>\n1\n</parameter>\ntext\n<parameter=b>\n2\n</parameter>\n</function>",
    # a function element inside a value
    "<function=f>\n<parameter=a>\n<function=g></function>\n</parameter>\n</function>",
    # tags in another letter case: tags to the lenient decoder, text to the grammar
    "<function=f>\n<parameter=a>\nsee </PARAMETER> here\n</parameter>\n</function>",
    "<FUNCTION=f>\n<parameter=a>\n1\n</parameter>\n</function>",
    "<function=f>\n<parameter=a>\nthe </functıon> tag\n</parameter>\n</function>",
    # heads the grammar does not accept
    "<function=>\n</function>", "<function= >\n</function>", "<function=f\ng>\n</function>",
    "<function=f>\n<parameter=>\n1\n</parameter>\n</function>",
    # missing closers, text around the item
    "<function=f>\n<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n</function>",
    "<function=f>\n<parameter=city>\nDallas\n</function>",
    "<function=f>\n<parameter=city>\nDallas\n</parameter>\n",
    "<function=f>\n</function>\ntrailing words",
    "prefix <function=f>\n</function>",
])
def test_qwen3_unusual_items_are_declined_and_left_to_the_decoder(item: str) -> None:
    assert qwen3_fast(item) is None
    assert outcome(qwen3_calls, item) == outcome(QWEN3_LENIENT, item)  # the stream's result is unchanged


def test_a_missing_parameter_closer_is_left_to_the_lenient_decoder() -> None:
    """The grammar makes one value of it (the next head is text). What the stream gives is the lenient
    decoder's reading, as before the fast path. (vLLM reads city and state apart here; the lenient
    decoder, which ends a value at the next head only when no closer follows at all, does not.)"""
    item = "<function=get_current_weather>\n<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n</function>"
    assert qwen3_fast(item) is None
    assert qwen3_grammar_calls(item, None) == ([("get_current_weather", {"city": "\nDallas\n<parameter=state>\nTX\n"})], False)
    assert qwen3_calls(item, None) == QWEN3_LENIENT(item, None)


def test_a_closer_inside_a_value_is_read_as_the_grammar_reads_it() -> None:
    item = '<function=f>\n<parameter=code>\nx = "</parameter>"\n</parameter>\n</function>'
    assert qwen3_calls(item, None) == qwen3_grammar_calls(item, None) == ([("f", {"code": '\nx = "</parameter>"\n'})], False)


# --------------------------------------------------------------------------- examples: MiniMax-M2, GLM

def test_minimax_items() -> None:
    item = '<invoke name="get_weather">\n<parameter name="city">Seattle</parameter>\n<parameter name="n"></parameter>\n</invoke>'
    assert minimax_fast(item) == ([("get_weather", {"city": "Seattle", "n": ""})], False)
    assert minimax_calls(item, None) == minimax_grammar_calls(item, None) == minimax_fast(item)
    for odd in ("<invoke name='get_weather'>\n</invoke>", '<invoke  name = "g" >\n</invoke>',
                '<invoke name="g">\n<parameter name="a">1</parameter>\n<parameter name="b">2\n</invoke>'):
        assert minimax_fast(odd) is None
        assert outcome(minimax_calls, odd) == outcome(MINIMAX_LENIENT, odd)


@pytest.mark.parametrize("body, params", [
    ("get_weather\n<arg_key>city</arg_key>\n<arg_value>北京</arg_value>\n", {"city": "北京"}),
    ("get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value><arg_key>days</arg_key><arg_value>2</arg_value>",
     {"city": "Beijing", "days": "2"}),
    ("get_weather", {}),
    ("\n get_weather \n", {}),
    ("get_weather<arg_key> city </arg_key>\n\n<arg_value> two words </arg_value>", {"city": " two words "}),
    ("get_weather<arg_key>a>b</arg_key><arg_value>x</arg_value>", {"a>b": "x"}),
    ("get_weather<arg_key>q</arg_key><arg_value><arg_key>not a key</arg_key></arg_value>", {"q": "<arg_key>not a key</arg_key>"}),
    ("get_weather<arg_key>q</arg_key><arg_value>\n</arg_value>", {"q": "\n"}),
    ("get_weather<arg_key>a</arg_key><arg_value>1</arg_value><arg_key>b</arg_key><arg_value></arg_value>", {"a": "1", "b": ""}),
    # an empty value before another pair is empty (it does not read on to the next closer)
    ("get_weather<arg_key>a</arg_key><arg_value></arg_value>\n<arg_key>b</arg_key><arg_value>2</arg_value>", {"a": "", "b": "2"}),
])
def test_glm_items_read_fast(body: str, params: dict[str, str]) -> None:
    assert glm_fast(body) == ([("get_weather", params)], False) == glm_grammar_calls(body, None) == glm_calls(body, None)


@pytest.mark.parametrize("body", [
    "get weather",  # two names
    "get_weather<arg_key></arg_key><arg_value>1</arg_value>",  # empty key
    "get_weather<arg_key>a<b</arg_key><arg_value>1</arg_value>",  # '<' in a key
    "get_weather<arg_key>a</arg_key>x<arg_value>1</arg_value>",  # text between key and value
    "get_weather<arg_key>a</arg_key><arg_value>1",  # no value closer
    "get_weather<arg_key>a</arg_key><arg_value>1</arg_value>tail",
    "get_weather<ARG_KEY>a</ARG_KEY><arg_value>1</arg_value>",
    "",
])
def test_glm_unusual_bodies_are_declined_and_left_to_the_grammar(body: str) -> None:
    assert glm_fast(body) is None
    assert outcome(glm_calls, body) == outcome(glm_grammar_calls, body)


# --------------------------------------------------------------------------- whole streams

@pytest.mark.parametrize("scenario", ["dialect:qwen3_coder", "dialect:seed_oss", "dialect:minimax_m2", "dialect:glm45",
                                      "args:qwen3_coder:4", "args:glm45:4"])
def test_streams_give_the_same_events_with_and_without_the_fast_paths(scenario: str) -> None:
    workload = build_workload(scenario, calls=30)
    deltas = split(workload.text, "random")

    def events() -> list[tuple[str, str, str]]:
        parser = streamparse.StreamParser(workload.tools, id_factory=lambda: "call")
        out = [e for d in deltas for e in parser.feed(d)] + list(parser.close())
        return [(e.type, getattr(e, "text", ""), getattr(e, "arguments", "")) for e in out]

    fast = events()
    dialect = DIALECTS[scenario.split(":")[1]]
    slow = {"qwen3_coder": QWEN3_LENIENT, "seed_oss": QWEN3_LENIENT, "minimax_m2": MINIMAX_LENIENT,
            "glm45": glm_grammar_calls}[dialect.name]
    original = dialect.decode
    object.__setattr__(dialect, "decode", slow)  # a frozen dataclass: restored below
    try:
        assert events() == fast
    finally:
        object.__setattr__(dialect, "decode", original)
    assert sum(1 for kind, _, _ in fast if kind == "tool_call") == len(workload.call_ends)
