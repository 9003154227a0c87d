"""The store behind previous_response_id and item_reference: bounded in count, expiring, items only while their
answer is kept."""

from __future__ import annotations

from typing import Any

from streamparse.proxy.response_store import ResponseStore


def answer(n: int) -> dict[str, Any]:
    return {"id": f"resp_{n}", "output": [{"id": f"msg_{n}", "type": "message"}, {"id": f"fc_{n}", "type": "x"}]}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_size_bound_drops_the_oldest_and_its_items() -> None:
    store = ResponseStore(size=2, ttl=60)
    for n in range(3):
        store.put(f"resp_{n}", [{"role": "user", "content": str(n)}], answer(n))
    assert len(store) == 2 and store.get("resp_0") is None and store.item("msg_0") is None
    stored = store.get("resp_2")
    assert stored is not None and stored.messages == [{"role": "user", "content": "2"}]
    assert store.item("fc_1") == {"id": "fc_1", "type": "x"} and store.item("nope") is None


def test_expired_answers_are_never_returned() -> None:
    clock = Clock()
    store = ResponseStore(size=10, ttl=5, clock=clock)
    store.put("resp_0", [], answer(0))
    clock.now = 4.9
    assert store.get("resp_0") is not None and store.item("msg_0") is not None
    clock.now = 5.0
    assert store.item("msg_0") is None and store.get("resp_0") is None and len(store) == 0
    store.put("resp_1", [], answer(1))
    clock.now = 20
    store.put("resp_2", [], answer(2))  # putting drops what expired meanwhile
    assert len(store) == 1


def test_storing_an_id_again_replaces_it() -> None:
    store = ResponseStore(size=10, ttl=60)
    store.put("resp_0", [], answer(0))
    store.put("resp_0", [{"role": "user", "content": "again"}], {"id": "resp_0", "output": []})
    assert len(store) == 1 and store.item("msg_0") is None


def test_the_character_budget_drops_the_oldest_and_refuses_a_giant() -> None:
    store = ResponseStore(size=100, ttl=60, max_chars=2000)
    big = [{"role": "user", "content": "x" * 600}]
    for n in range(4):
        store.put(f"resp_{n}", big, answer(n))
    assert store.chars <= 2000 and store.get("resp_0") is None and store.get("resp_3") is not None
    store.put("resp_giant", [{"role": "user", "content": "y" * 5000}], answer(9))
    assert store.get("resp_giant") is None and store.get("resp_3") is not None
