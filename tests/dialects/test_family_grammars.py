"""The two families (XML parameters: Qwen3-Coder, MiniMax-M2, ...; key/value tags: GLM) are decoded by their grammar.

Each family writes its grammar from its one declaration (``XmlCall``, ``KvCall``); the grammar's program reads an
item and the family's rules fold it into a call. These tests hold what that reading gives: an item in the plain
shape reads back exactly as written; an edited item is either refused or gives only text the model wrote; and the
unusual items engines' tests and models produce read as the examples below say.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
import streamparse
from streamparse.arguments.schema import ArgumentError
from streamparse.dialects import DIALECTS

qwen3_calls, minimax_calls, glm_calls = (DIALECTS[d].decode for d in ("qwen3_coder", "minimax_m2", "glm45"))


def outcome(decode: Any, text: str) -> Any:
    try:
        return decode(text, None)
    except ArgumentError:
        return "refused"


def written_by_the_model(text: str, calls: Any) -> bool:
    """Every name, key and value of ``calls`` is a piece of ``text`` (layout aside: names and keys are stripped)."""
    return all(name in text and all(key in text and value in text for key, value in arguments.items())
               for name, arguments in calls)


# --------------------------------------------------------------------------- strategies

ANY = st.characters(blacklist_categories=("Cs",))
WS = st.sampled_from(["", "\n", " ", "\n\n", " \t\n", "\r\n", "\t", "\u3000", "\x85", "\x1c", "\u2028"])
FRAGMENTS = [
    "<", ">", "</", "=", '"', "'", "\n", " ", "&lt;", "</parameter", "</parameter>", "<parameter=", "<parameter=x>",
    "<parameter=>", '<parameter name="x">', "<parameter ", "</function>", "<function=f>", "</invoke>", '<invoke name="g">',
    "</PARAMETER>", "<Parameter=y>", "</Function>", "</functıon>", "<functİon=h>", "</arg_value>", "<arg_value>",
    "<arg_key>", "</arg_key>", "<tool_call>", "</tool_call>", '{"a": [1, "</parameter>"]}', "<div>a < b</div>",
]
VALUES = st.one_of(st.just(""), st.text(ANY, max_size=30),
                   st.lists(st.sampled_from(FRAGMENTS) | st.text(ANY, max_size=4), max_size=6).map("".join))
# Plain values: no '<' at all, or '<' that forms no tag of these dialects.
PLAIN_VALUES = st.one_of(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="<"), max_size=30),
                         st.sampled_from(["a < b", "<div>x</div>", "if x<3 and y>2:", "vector<int>", "<", "<<>>"]))
NAMES = st.text(ANY, min_size=1, max_size=12)
PLAIN_NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,15}", fullmatch=True)
LAYOUT = st.sampled_from(["{}", "\n{}\n", " {} ", "\n{}", "{}\n  "])


@st.composite
def qwen3_items(draw: Any) -> str:
    out = [draw(WS), f"<function={draw(NAMES)}>"]
    for _ in range(draw(st.integers(0, 4))):
        out += [draw(WS), f"<parameter={draw(NAMES)}>", draw(LAYOUT).format(draw(VALUES)), "</parameter>"]
    return "".join([*out, draw(WS), "</function>", draw(WS)])


@st.composite
def minimax_items(draw: Any) -> str:
    out = [draw(WS), f'<invoke name="{draw(NAMES)}">']
    for _ in range(draw(st.integers(0, 4))):
        out += [draw(WS), f'<parameter name="{draw(NAMES)}">', draw(VALUES), "</parameter>"]
    return "".join([*out, draw(WS), "</invoke>", draw(WS)])


@st.composite
def glm_items(draw: Any) -> str:
    out = [draw(WS), draw(NAMES)]
    for _ in range(draw(st.integers(0, 4))):
        out += [draw(WS), f"<arg_key>{draw(NAMES)}</arg_key>", draw(WS), f"<arg_value>{draw(VALUES)}</arg_value>"]
    return "".join([*out, draw(WS)])


@st.composite
def edited(draw: Any, items: Any) -> str:
    """An item with one to three edits: a slice dropped or repeated, a fragment put in, a case swapped, a cut."""
    text = draw(items)
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 14)))
        edit = draw(st.sampled_from(["drop", "insert", "repeat", "case", "cut"]))
        if edit == "drop":
            text = text[:i] + text[j:]
        elif edit == "insert":
            text = text[:i] + draw(st.sampled_from(FRAGMENTS) | WS) + text[i:]
        elif edit == "repeat":
            text = text[:j] + text[i:j] + text[j:]
        elif edit == "case":
            text = text[:i] + text[i:j].swapcase() + text[j:]
        else:
            text = text[:i]
    return text


PROPERTY = settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- properties

@PROPERTY
@given(name=PLAIN_NAMES, params=st.lists(st.tuples(PLAIN_NAMES, PLAIN_VALUES), max_size=5), layout=LAYOUT,
       gaps=st.lists(WS, min_size=7, max_size=7))
def test_a_plain_qwen3_item_reads_back_as_written(name: str, params: list[tuple[str, str]], layout: str,
                                                  gaps: list[str]) -> None:
    body = "".join(f"{gaps[i % 5]}<parameter={k}>{layout.format(v)}</parameter>" for i, (k, v) in enumerate(params))
    item = f"{gaps[5]}<function={name}>{body}{gaps[6]}</function>\n"
    assert qwen3_calls(item, None) == ([(name, {k: layout.format(v) for k, v in params})], False)


@PROPERTY
@given(name=PLAIN_NAMES, params=st.dictionaries(PLAIN_NAMES, PLAIN_VALUES, max_size=5), gap=WS)
def test_a_plain_minimax_item_reads_back_as_written(name: str, params: dict[str, str], gap: str) -> None:
    body = "".join(f'{gap}<parameter name="{k}">{v}</parameter>' for k, v in params.items())
    assert minimax_calls(f'<invoke name="{name}">{body}\n</invoke>', None) == ([(name, params)], False)


@PROPERTY
@given(name=PLAIN_NAMES, params=st.dictionaries(PLAIN_NAMES, PLAIN_VALUES, max_size=5),
       gaps=st.lists(WS, min_size=3, max_size=3))
def test_a_plain_glm_item_reads_back_as_written(name: str, params: dict[str, str], gaps: list[str]) -> None:
    pairs = "".join(f"{gaps[0]}<arg_key>{k}</arg_key>{gaps[1]}<arg_value>{v}</arg_value>" for k, v in params.items())
    assert glm_calls(f"{name}{pairs}{gaps[2]}", None) == ([(name, params)], False)


@PROPERTY
@given(case=st.sampled_from([(qwen3_calls, qwen3_items()), (minimax_calls, minimax_items()), (glm_calls, glm_items())])
       .flatmap(lambda c: st.tuples(st.just(c[0]), c[1] | edited(c[1]))))
def test_any_item_is_refused_or_gives_only_what_the_model_wrote(case: tuple[Any, str]) -> None:
    decode, item = case
    got = outcome(decode, item)
    assert got == "refused" or written_by_the_model(item, got[0]), (item, got)


def test_a_seeded_sweep_of_edits_gives_only_what_the_model_wrote_and_mostly_reads() -> None:
    """Breadth beyond hypothesis' examples: 3000 random edits of rendered items per dialect."""
    rng = random.Random(11)
    pieces = ["<", ">", "</parameter>", "<parameter=k>", "</function>", "</arg_value>", "<arg_key>", "\n", " ", "x"]
    cases = [
        (qwen3_calls, "<function=write_file>\n<parameter=path>\nsrc/a.py\n</parameter>\n<parameter=content>\nx = 1\n"
                      "</parameter>\n</function>"),
        (minimax_calls, '<invoke name="write_file">\n<parameter name="path">src/a.py</parameter>\n'
                        '<parameter name="n">1</parameter>\n</invoke>'),
        (glm_calls, "write_file\n<arg_key>path</arg_key>\n<arg_value>src/a.py</arg_value>\n<arg_key>n</arg_key>\n"
                    "<arg_value>1</arg_value>\n"),
    ]
    for decode, base in cases:
        read = 0
        for _ in range(3000):
            text = base
            for _ in range(rng.randint(1, 2)):
                i = rng.randrange(len(text) + 1)
                j = min(len(text), i + rng.randint(0, 6))
                text = text[:i] + rng.choice(["", rng.choice(pieces), text[i:j].swapcase()]) + text[j:]
            got = outcome(decode, text)
            if got != "refused":
                assert written_by_the_model(text, got[0]), (text, got)
                read += 1
        assert read > 1000, (base, read)  # many edits fall inside values and names: still calls


# --------------------------------------------------------------------------- examples: Qwen3-Coder

CALC = ("<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n"
        '<parameter=dimensions>\n{"width": 10, \n "height": 20}\n</parameter>\n<parameter=precision>\n2\n</parameter>\n'
        "</function>")


def test_a_typical_item_keeps_its_layout_raw_and_the_schema_types_it_downstream() -> None:
    assert qwen3_calls(CALC, None) == ([("calculate_area", {"shape": "\nrectangle\n",
                                                            "dimensions": '\n{"width": 10, \n "height": 20}\n',
                                                            "precision": "\n2\n"})], False)
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
    ("<function= f >\n<parameter=a>1</parameter>\n</function>", {"a": "1"}),  # a name is trimmed
    # a closer inside a value: the value reads on to the closer that a head or the end follows
    ('<function=f>\n<parameter=code>\nx = "</parameter>"\n</parameter>\n</function>', {"code": '\nx = "</parameter>"\n'}),
    ("<function=f>\n<parameter=doc>\n<parameter=path>\nnested.txt\n</parameter>\n</parameter>\n</function>",
     {"doc": "\n<parameter=path>\nnested.txt\n</parameter>\n"}),
    ("<function=f>\n<parameter=a>\n1\n</parameter>\ntext\n<parameter=b>\n2\n</parameter>\n</function>",
     {"a": "\n1\n</parameter>\ntext\n<parameter=b>\n2\n"}),
    ("<function=f>\n<parameter=a>\n<function=g></function>\n</parameter>\n</function>", {"a": "\n<function=g></function>\n"}),
    # tags in any letter case are tags; a look-alike letter is text
    ("<function=f>\n<parameter=a>\nsee </PARAMETER> here\n</parameter>\n</function>", {"a": "\nsee </PARAMETER> here\n"}),
    ("<FUNCTION=f>\n<parameter=a>\n1\n</parameter>\n</function>", {"a": "\n1\n"}),
    ("<function=f>\n<parameter=a>\nthe </functıon> tag\n</parameter>\n</function>", {"a": "\nthe </functıon> tag\n"}),
    ("<function=f>\n<parameter=>\n1\n</parameter>\n</function>", {"": "\n1\n"}),
    # a cut item: the last value runs to the end, the call's closer may be missing
    ("<function=f>\n<parameter=city>\nDallas\n</function>", {"city": "\nDallas\n"}),
    ("<function=f>\n<parameter=city>\nDallas\n</parameter>\n", {"city": "\nDallas\n"}),
])
def test_qwen3_items(item: str, params: dict[str, str]) -> None:
    assert qwen3_calls(item, None) == ([("f", params)], False)


@pytest.mark.parametrize("item", [
    "<function=>\n</function>", "<function= >\n</function>", "<function=f\ng>\n</function>",  # no name
    "<function=f>\n</function>\ntrailing words", "prefix <function=f>\n</function>",  # text around the item
    # a closer followed by a head this dialect cannot read
    '<function=f>\n<parameter=a>1</parameter>\n<parameter name="b">2</parameter>\n</function>',
    # text before a stray closer is not dropped: the item is refused (the block stays text)
    "<function=f>\n<parameter=a<b>\nvalue\n</parameter>\n</function>",
    '<function=f> [1, 2] </parameter>\n<parameter=a>1</parameter>\n</function>',
])
def test_qwen3_items_refused(item: str) -> None:
    assert outcome(qwen3_calls, item) == "refused"


def test_a_value_that_lost_its_closer_ends_before_the_next_head_on_its_own_line() -> None:
    """vLLM's test: the model left out ``</parameter>`` after Dallas. The head on a line of its own names a
    parameter not given yet, and the value holds more heads than closers: city and state are read apart, as a
    repair."""
    item = "<function=get_current_weather>\n<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n</function>"
    assert qwen3_calls(item, None) == ([("get_current_weather", {"city": "\nDallas\n", "state": "\nTX\n"})], True)
    quoted = "<function=f>\n<parameter=a>1</parameter>\n<parameter=doc>\nsee\n<parameter=a>\nx\n</parameter>\n</function>"
    assert qwen3_calls(quoted, None) == ([("f", {"a": "1", "doc": "\nsee\n<parameter=a>\nx\n"})], False)  # a given


# --------------------------------------------------------------------------- examples: MiniMax-M2, GLM

def test_minimax_items() -> None:
    item = '<invoke name="get_weather">\n<parameter name="city">Seattle</parameter>\n<parameter name="n"></parameter>\n</invoke>'
    assert minimax_calls(item, None) == ([("get_weather", {"city": "Seattle", "n": ""})], False)
    assert minimax_calls("<invoke name='get_weather'>\n</invoke>", None) == ([("get_weather", {})], False)
    assert minimax_calls('<invoke  name = "g" >\n</invoke>', None) == ([("g", {})], False)
    cut = '<invoke name="g">\n<parameter name="a">1</parameter>\n<parameter name="b">2\n</invoke>'
    assert minimax_calls(cut, None) == ([("g", {"a": "1", "b": "2\n"})], False)


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
def test_glm_items(body: str, params: dict[str, str]) -> None:
    assert glm_calls(body, None) == ([("get_weather", params)], False)


@pytest.mark.parametrize("body", [
    "get weather",  # two names
    "get_weather<arg_key></arg_key><arg_value>1</arg_value>",  # empty key
    "get_weather<arg_key>a<b</arg_key><arg_value>1</arg_value>",  # '<' in a key
    "get_weather<arg_key>a</arg_key>x<arg_value>1</arg_value>",  # text between key and value
    "get_weather<arg_key>a</arg_key><arg_value>1</arg_value>tail",
    "",
])
def test_glm_items_refused(body: str) -> None:
    assert outcome(glm_calls, body) == "refused"


def test_a_glm_value_cut_before_its_closer_is_a_repair() -> None:
    assert glm_calls("get_weather<arg_key>a</arg_key><arg_value>1", None) == ([("get_weather", {"a": "1"})], True)


def test_the_family_grammars_are_what_decodes() -> None:
    """Each member's grammar is written from its declaration and compiles into a program (Lark runs)."""
    from streamparse.dialects.grammar_program import program_for

    for name in ("qwen3_coder", "seed_oss", "minimax_m2", "claude_xml", "minicpm5", "glm45"):
        assert program_for(name) is not None, name
