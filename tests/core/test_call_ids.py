"""The default call ids (``calls.new_call_id``): ``call_`` and 24 hex digits, distinct, untouched by a program's
``random.seed``, and different in a forked child than in its parent."""

from __future__ import annotations

import os
import random
import re

import pytest

from streamparse.core.calls import new_call_id


def test_ids_are_call_and_24_hex_digits_and_distinct() -> None:
    ids = [new_call_id() for _ in range(20_000)]
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", i) for i in ids)
    assert len(set(ids)) == len(ids)
    assert any(i[5] == "0" for i in ids)  # leading zero digits are kept (the width is fixed)


def test_a_programs_random_seed_does_not_make_ids_repeat() -> None:
    random.seed(1234)
    first = new_call_id()
    random.seed(1234)
    assert new_call_id() != first


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_draws_other_ids_than_its_parent() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next ids, to the parent
        os.write(write, " ".join(new_call_id() for _ in range(3)).encode())
        os._exit(0)
    os.close(write)
    mine = [new_call_id() for _ in range(3)]
    os.waitpid(pid, 0)
    with os.fdopen(read) as fh:
        theirs = fh.read().split()
    assert len(theirs) == 3 and not set(theirs) & set(mine)
