"""Grammar programs read an item as Lark's parser does (``streamparse.dialects.grammar_program``).

Every grammar that compiles is held to Lark: on every item the suite's samples give its dialect (``samples``'
renderers, streamparse's own renderers, the engines' cases), which the program must also read, since a program
that left them to Lark would gain nothing; on hypothesis variations of those items (whitespace, tokens dropped,
doubled or cut, markup and the grammar's own literals put between tokens); and on small grammars written here for
the lexer's choices, the tree's shaping and repetitions. Each time it gives Lark's tree, token positions included,
or both refuse the text. Which grammars compile is computed here from their rules, never listed.
"""

from __future__ import annotations

from collections import defaultdict
import functools
from importlib import resources
from typing import Any, Callable, Iterator

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lark import Lark, Token, Tree
from lark.exceptions import LarkError
import pytest

from budget import examples
from dialects.engine_cases import CASES
from helpers import TOOLS
from samples import ARGUMENTS, LOOKALIKES, RENDER, RENDER_SEVERAL
import streamparse as sp
from streamparse.arguments.grammar import defined_grammars, load_grammar
from streamparse.arguments.schema import ArgumentError
from streamparse.dialects import DIALECTS, decoders
from streamparse.dialects.grammar_program import GrammarProgram, NotRegular, compile_grammar, fold_tree, program_for, refusal
from streamparse.dialects.render import NAMED_ONLY_RENDERERS, RENDERERS


def grammar_names() -> list[str]:
    files = {p.name.removesuffix(".lark") for p in resources.files("streamparse.grammars").iterdir()
             if p.name.endswith(".lark")}
    return sorted(files | set(defined_grammars()))


COMPILED = [name for name in grammar_names() if program_for(name) is not None]


def same(mine: Any, lark: Any) -> bool:
    """Equal trees, and every token of the same type, text and place (``Tree.__eq__`` compares text only)."""
    if isinstance(lark, Tree):
        return (isinstance(mine, Tree) and type(mine.data) is type(lark.data) and mine.data == lark.data and len(mine.children) == len(lark.children)
                and all(same(a, b) for a, b in zip(mine.children, lark.children)))
    if isinstance(lark, Token):
        fields = ("type", "value", "start_pos", "end_pos", "line", "column", "end_line", "end_column")
        return isinstance(mine, Token) and all(getattr(mine, f) == getattr(lark, f) for f in fields)
    return mine is None and lark is None


def lark_tree(lark: Lark, text: str) -> Any:
    """Lark's tree, or the exception class when Lark refuses the text."""
    try:
        return lark.parse(text)
    except LarkError as exc:
        return type(exc)


def read_alike(program: GrammarProgram, lark: Lark, text: str) -> None:
    """The program gives Lark's tree, or both refuse. (None where Lark reads the text would still be correct, the
    decoder asking Lark then, but slow: these grammars never need it.)"""
    mine, theirs = program.tree(text), lark_tree(lark, text)
    if isinstance(theirs, type):
        assert mine is None, f"Lark refuses {text!r} ({theirs.__name__}), the program reads it: {mine}"
    else:
        assert mine is not None, f"the program leaves {text!r} to Lark, which reads it"
        assert same(mine, theirs), f"{text!r}: the program reads {mine}, Lark {theirs}"
        # Folding as it reads gives what folding Lark's tree gives: here each rule's node is its name and children.
        named = {rule: functools.partial(_named, rule) for rule in _rule_names(lark)}
        assert program.fold(text, named) == fold_tree(theirs, named), text


def _named(rule: str, children: list[Any]) -> tuple[str, list[Any]]:
    return rule, [f"{c.type}:{c}" if isinstance(c, Token) else c for c in children]


def _rule_names(lark: Lark) -> set[str]:
    return {str(name) for rule in lark.rules for name in (rule.origin.name, rule.alias) if name}


# --------------------------------------------------------------------------- the items the samples give each dialect

def _answers() -> Iterator[tuple[str, Any, str | None]]:
    """(answer, tools, dialect to pin or None) for every sample answer the suite has."""
    for style in sorted(RENDER):
        for name, args in ARGUMENTS.values():
            yield RENDER[style](name, args), TOOLS, None
    several = [ARGUMENTS[c] for c in ("unicode", "nested", "escaped_quotes", "typed")]
    for style in sorted(RENDER_SEVERAL):
        yield RENDER_SEVERAL[style](several), TOOLS, None
    for renderers in (RENDERERS, NAMED_ONLY_RENDERERS):
        for dialect in sorted(renderers):
            for name, args in ARGUMENTS.values():
                yield renderers[dialect](name, args)[0], TOOLS, dialect
    for case in CASES:
        yield case.text, case.tool_list(), None
        yield case.text, case.tool_list(), case.dialect


@functools.cache
def sample_items() -> dict[str, list[str]]:
    """Every item a dialect's decoder is given while the sample answers are parsed, by the dialect's grammar."""
    found: dict[str, list[str]] = defaultdict(list)
    dialects = list({id(d): d for d in DIALECTS.values()}.values())
    originals = [(d, d.decode) for d in dialects]

    def recording(grammar: str, decode: Callable[[str, str | None], Any]) -> Callable[[str, str | None], Any]:
        def record(text: str, head_name: str | None) -> Any:
            found[grammar].append(text)
            return decode(text, head_name)
        return record

    for dialect, decode in originals:  # a Dialect is frozen: its decoder is swapped for this reading only
        object.__setattr__(dialect, "decode", recording(dialect.grammar, decode))
    try:
        for text, tools, pinned in _answers():
            sp.parse(text, tools, **({"dialects": [pinned]} if pinned else {}))
    finally:
        for dialect, decode in originals:
            object.__setattr__(dialect, "decode", decode)
    return {grammar: list(dict.fromkeys(items)) for grammar, items in found.items()}


def read_items(grammar: str) -> list[str]:
    """The sample items of ``grammar`` that Lark reads."""
    lark = load_grammar(grammar)
    return [t for t in sample_items().get(grammar, []) if not isinstance(lark_tree(lark, t), type)]


# --------------------------------------------------------------------------- which grammars compile

def _recursive(lark: Lark) -> list[str]:
    """The rules reachable from start that lie on a cycle of the rule graph, other than a rule whose only cycle
    is itself, inlined (``_name``), leftmost in each of its alternatives that names it (Lark's ``x*``/``x+``)."""
    uses: dict[str, list[list[str]]] = defaultdict(list)
    for rule in lark.rules:
        uses[rule.origin.name].append([s.name for s in rule.expansion if not s.is_term])
    reach: dict[str, set[str]] = {}

    def reachable(name: str) -> set[str]:
        if name not in reach:
            reach[name] = set()
            todo = [name]
            while todo:
                for alternative in uses[todo.pop()]:
                    for used in alternative:
                        if used not in reach[name]:
                            reach[name].add(used)
                            todo.append(used)
        return reach[name]

    start = lark.options.start[0]
    looping = [n for n in {start} | reachable(start) if n in reachable(n)]
    repetition = {n for n in looping if n.startswith("_") and not any(n in reachable(m) for m in reachable(n) - {n})
                  and all(n not in a[1:] for a in uses[n])}
    return sorted(set(looping) - repetition)


def test_a_grammar_compiles_exactly_when_its_rules_are_regular() -> None:
    table = []
    for name in grammar_names():
        lark, reason = load_grammar(name), refusal(name)
        cycles = _recursive(lark)
        table.append(f"{name:18s} {'compiles' if reason is None else 'left to Lark: ' + reason}")
        if cycles:
            assert reason is not None and "recursive" in reason, (name, cycles, reason)
        else:
            assert reason is None, (name, reason)
    print("\n".join(table))
    assert {"kimi_k2", "deepseek_v3", "deepseek_v31", "openai"} <= set(COMPILED)


# --------------------------------------------------------------------------- the samples and their variations

@pytest.mark.parametrize("grammar", COMPILED)
def test_the_program_reads_every_sample_item_as_lark_does(grammar: str) -> None:
    program, lark = program_for(grammar), load_grammar(grammar)
    assert program is not None
    for text in sample_items().get(grammar, []):
        read_alike(program, lark, text)


def test_every_dialect_of_a_compiled_grammar_gives_it_sample_items() -> None:
    used = {d.grammar for d in DIALECTS.values()}
    assert all(read_items(g) for g in COMPILED if g in used), [g for g in COMPILED if g in used and not read_items(g)]


_MARKUP = ["<", ">", "</", "<|", "|>", "```", "```json\n", "{", "}", '"', "\\", ":", ":0", "=", "functions.", "json",
           "<think>", "</think>", "\u2581", "\uff5c"]
_SPACES = [" ", "\n", "\t", "  \n ", "\r\n"]


def _literals(grammar: str) -> list[str]:
    return sorted(t.pattern.value for t in load_grammar(grammar).terminals if t.pattern.type == "str")


@st.composite
def variations(draw: st.DrawFn, grammar: str) -> str:
    """A sample item of ``grammar``, cut into Lark's tokens, then edited at token boundaries."""
    lark = load_grammar(grammar)
    text = draw(st.sampled_from(read_items(grammar)))
    tokens = [text[t.start_pos:t.end_pos] for t in lark.parse_interactive(text).exhaust_lexer()]
    piece = st.one_of(st.sampled_from(_SPACES), st.sampled_from(_MARKUP), st.sampled_from(_literals(grammar) or [" "]),
                      LOOKALIKES, st.text(max_size=4))
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(tokens)))
        edit = draw(st.sampled_from(["insert", "drop", "double", "cut", "space"]))
        if edit == "insert" or i == len(tokens):
            tokens.insert(i, draw(piece))
        elif edit == "drop":
            del tokens[i]
        elif edit == "double":
            tokens.insert(i, tokens[i])
        elif edit == "cut":
            tokens[i] = tokens[i][: draw(st.integers(0, len(tokens[i])))]
        else:
            tokens[i] = draw(st.sampled_from(_SPACES)) + tokens[i]
    return "".join(tokens)


@pytest.mark.parametrize("grammar", [g for g in COMPILED if g in {d.grammar for d in DIALECTS.values()}])
def test_variations_of_the_samples_read_as_lark_reads_them(grammar: str) -> None:
    program, lark = program_for(grammar), load_grammar(grammar)
    assert program is not None

    @settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(text=variations(grammar))
    def check(text: str) -> None:
        read_alike(program, lark, text)

    check()


# --------------------------------------------------------------------------- the decoder

def test_the_decoder_reads_a_well_formed_item_without_lark(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_lark(name: str) -> Lark:
        raise AssertionError(f"Lark was asked to parse {name}")

    item = '<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>'
    monkeypatch.setattr(decoders, "load_grammar", no_lark)
    assert decoders.kimi_calls(item, None) == ([("get_weather", {"city": "Paris"})], False)


def test_an_item_the_program_does_not_read_gets_lark_s_error() -> None:
    item = "<|tool_call_begin|>functions.get_weather:0 no argument marker"
    assert program_for("kimi_k2").tree(item) is None  # type: ignore[union-attr]
    with pytest.raises(ArgumentError, match="kimi_k2: unreadable block"):
        decoders.kimi_calls(item, None)


# --------------------------------------------------------------------------- small grammars

_LEXER_CHOICES = r"""
start: _OPEN _WS? NAME _WS? (_SEP ARGS?)? _CLOSE?
NAME: /[a-z]+/
ARGS.1: /.+?(?=>\s*\Z)|.+/s
_OPEN: "<"
_SEP: ":"
_CLOSE: ">"
_WS: /\s+/
"""
# Shaping: [x] placeholders, ?rule, aliases, !rule, anonymous tokens, _rules spliced, a repetition of a group.
_SHAPES = r"""
start: head (_WS? item)* [tail] _WS?
head: "h" NAME
item: "(" KEY "=" VALUE? ")" -> pair
    | "!" KEY
?tail: "t" NAME
     | "t" NAME _extra
_extra: "+" NAME
!mark: "m" KEY
NAME: /[a-z]+/
KEY: /[a-z]/
VALUE: /[^()]+/
_WS: /\s+/
"""
# Sequences that begin alike (a repetition, then an optional group or not), as the key/value family writes them.
_FAMILIES = r"""
start: _WS? NAME (_WS? pair)* (_WS? open)? _WS? END? _WS?
pair: "<" KEY ">" VALUE? ";"
open: "<" KEY ">" REST
NAME: /[a-z]+/
KEY: /[a-z]/
VALUE.2: /[^;<>]+(?=;)/
REST.1: /[^;<>]+\Z/
END: "."
_WS: /\s+/
"""
# What Lark's lexer tries before E depends on which of "<", K, V was read just before it.
_NEAREST = r"""
start: _OPEN K? V? E
K.3: /k+/
V.2: /[kv]+/
E: /[kve>]+/
_OPEN: "<"
"""
_KEPT = r"""
!start: "a" B? "c" mark?
mark: "m" B
B: /b+/
"""


def _small(grammar: str) -> Lark:
    return Lark(grammar, parser="lalr")


def _edited(seeds: list[str], alphabet: str) -> st.SearchStrategy[str]:
    """A seed with up to four characters of ``alphabet`` put in or taken out, anywhere."""
    def edit(seed: str, edits: list[tuple[int, str, bool]]) -> str:
        text = seed
        for at, char, insert in edits:
            at %= len(text) + 1
            text = text[:at] + char + text[at:] if insert else text[:at] + text[at + 1:]
        return text

    return st.builds(edit, st.sampled_from(seeds), st.lists(st.tuples(st.integers(0, 40), st.sampled_from(alphabet),
                                                                       st.booleans()), max_size=4))


@pytest.mark.parametrize("grammar, seeds, alphabet", [
    (_LEXER_CHOICES, ["<ab>", "< ab :x>", "<ab:", "<ab:>", "<ab: >>", "<ab  :a:b>"], "<>: ab\n"),
    (_SHAPES, ["hab", "hab(a=1)!b", "hab (a=)tx", "hab!atx+yz ", "hx(b=q q) (c=r)!dty"], "ht(!=)+ ab1\n"),
    (_KEPT, ["ac", "abbc", "acmb", "abcmbb"], "abcm "),
    (_NEAREST, ["<kkvv>", "<vk>", "<kve", "<e", "<kk>", "<v>"], "<kve>"),
    (_FAMILIES, ["ab", "ab<c>x;", "ab <c>x; <d>;", "ab<c>rest", "ab <c>x; <d>rest", "ab . ", " ab<c>;."], "ab<c>x; .\n"),
])
def test_small_grammars_read_as_lark_reads_them(grammar: str, seeds: list[str], alphabet: str) -> None:
    lark = _small(grammar)
    program = compile_grammar(lark)
    assert all(program.tree(s) is not None and same(program.tree(s), lark.parse(s)) for s in seeds)

    @settings(max_examples=examples(400), deadline=None)
    @given(text=_edited(seeds, alphabet))
    def check(text: str) -> None:
        read_alike(program, lark, text)

    check()


# In a repetition the regex's lookahead before E cannot ask which place came just before (groups repeat): it
# refuses what Lark refuses after any of them, so "<vv" (V then E "v", which V also matches) is left to Lark.
_REPEATED_CONTEXT = r"""
start: _item+
_item: _OPEN K? V? E
K.3: /k+/
V.2: /[kv]/
E: /[kve>]+/
_OPEN: "<"
"""


def test_where_a_lookahead_cannot_tell_the_program_leaves_the_text_to_lark_never_misreads_it() -> None:
    lark = _small(_REPEATED_CONTEXT)
    program = compile_grammar(lark)
    seeds = ["<vv", "<kv>", "<vv<vv", "<v><vv", "<e<kvv"]

    @settings(max_examples=examples(400), deadline=None)
    @given(text=_edited(seeds, "<kve>"))
    def check(text: str) -> None:
        mine = program.tree(text)
        assert mine is None or same(mine, lark.parse(text)), text

    check()


def test_lark_s_lexer_order_decides_between_two_terminals_that_both_match() -> None:
    lark = _small(_LEXER_CHOICES)
    program = compile_grammar(lark)
    # After ":", ARGS (priority 1) is tried before ">": "<ab:>" reads ">" as the arguments, as Lark does.
    assert program.tree("<ab:>") == lark.parse("<ab:>") == Tree("start", [Token("NAME", "ab"), Token("ARGS", ">")])
    assert program.tree("<ab:x>") == Tree("start", [Token("NAME", "ab"), Token("ARGS", "x")])


@pytest.mark.parametrize("grammar, reason", [
    ("start: value\n?value: \"[\" value \"]\" | NAME\nNAME: /[a-z]+/", "recursive"),
    ("start: items\nitems: items NAME | NAME\nNAME: /[a-z]+/", "left-recursive and not inlined"),
    ("start: NAME+\nNAME: /[a-z]+/\n%ignore \" \"", "ignores terminals"),
    ("start: WORD | IF \"!\"\nWORD: /[a-z]+/\nIF: \"if\"", "keyword"),
])
def test_grammars_the_program_does_not_mirror_are_left_to_lark(grammar: str, reason: str) -> None:
    with pytest.raises(NotRegular, match=reason):
        compile_grammar(_small(grammar))
