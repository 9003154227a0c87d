"""The Responses store in Redis (``responses_store = "redis://…"``): one store for every worker and replica.

Layout, under ``streamparse:responses:`` (``P``); an owner (``owners``) is part of every key, so a lookup by
another owner's id is a miss by the same path as an unknown id:
- ``P r:OWNER:ID``: a hash per answer: ``prev`` (the answer it continued), ``msgs`` (only this turn's chat
  messages, as JSON: a chain is read by following ``prev``, so its messages are kept once, not once per turn),
  ``resp`` (the response object), ``input`` (the request's input items), ``items`` (the ids of its items);
- ``P i:OWNER:ITEM``: each item an ``item_reference`` may name, as JSON;
- ``P lru`` (a sorted set of ``OWNER:ID`` by last use, Redis's own clock), ``P sizes`` (each answer's size) and
  ``P chars`` (their sum): the budget.

Invariants: every write is one Lua script, so atomic; keys expire after ``ttl`` (Redis expiry), and storing an
answer renews the expiry of the answers it continues, so a live chain is never cut in its middle; at most
``size`` answers of at most ``max_chars`` bytes of JSON (each turn counted once), the least recently used going
first; a deleted answer keeps only what the answers after it need (``prev``, ``msgs``); every call ends within
``timeout`` seconds, else ``StoreUnavailable`` (no retries: a dead Redis costs one timeout, not several). Lua
builds keys from the prefix, so the store runs on one Redis (or a primary), not a Redis Cluster.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import anyio
import orjson
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from .checks import redact_url
from .response_store import Answer, StoreUnavailable, Stored, usable_id

__all__ = ["RedisStore", "PREFIX"]

PREFIX = "streamparse:responses:"
MAX_CHAIN = 10_000  # answers one conversation may chain; past it the chain reads as a miss
_ITEM_ID = re.compile(r"[A-Za-z0-9_.-]+")  # ids kept as item keys (and space-separated in ``items``)

# Shared by the scripts: forget(member) drops an answer, its items and its budget entry.
_FORGET = """
local P = ARGV[1]
local lru, sizes, total = P .. 'lru', P .. 'sizes', P .. 'chars'
local function forget(member)
  local c = tonumber(redis.call('HGET', sizes, member) or '0')
  redis.call('DECRBY', total, c)
  redis.call('HDEL', sizes, member)
  redis.call('ZREM', lru, member)
  local key = P .. 'r:' .. member
  local items = redis.call('HGET', key, 'items')
  if items then
    local owner = string.match(member, '^[^:]*')
    for iid in string.gmatch(items, '%S+') do redis.call('DEL', P .. 'i:' .. owner .. ':' .. iid) end
  end
  redis.call('DEL', key)
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

# ARGV: prefix, owner, id, prev, msgs, resp, input, items (space-separated), chars, ttl ms, size, max chars,
# max chain, then item id / item JSON pairs.
_PUT = _FORGET + """
local owner, id, prev = ARGV[2], ARGV[3], ARGV[4]
local chars, ttl, size, maxc, maxchain = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11]),
  tonumber(ARGV[12]), tonumber(ARGV[13])
for _, m in ipairs(redis.call('ZRANGEBYSCORE', lru, '-inf', now - ttl, 'LIMIT', 0, 1000)) do forget(m) end
local member = owner .. ':' .. id
if redis.call('HEXISTS', sizes, member) == 1 then forget(member) end
local key = P .. 'r:' .. member
redis.call('HSET', key, 'prev', prev, 'msgs', ARGV[5], 'resp', ARGV[6], 'input', ARGV[7], 'items', ARGV[8])
redis.call('PEXPIRE', key, ttl)
for i = 14, #ARGV, 2 do redis.call('SET', P .. 'i:' .. owner .. ':' .. ARGV[i], ARGV[i + 1], 'PX', ttl) end
redis.call('HSET', sizes, member, chars)
redis.call('INCRBY', total, chars)
redis.call('ZADD', lru, now, member)
local p, depth = prev, 0
while p ~= '' and depth < maxchain do
  local m = owner .. ':' .. p
  local k = P .. 'r:' .. m
  if redis.call('PEXPIRE', k, ttl) == 0 then break end
  redis.call('ZADD', lru, 'XX', now, m)
  local its = redis.call('HGET', k, 'items')
  if its then
    for iid in string.gmatch(its, '%S+') do redis.call('PEXPIRE', P .. 'i:' .. owner .. ':' .. iid, ttl) end
  end
  p = redis.call('HGET', k, 'prev') or ''
  depth = depth + 1
end
while redis.call('ZCARD', lru) > size or tonumber(redis.call('GET', total) or '0') > maxc do
  local oldest = redis.call('ZRANGE', lru, 0, 0)[1]
  if not oldest then break end
  forget(oldest)
end
return 1
"""

# ARGV: prefix, owner, id, conversation (0/1), max chain. -> false, or {resp, input[, msgs newest first...]}
_GET = """
local P, owner, id, conversation, maxchain = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local r = redis.call('HMGET', P .. 'r:' .. owner .. ':' .. id, 'resp', 'input', 'prev', 'msgs')
if not r[1] then return false end
if conversation == '0' then return {r[1], r[2]} end
local out = {r[1], r[2], r[4]}
local p, depth = r[3], 0
while p and p ~= '' do
  depth = depth + 1
  if depth > maxchain then return false end
  local a = redis.call('HMGET', P .. 'r:' .. owner .. ':' .. p, 'prev', 'msgs')
  if not a[2] then return false end
  out[#out + 1] = a[2]
  p = a[1]
end
return out
"""

# ARGV: prefix, owner, id. -> 1 when the owner's answer was there.
_DELETE = _FORGET + """
local member = ARGV[2] .. ':' .. ARGV[3]
local key = P .. 'r:' .. member
local r = redis.call('HMGET', key, 'resp', 'items', 'msgs')
if not r[1] then return 0 end
if r[2] then
  for iid in string.gmatch(r[2], '%S+') do redis.call('DEL', P .. 'i:' .. ARGV[2] .. ':' .. iid) end
end
redis.call('HDEL', key, 'resp', 'input', 'items')
local kept = string.len(r[3] or '')
local before = tonumber(redis.call('HGET', sizes, member) or '0')
if redis.call('HEXISTS', sizes, member) == 1 then
  redis.call('HSET', sizes, member, kept)
  redis.call('DECRBY', total, before - kept)
end
return 1
"""


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value)


def _objects(raw: Any) -> list[dict[str, Any]]:
    value = orjson.loads(raw) if raw else []
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


class RedisStore:
    """Answers kept in Redis through the ``redis`` package's asyncio client; see the module invariants."""

    shared = True

    def __init__(self, url: str, size: int, ttl: float, max_chars: int, timeout: float):
        self.description = f"the Redis store at {redact_url(url)}"
        self.size = size
        self.ttl_ms = max(1, int(ttl * 1000))
        self.max_chars = max_chars
        self.timeout = timeout
        self.client = aioredis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                        retry=Retry(NoBackoff(), 0), retry_on_timeout=False)
        self._put = self.client.register_script(_PUT)
        self._get = self.client.register_script(_GET)
        self._delete = self.client.register_script(_DELETE)

    async def _call(self, what: str, call: Any) -> Any:
        """``await call()`` within the timeout; any failure is ``StoreUnavailable`` (said without credentials)."""
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
        response = orjson.loads(found[0])
        messages = [m for raw in reversed(found[2:]) for m in _objects(raw)] if conversation else []
        return Stored(response, _objects(found[1]), messages)

    async def items(self, owner: str, item_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        wanted = [i for i in dict.fromkeys(item_ids) if usable_id(i) and _ITEM_ID.fullmatch(i)]
        if not wanted:
            return {}
        keys = [f"{PREFIX}i:{owner}:{item_id}" for item_id in wanted]
        values = await self._call("a read", lambda: self.client.mget(keys))
        found = {item_id: orjson.loads(raw) for item_id, raw in zip(wanted, values) if raw}
        return {k: v for k, v in found.items() if isinstance(v, dict)}

    async def put(self, owner: str, answer: Answer) -> None:
        msgs, resp, given = _dumps(answer.added), _dumps(answer.response), _dumps(answer.input_items)
        items = [(i["id"], _dumps(i)) for i in answer.items() if _ITEM_ID.fullmatch(i["id"])]
        chars = len(msgs) + len(resp) + len(given) + sum(len(raw) for _, raw in items)
        if chars > self.max_chars:
            return
        ids = " ".join(dict.fromkeys(item_id for item_id, _ in items))
        args: list[Any] = [PREFIX, owner, answer.response_id, answer.previous_id or "", msgs, resp, given, ids, chars,
                           self.ttl_ms, self.size, self.max_chars, MAX_CHAIN]
        args += [part for pair in items for part in pair]
        await self._call("a write", lambda: self._put(args=args))

    async def delete(self, owner: str, response_id: str) -> bool:
        if not usable_id(response_id):
            return False
        return bool(await self._call("a delete", lambda: self._delete(args=[PREFIX, owner, response_id])))

    async def ping(self) -> None:
        await self._call("a ping", self.client.ping)

    async def aclose(self) -> None:
        await self.client.aclose()

