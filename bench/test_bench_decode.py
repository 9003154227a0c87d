"""pytest-benchmark: one typical tag item (3 parameters, ~200 characters) decoded by its grammar
alone, by the lenient linear decoder alone, and by the dialect's decoder (fast path first).

Run: pytest bench/test_bench_decode.py --benchmark-only --benchmark-group-by=param:dialect
Whole-stream figures per dialect are in test_bench_core.py (test_dialect).
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from streamparse.dialects import DIALECTS
from streamparse.dialects.decoders import _TagCalls, grammar_decoder
from streamparse.dialects.xml_params import XmlParams

qwen3_calls, minimax_calls = DIALECTS["qwen3_coder"].decode, DIALECTS["minimax_m2"].decode
qwen3_grammar_calls, minimax_grammar_calls = (DIALECTS[d].markup.grammar_calls(d)
                                              for d in ("qwen3_coder", "minimax_m2"))
glm_calls, glm_grammar_calls = DIALECTS["glm45"].decode, grammar_decoder("glm45", _TagCalls())
from streamparse.dialects import warm_up

_CODE = "def main():\n    print('hello world')\n    return 0  # tidy up the output\n"
ITEMS = {
    "qwen3_coder": "<function=write_file>\n<parameter=path>\nsrc/app/main.py\n</parameter>\n"
                   f"<parameter=content>\n{_CODE}</parameter>\n<parameter=mode>\noverwrite\n</parameter>\n</function>",
    "minimax_m2": '<invoke name="write_file">\n<parameter name="path">src/app/main.py</parameter>\n'
                  f'<parameter name="content">{_CODE}</parameter>\n<parameter name="mode">overwrite</parameter>\n</invoke>',
    "glm45": "write_file\n<arg_key>path</arg_key>\n<arg_value>src/app/main.py</arg_value>\n"
             f"<arg_key>content</arg_key>\n<arg_value>{_CODE}</arg_value>\n<arg_key>mode</arg_key>\n<arg_value>overwrite</arg_value>\n",
}
_LENIENT = {
    "qwen3_coder": XmlParams(r"\s*<function=([^>\n]*)>", r"<parameter=([^>]*)>", r"</parameter>", r"</function>"),
    "minimax_m2": XmlParams(r"""\s*<invoke\s+name\s*=\s*["']?([^"'>]*)["']?\s*>""",
                            r"""<parameter\s+name\s*=\s*["']?([^"'>]*)["']?\s*>""", r"</parameter>", r"</invoke>"),
}
DECODERS: dict[str, dict[str, Callable[[str, Any], Any]]] = {
    "qwen3_coder": {"grammar": qwen3_grammar_calls, "lenient": _LENIENT["qwen3_coder"], "decoder": qwen3_calls},
    "minimax_m2": {"grammar": minimax_grammar_calls, "lenient": _LENIENT["minimax_m2"], "decoder": minimax_calls},
    "glm45": {"grammar": glm_grammar_calls, "decoder": glm_calls},
}
CASES = [(dialect, path) for dialect, paths in DECODERS.items() for path in paths]


@pytest.mark.parametrize("dialect, path", CASES)
def test_decode_item(benchmark, dialect: str, path: str) -> None:
    warm_up()
    item, decode = ITEMS[dialect], DECODERS[dialect][path]
    expected = DECODERS[dialect]["grammar"](item, None)
    assert benchmark(decode, item, None) == expected
    if benchmark.stats:  # None under --benchmark-disable
        benchmark.extra_info.update(chars=len(item), us=round(benchmark.stats.stats.mean * 1e6, 2))
