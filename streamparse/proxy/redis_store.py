"""The Responses store in Redis (``responses_store = "redis://…"``): one store for every worker and replica.

Layout, under ``streamparse:responses:`` (``P``); an owner (``owners``) is part of every key, so a lookup by
another owner's id is a miss by the same path as an unknown id:
- ``P c:OWNER:CONV``: one hash per conversation (``CONV``: the id of its first answer), holding for each answer
  ``RID`` in it: ``p:RID`` (the answer it continued), ``m:RID`` (only that turn's chat messages: a chain is read by
  following ``p:``, so each turn's messages are kept once), ``r:RID`` (the response object), ``n:RID`` (the
  request's input items), ``t:RID`` (its items' ids) and ``s:RID`` (the size of what a delete removes);
- ``P r:OWNER:RID``: the conversation an answer is in;
- ``P i:OWNER:ITEM``: an item an ``item_reference`` may name, as ``RID\\0JSON`` (the newest answer holding it);
- ``P lru`` (conversations by last use, Redis's own clock), ``P sizes`` / ``P counts`` (each conversation's bytes
  and answers) and ``P chars`` / ``P answers`` (their sums): the budget.

Invariants: every write is one Lua script, so atomic, and costs the same however long the conversation (a read of
a chain follows it, as it must to return it); an answer's keys expire ``ttl`` after it was stored and its
conversation ``ttl`` after the last answer stored in it (Redis expiry), so an answer can be continued for ``ttl``;
at most ``size`` answers of at most ``max_chars`` bytes of JSON, the least recently used conversation going first,
never the one just written: a conversation that would outgrow the budget alone, or whose earlier answer is gone,
starts anew from the answer being stored, holding its whole conversation (so a chain is never cut); a deleted
answer keeps what the answers after it need (``p:``, ``m:``); every call ends within ``timeout`` seconds, else
``StoreUnavailable`` (no retries: a dead Redis costs one timeout). Messages name "the shared Redis store", never
its address (``location`` is for the operator's logs). Lua builds keys from the prefix, so the store runs on one
Redis (or a primary), not a Redis Cluster.
"""

from __future__ import annotations

import re
from typing import Any, Sequence
from urllib.parse import urlsplit

import anyio
import orjson
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from .response_store import Answer, StoreUnavailable, Stored, usable_id

__all__ = ["RedisStore", "PREFIX", "location_of"]

PREFIX = "streamparse:responses:"
MAX_CHAIN = 100_000  # answers one chain may hold when read; past it the chain reads as a miss
_ITEM_ID = re.compile(r"[A-Za-z0-9_.-]+")  # ids kept as item keys (and space-separated in ``t:``)

# Shared by the write scripts: ``forget(member)`` drops a conversation and its budget entries (its answers' and
# items' keys point at nothing from then on, and expire); ``now`` is Redis's clock in ms.
_COMMON = """
local P = ARGV[1]
local lru, sizes, counts, chars, answers = P .. 'lru', P .. 'sizes', P .. 'counts', P .. 'chars', P .. 'answers'
local function forget(member)
  redis.call('DECRBY', chars, tonumber(redis.call('HGET', sizes, member) or '0'))
  redis.call('DECRBY', answers, tonumber(redis.call('HGET', counts, member) or '0'))
  redis.call('HDEL', sizes, member)
  redis.call('HDEL', counts, member)
  redis.call('ZREM', lru, member)
  redis.call('DEL', P .. 'c:' .. member)
end
local function holds(v, rid)
  return v and string.sub(v, 1, string.len(rid) + 1) == rid .. '\\0'
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

# ARGV: prefix, owner, rid, prev, msgs, resp, input, item ids (space-separated), chars, removable chars, ttl ms,
# size, max chars, then item id / item JSON pairs. -> 'ok', or 'compact' (nothing written: store it again with its
# whole conversation and no prev).
_PUT = _COMMON + """
local owner, rid, prev = ARGV[2], ARGV[3], ARGV[4]
local c, removable, ttl, size, maxc = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12]),
  tonumber(ARGV[13])
for _, m in ipairs(redis.call('ZRANGEBYSCORE', lru, '-inf', now - ttl, 'LIMIT', 0, 1000)) do forget(m) end
local conv = rid
if prev ~= '' then
  conv = redis.call('GET', P .. 'r:' .. owner .. ':' .. prev)
  if not conv or redis.call('HEXISTS', P .. 'c:' .. owner .. ':' .. conv, 'm:' .. prev) == 0 then return 'compact' end
  local m = owner .. ':' .. conv
  if tonumber(redis.call('HGET', counts, m) or '0') + 1 > size
     or tonumber(redis.call('HGET', sizes, m) or '0') + c > maxc then return 'compact' end
end
local member = owner .. ':' .. conv
local key = P .. 'c:' .. member
local rkey = P .. 'r:' .. owner .. ':' .. rid
local before = redis.call('GET', rkey)
if before then  -- the same id stored again: the earlier one is forgotten first
  local bm = owner .. ':' .. before
  local bkey = P .. 'c:' .. bm
  local gone = redis.call('HMGET', bkey, 's:' .. rid, 'm:' .. rid, 'p:' .. rid, 't:' .. rid)
  for iid in string.gmatch(gone[4] or '', '%S+') do
    local ikey = P .. 'i:' .. owner .. ':' .. iid
    if holds(redis.call('GET', ikey), rid) then redis.call('DEL', ikey) end
  end
  if gone[1] then
    local freed = tonumber(gone[1]) + string.len(gone[2] or '') + string.len(gone[3] or '')
    redis.call('HDEL', bkey, 'r:' .. rid, 'n:' .. rid, 't:' .. rid, 's:' .. rid, 'm:' .. rid, 'p:' .. rid)
    redis.call('HINCRBY', sizes, bm, -freed)
    redis.call('HINCRBY', counts, bm, -1)
    redis.call('DECRBY', chars, freed)
    redis.call('DECRBY', answers, 1)
  end
end
redis.call('HSET', key, 'p:' .. rid, prev, 'm:' .. rid, ARGV[5], 'r:' .. rid, ARGV[6], 'n:' .. rid, ARGV[7],
  't:' .. rid, ARGV[8], 's:' .. rid, removable)
redis.call('PEXPIRE', key, ttl)
redis.call('SET', rkey, conv, 'PX', ttl)
for i = 14, #ARGV, 2 do
  redis.call('SET', P .. 'i:' .. owner .. ':' .. ARGV[i], rid .. '\\0' .. ARGV[i + 1], 'PX', ttl)
end
redis.call('HINCRBY', sizes, member, c)
redis.call('HINCRBY', counts, member, 1)
redis.call('INCRBY', chars, c)
redis.call('INCRBY', answers, 1)
redis.call('ZADD', lru, now, member)
local rank = 0
while tonumber(redis.call('GET', answers) or '0') > size or tonumber(redis.call('GET', chars) or '0') > maxc do
  local oldest = redis.call('ZRANGE', lru, rank, rank)[1]
  if not oldest then break end
  if oldest == member then rank = rank + 1 else forget(oldest) end
end
return 'ok'
"""

# ARGV: prefix, owner, rid, conversation (0/1), max chain. -> false, or {resp, input[, msgs newest first...]}
_GET = """
local P, owner, rid, conversation, maxchain = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local conv = redis.call('GET', P .. 'r:' .. owner .. ':' .. rid)
if not conv then return false end
local key = P .. 'c:' .. owner .. ':' .. conv
local r = redis.call('HMGET', key, 'r:' .. rid, 'n:' .. rid, 'p:' .. rid, 'm:' .. rid)
if not r[1] then return false end
if conversation == '0' then return {r[1], r[2]} end
local out = {r[1], r[2], r[4]}
local p, depth = r[3], 0
while p and p ~= '' do
  depth = depth + 1
  if depth > maxchain then return false end
  local a = redis.call('HMGET', key, 'p:' .. p, 'm:' .. p)
  if not a[2] then return false end
  out[#out + 1] = a[2]
  p = a[1]
end
return out
"""

# ARGV: prefix, owner, item ids... -> for each: false, or the item's JSON (its holder still kept)
_ITEMS = """
local P, owner = ARGV[1], ARGV[2]
local out = {}
for i = 3, #ARGV do
  local v = redis.call('GET', P .. 'i:' .. owner .. ':' .. ARGV[i])
  local found = false
  if v then
    local cut = string.find(v, '\\0', 1, true)
    local rid = string.sub(v, 1, cut - 1)
    local conv = redis.call('GET', P .. 'r:' .. owner .. ':' .. rid)
    if conv and redis.call('HEXISTS', P .. 'c:' .. owner .. ':' .. conv, 'r:' .. rid) == 1 then
      found = string.sub(v, cut + 1)
    end
  end
  out[#out + 1] = found
end
return out
"""

# ARGV: prefix, owner, rid. -> 1 when the owner's answer was there.
_DELETE = _COMMON + """
local owner, rid = ARGV[2], ARGV[3]
local rkey = P .. 'r:' .. owner .. ':' .. rid
local conv = redis.call('GET', rkey)
if not conv then return 0 end
local member = owner .. ':' .. conv
local key = P .. 'c:' .. member
local r = redis.call('HMGET', key, 'r:' .. rid, 't:' .. rid, 's:' .. rid)
if not r[1] then return 0 end
for iid in string.gmatch(r[2] or '', '%S+') do
  local ikey = P .. 'i:' .. owner .. ':' .. iid
  if holds(redis.call('GET', ikey), rid) then redis.call('DEL', ikey) end
end
redis.call('HDEL', key, 'r:' .. rid, 'n:' .. rid, 't:' .. rid, 's:' .. rid)
redis.call('DEL', rkey)
local freed = tonumber(r[3] or '0')
if redis.call('HEXISTS', sizes, member) == 1 then
  redis.call('HINCRBY', sizes, member, -freed)
  redis.call('HINCRBY', counts, member, -1)
  redis.call('DECRBY', chars, freed)
  redis.call('DECRBY', answers, 1)
end
return 1
"""


def location_of(url: str) -> str:
    """``redis://host:port/db``: where a store is, for the operator (no user, password or query)."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}{parts.path}"


def _objects(raw: Any) -> list[dict[str, Any]]:
    value = orjson.loads(raw) if raw else []
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


class RedisStore:
    """Answers kept in Redis through the ``redis`` package's asyncio client; see the module invariants."""

    shared = True
    description = "the shared Redis store"

    def __init__(self, url: str, size: int, ttl: float, max_chars: int, timeout: float):
        self.location = location_of(url)
        self.size = size
        self.ttl_ms = max(1, int(ttl * 1000))
        self.max_chars = max_chars
        self.timeout = timeout
        self.client = aioredis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                        retry=Retry(NoBackoff(), 0), retry_on_timeout=False)
        self._put = self.client.register_script(_PUT)
        self._get = self.client.register_script(_GET)
        self._items = self.client.register_script(_ITEMS)
        self._delete = self.client.register_script(_DELETE)

    async def _call(self, what: str, call: Any) -> Any:
        """``await call()`` within the timeout; any failure is ``StoreUnavailable``."""
        try:
            with anyio.fail_after(self.timeout):
                return await call()
        except TimeoutError:
            raise StoreUnavailable(f"{self.description} did not answer {what} within {self.timeout:g} s") from None
        except (RedisError, OSError) as exc:
            raise StoreUnavailable(f"{self.description} failed {what}: {type(exc).__name__}") from None

    async def get(self, owner: str, response_id: str, conversation: bool = False) -> Stored | None:
        if not usable_id(response_id):
            return None
        found = await self._call("a read", lambda: self._get(args=[PREFIX, owner, response_id,
                                                                   "1" if conversation else "0", MAX_CHAIN]))
        if not found:
            return None
        messages = [m for raw in reversed(found[2:]) for m in _objects(raw)] if conversation else []
        return Stored(orjson.loads(found[0]), _objects(found[1]), messages)

    async def items(self, owner: str, item_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        wanted = [i for i in dict.fromkeys(item_ids) if usable_id(i) and _ITEM_ID.fullmatch(i)]
        if not wanted:
            return {}
        values = await self._call("a read", lambda: self._items(args=[PREFIX, owner, *wanted]))
        found = {item_id: orjson.loads(raw) for item_id, raw in zip(wanted, values) if raw}
        return {k: v for k, v in found.items() if isinstance(v, dict)}

    async def put(self, owner: str, answer: Answer) -> None:
        if await self._put_turn(owner, answer, answer.previous_id, answer.added) == b"compact":
            # its conversation would outgrow the budget alone, or its earlier answer is gone: it starts anew
            await self._put_turn(owner, answer, None, [*answer.earlier, *answer.added])

    async def _put_turn(self, owner: str, answer: Answer, previous: str | None,
                        messages: list[dict[str, Any]]) -> bytes:
        msgs, resp, given = orjson.dumps(messages), orjson.dumps(answer.response), orjson.dumps(answer.input_items)
        items = [(i["id"], orjson.dumps(i)) for i in answer.items() if _ITEM_ID.fullmatch(i["id"])]
        removable = len(resp) + len(given) + sum(len(raw) for _, raw in items)
        chars = removable + len(msgs) + len(previous or "")
        if chars > self.max_chars:
            return b"ok"  # larger than the whole budget: not kept (as the memory store)
        ids = " ".join(dict.fromkeys(item_id for item_id, _ in items))
        args: list[Any] = [PREFIX, owner, answer.response_id, previous or "", msgs, resp, given, ids, chars, removable,
                           self.ttl_ms, self.size, self.max_chars]
        args += [part for pair in items for part in pair]
        status: bytes = await self._call("a write", lambda: self._put(args=args))
        return status

    async def delete(self, owner: str, response_id: str) -> bool:
        if not usable_id(response_id):
            return False
        return bool(await self._call("a delete", lambda: self._delete(args=[PREFIX, owner, response_id])))

    async def ping(self) -> None:
        await self._call("a ping", self.client.ping)

    async def aclose(self) -> None:
        await self.client.aclose()
