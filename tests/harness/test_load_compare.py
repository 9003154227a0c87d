"""``baselines.load_compare`` is the one reader of a ``--compare module:callable`` spec (the CLI only words its
refusal): what it accepts runs as a batch session; what it refuses is a CompareError naming the wrong part."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

from streamparse.harness.baselines import CompareError, load_compare


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The current directory, fresh; the path as it was and no module of this folder left behind, afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    left = [name for name, mod in sys.modules.items() if (getattr(mod, "__file__", None) or "").startswith(str(tmp_path))]
    for name in left:
        del sys.modules[name]


def test_a_module_in_the_current_directory_becomes_a_batch_parser(here: Path) -> None:
    (here / "joined_parser.py").write_text(
        "def parse(deltas):\n    return ''.join(deltas).upper(), [('f', '{}')]\n", encoding="utf-8")
    name, factory = load_compare("joined_parser:parse")
    session = factory(None)
    assert name == "joined_parser:parse"
    assert session.feed("ab") == ("", []) and session.feed("c") == ("", [])
    assert session.close() == ("ABC", [("f", "{}")]) and session.held() is None


@pytest.mark.parametrize("source, spec, words", [
    (None, "nocolon", "--compare wants module:callable"),
    (None, "mod:", "--compare wants module:callable"),
    (None, "absent_mod_x:f", "no module 'absent_mod_x' in "),
    ("raise KeyError('k')\n", "broken_mod_y:f", "importing 'broken_mod_y' failed: KeyError: 'k'"),
    ("f = 'text'\n", "plain_mod_z:f", "has a non-callable 'f'"),
    ("g = len\n", "plain_mod_w:f", "has no 'f'"),
])
def test_a_spec_naming_no_callable_is_one_compare_error(here: Path, source: str | None, spec: str,
                                                        words: str) -> None:
    if source is not None:
        (here / f"{spec.partition(':')[0]}.py").write_text(source, encoding="utf-8")
    with pytest.raises(CompareError) as caught:
        load_compare(spec)
    assert words in str(caught.value) and "\n" not in str(caught.value)
