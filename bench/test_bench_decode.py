"""pytest-benchmark: one typical tag item (3 parameters, ~200 characters) decoded by the dialect's decoder (its
grammar's compiled program, folded as it reads) and by Lark's own parser of the same grammar, folded by the same rules.

Run: pytest bench/test_bench_decode.py --benchmark-only --benchmark-group-by=param:dialect
Whole-stream figures per dialect are in test_bench_core.py (test_dialect).
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from streamparse.arguments.grammar import load_grammar
from streamparse.dialects import DIALECTS, warm_up
from streamparse.dialects.decoders import GrammarDecoder
from streamparse.dialects.grammar_program import fold_tree, program_for

_CODE = "def main():\n    print('hello world')\n    return 0  # tidy up the output\n"
ITEMS = {
    "qwen3_coder": "<function=write_file>\n<parameter=path>\nsrc/app/main.py\n</parameter>\n"
                   f"<parameter=content>\n{_CODE}</parameter>\n<parameter=mode>\noverwrite\n</parameter>\n</function>",
    "minimax_m2": '<invoke name="write_file">\n<parameter name="path">src/app/main.py</parameter>\n'
                  f'<parameter name="content">{_CODE}</parameter>\n<parameter name="mode">overwrite</parameter>\n</invoke>',
    "glm45": "write_file\n<arg_key>path</arg_key>\n<arg_value>src/app/main.py</arg_value>\n"
             f"<arg_key>content</arg_key>\n<arg_value>{_CODE}</arg_value>\n<arg_key>mode</arg_key>\n<arg_value>overwrite</arg_value>\n",
}


def _by_lark(dialect: str) -> Callable[[str, Any], Any]:
    """The item parsed by Lark, folded by the actions the decoder's program folds with (its calls, unrefined)."""
    decode = DIALECTS[dialect].decode
    assert isinstance(decode, GrammarDecoder)
    grammar, actions = load_grammar(dialect), decode.actions
    return lambda text, _: fold_tree(grammar.parse(text), actions)


DECODERS: dict[str, dict[str, Callable[[str, Any], Any]]] = {
    dialect: {"decoder": DIALECTS[dialect].decode, "lark": _by_lark(dialect)} for dialect in ITEMS
}
CASES = [(dialect, path) for dialect, paths in DECODERS.items() for path in paths]


@pytest.mark.parametrize("dialect, path", CASES)
def test_decode_item(benchmark, dialect: str, path: str) -> None:
    warm_up()
    item, decode = ITEMS[dialect], DECODERS[dialect][path]
    assert program_for(dialect) is not None
    expected = DIALECTS[dialect].decode(item, None)
    got = benchmark(decode, item, None)
    assert got == expected if path == "decoder" else [call for call, _ in got] == expected[0]
    if benchmark.stats:  # None under --benchmark-disable
        benchmark.extra_info.update(chars=len(item), us=round(benchmark.stats.stats.mean * 1e6, 2))
