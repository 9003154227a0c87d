"""The stores behind previous_response_id, item_reference and GET/DELETE /v1/responses/{id}: one contract, held by
the memory store and by the Redis store (a real redis-server): owners kept apart, bounded in count and size,
expiring, items only while their answer is kept, a chain's messages kept once, a dead Redis a prompt error."""

from __future__ import annotations

from typing import AsyncIterator, Callable

import anyio
import pytest

from streamparse.proxy.redis_store import PREFIX, RedisStore
from streamparse.proxy.response_store import Answer, MemoryStore, ResponseStore, StoreUnavailable
from tests.redis_server import RedisServer, redis_server  # noqa: F401 (a fixture)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the redis package's client runs on asyncio


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def answer(n: int, said: str = "", previous: Answer | None = None, text: str = "") -> Answer:
    """Turn ``n``: the user says ``said`` (default: the turn's number), the model answers ``text``."""
    response = {"id": f"resp_{n}", "object": "response",
                "output": [{"id": f"msg_{n}", "type": "message", "role": "assistant",
                            "content": [{"type": "output_text", "text": text or f"answer {n}"}]},
                           {"id": f"fc_{n}", "type": "function_call", "call_id": f"call_{n}", "name": "f",
                            "arguments": "{}"}]}
    added = [{"role": "user", "content": said or str(n)}, {"role": "assistant", "content": text or f"answer {n}"}]
    earlier = [*previous.earlier, *previous.added] if previous is not None else []
    given = [{"id": f"in_{n}", "type": "message", "role": "user", "content": [{"type": "input_text", "text": said}]}]
    return Answer(response, given, added, previous.response_id if previous else None, earlier)


Factory = Callable[..., ResponseStore]


async def chain(store: ResponseStore, *said: str) -> list[Answer]:
    """Turns 0, 1, ... stored for alice, each continuing the one before; the user says ``said[n]``."""
    turns: list[Answer] = []
    for n, words in enumerate(said):
        turns.append(answer(n, words, previous=turns[-1] if turns else None))
        await store.put("alice", turns[-1])
    return turns


@pytest.fixture(params=["memory", "redis"])
async def make_store(request: pytest.FixtureRequest) -> AsyncIterator[Factory]:
    made: list[ResponseStore] = []
    server: RedisServer | None = None
    if request.param == "redis":
        server = RedisServer().start()

    def make(size: int = 100, ttl: float = 60, max_chars: int = 1 << 20) -> ResponseStore:
        store: ResponseStore
        if server is None:
            store = MemoryStore(size, ttl, max_chars)
        else:
            store = RedisStore(server.url, size, ttl, max_chars, timeout=2)
            server.command("FLUSHALL")
        made.append(store)
        return store

    yield make
    for store in made:
        await store.aclose()
    if server is not None:
        server.stop()


async def test_a_chain_reads_back_whole_and_in_order(make_store: Factory) -> None:
    store = make_store()
    *_, third = await chain(store, "hello", "more", "again")
    stored = await store.get("alice", "resp_2", conversation=True)
    assert stored is not None
    assert [m["content"] for m in stored.messages] == ["hello", "answer 0", "more", "answer 1", "again", "answer 2"]
    assert stored.response == third.response and stored.input_items == third.input_items
    plain = await store.get("alice", "resp_2")
    assert plain is not None and plain.messages == [] and plain.response["id"] == "resp_2"
    found = await store.items("alice", ["msg_0", "fc_1", "in_2", "nope"])
    assert set(found) == {"msg_0", "fc_1", "in_2"} and found["fc_1"]["call_id"] == "call_1"


async def test_one_owner_never_finds_another_owners_answers(make_store: Factory) -> None:
    store = make_store()
    await store.put("alice", answer(0, "secret"))
    assert await store.get("bob", "resp_0") is None
    assert await store.get("bob", "resp_0", conversation=True) is None
    assert await store.items("bob", ["msg_0", "fc_0", "in_0"]) == {}
    assert await store.delete("bob", "resp_0") is False
    assert await store.get("alice", "resp_0") is not None  # bob's delete touched nothing
    # bob storing an answer under the same id is bob's own: alice's stays hers
    await store.put("bob", answer(0, "bob's"))
    mine = await store.get("alice", "resp_0", conversation=True)
    assert mine is not None and mine.messages[0]["content"] == "secret"


async def test_the_size_bound_drops_the_oldest_and_its_items(make_store: Factory) -> None:
    store = make_store(size=2)
    for n in range(3):
        await store.put("alice", answer(n))
    assert await store.get("alice", "resp_0") is None and await store.items("alice", ["msg_0"]) == {}
    assert await store.get("alice", "resp_1") is not None and await store.get("alice", "resp_2") is not None
    assert set(await store.items("alice", ["fc_1", "msg_2"])) == {"fc_1", "msg_2"}


async def test_the_character_budget_drops_the_oldest_and_refuses_a_giant(make_store: Factory) -> None:
    store = make_store(max_chars=6000)
    for n in range(4):
        await store.put("alice", answer(n, text="x" * 1500))
    assert await store.get("alice", "resp_0") is None and await store.get("alice", "resp_3") is not None
    await store.put("alice", answer(9, text="y" * 7000))
    assert await store.get("alice", "resp_9") is None and await store.get("alice", "resp_3") is not None


async def test_storing_an_id_again_replaces_it(make_store: Factory) -> None:
    store = make_store()
    await store.put("alice", answer(0))
    again = Answer({"id": "resp_0", "output": []}, [], [{"role": "user", "content": "again"}])
    await store.put("alice", again)
    assert await store.items("alice", ["msg_0"]) == {}
    stored = await store.get("alice", "resp_0", conversation=True)
    assert stored is not None and stored.messages == [{"role": "user", "content": "again"}]


async def test_delete_forgets_the_answer_and_its_items_but_not_what_continued_it(make_store: Factory) -> None:
    store = make_store()
    await chain(store, "hello", "more")
    assert await store.delete("alice", "resp_0") is True
    assert await store.get("alice", "resp_0") is None and await store.items("alice", ["msg_0"]) == {}
    assert await store.delete("alice", "resp_0") is False
    later = await store.get("alice", "resp_1", conversation=True)
    assert later is not None and [m["content"] for m in later.messages][:2] == ["hello", "answer 0"]


async def test_ids_too_long_to_be_minted_are_misses(make_store: Factory) -> None:
    store = make_store()
    huge = "resp_" + "x" * 5_000_000
    assert await store.get("alice", huge) is None and await store.items("alice", [huge]) == {}
    assert await store.delete("alice", huge) is False


async def test_the_memory_store_expires_answers() -> None:
    clock = Clock()
    store = MemoryStore(size=10, ttl=5, clock=clock)
    await store.put("alice", answer(0))
    clock.now = 4.9
    assert await store.get("alice", "resp_0") is not None and await store.items("alice", ["msg_0"])
    clock.now = 5.0
    assert await store.items("alice", ["msg_0"]) == {} and await store.get("alice", "resp_0") is None
    assert len(store) == 0
    await store.put("alice", answer(1))
    clock.now = 20
    await store.put("alice", answer(2))  # putting drops what expired meanwhile
    assert len(store) == 1


async def test_redis_expiry_is_redis_own_and_a_conversation_lives_as_long_as_its_newest_answer(
        redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url, size=100, ttl=1.0, max_chars=1 << 20, timeout=2)
    try:
        first = answer(0, "hello")
        await store.put("alice", first)
        await anyio.sleep(0.6)
        second = answer(1, "more", previous=first)
        await store.put("alice", second)  # its conversation now lives a second from here
        await anyio.sleep(0.6)
        stored = await store.get("alice", "resp_1", conversation=True)
        assert stored is not None and stored.messages[0]["content"] == "hello"  # resp_0's turn, kept for resp_1
        assert await store.get("alice", "resp_0") is None  # an answer itself expires ttl after it was stored
        assert await store.items("alice", ["msg_0"]) == {} and await store.items("alice", ["msg_1"])
        await anyio.sleep(1.2)
        assert await store.get("alice", "resp_1") is None and await store.items("alice", ["msg_1"]) == {}
        assert redis_server.command("EXISTS", f"{PREFIX}c:alice:resp_0").startswith(b":0")
    finally:
        await store.aclose()


async def test_redis_keeps_each_turn_once_not_the_whole_chain_per_turn(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url, size=1000, ttl=60, max_chars=1 << 26, timeout=2)
    try:
        previous = None
        for n in range(40):
            turn = answer(n, "q" * 1000, previous=previous)
            await store.put("alice", turn)
            previous = turn
        stored = await store.get("alice", "resp_39", conversation=True)
        assert stored is not None and len(stored.messages) == 80
        total = int(redis_server.command("GET", f"{PREFIX}chars").split(b"\r\n")[1])
        one_turn = len(redis_server.command("HGET", f"{PREFIX}c:alice:resp_0", "m:resp_39"))
        assert total < 40 * 4 * one_turn  # linear in the turns (a copy per turn would be ~20x one turn's msgs each)
        assert b"q" * 1000 not in redis_server.command("HGET", f"{PREFIX}c:alice:resp_0", "r:resp_39")
    finally:
        await store.aclose()


async def test_a_conversation_longer_than_the_budget_never_breaks(make_store: Factory) -> None:
    """More turns than ``size``, or than ``max_chars`` holds: every turn continues the one before, whole; in
    Redis the conversation starts anew from the turn that would outgrow the budget, holding all of it."""
    for store in (make_store(size=5), make_store(max_chars=9000)):
        previous = None
        for n in range(14):
            turn = answer(n, f"turn {n}", previous=previous)
            await store.put("alice", turn)
            stored = await store.get("alice", turn.response_id, conversation=True)
            assert stored is not None, n
            assert [m["content"] for m in stored.messages[::2]] == [f"turn {k}" for k in range(n + 1)]
            previous = turn


async def test_an_answer_whose_earlier_answer_is_gone_is_stored_whole(make_store: Factory) -> None:
    """The earlier answer was read when the request came, and deleted (or evicted) while the model wrote: the new
    answer is kept with its whole conversation, and can be continued."""
    store = make_store()
    first = answer(0, "hello")
    await store.put("alice", first)
    second = answer(1, "more", previous=first)
    assert await store.delete("alice", "resp_0")
    await store.put("alice", second)
    stored = await store.get("alice", "resp_1", conversation=True)
    assert stored is not None and [m["content"] for m in stored.messages] == ["hello", "answer 0", "more", "answer 1"]


async def test_an_item_named_by_two_answers_stays_while_the_newer_is_kept(make_store: Factory) -> None:
    """The Vercel AI SDK's steps carry the earlier step's items on: the newest answer holding an item keeps it,
    whatever happens to an older one."""
    store = make_store(size=2)
    older = answer(1)
    await store.put("alice", older)
    carried = Answer({"id": "resp_2", "output": []}, [older.response["output"][1]], [{"role": "user", "content": "x"}])
    await store.put("alice", carried)
    assert await store.delete("alice", "resp_1")
    assert set(await store.items("alice", ["fc_1", "msg_1"])) == {"fc_1"}
    await store.put("alice", answer(3))
    await store.put("alice", answer(4))  # size 2: resp_2 goes, and the item with it
    assert await store.items("alice", ["fc_1"]) == {}


async def test_a_redis_that_is_gone_is_a_prompt_store_error(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url, size=100, ttl=60, max_chars=1 << 20, timeout=1)
    try:
        await store.put("alice", answer(0))
        await store.ping()
        redis_server.stop()
        with anyio.fail_after(15):  # a guard against a hang, not a measurement
            for call in (store.ping(), store.get("alice", "resp_0"), store.items("alice", ["msg_0"]),
                         store.put("alice", answer(1)), store.delete("alice", "resp_0")):
                with pytest.raises(StoreUnavailable) as info:
                    await call
                assert "shared Redis store" in str(info.value) and "127.0.0.1" not in str(info.value)
    finally:
        await store.aclose()


async def test_a_redis_that_never_answers_is_cut_at_the_timeout() -> None:
    """A listener that accepts and says nothing (a hung Redis): the store's own timeout ends the wait."""
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        store = RedisStore(f"redis://127.0.0.1:{silent.getsockname()[1]}/0", 100, 60, 1 << 20, timeout=0.5)
        try:
            with anyio.fail_after(15), pytest.raises(StoreUnavailable, match="did not answer"):
                await store.get("alice", "resp_0")
        finally:
            await store.aclose()


def test_a_store_url_keeps_its_address_out_of_messages_and_its_credentials_out_of_logs() -> None:
    for url in ("redis://:hunter2-secret@127.0.0.1:1/0", "redis://127.0.0.1:1/0?password=hunter2-secret"):
        store = RedisStore(url, 10, 60, 1000, timeout=0.5)
        assert store.description == "the shared Redis store" and store.location == "redis://127.0.0.1:1/0"

