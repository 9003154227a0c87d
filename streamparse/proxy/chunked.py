"""The chunked transfer coding, decoded sans I/O from a growing buffer (RFC 9112, section 7.1).

h11 parses each transfer chunk in Python at several µs apiece; a streaming server sends one SSE event per chunk,
so the proxy's upstream bodies (``proxy.body``) and the lean load client (``harness.leanload``) decode it here.

Invariants: the data returned, joined, is exactly the chunks' data in order, however the bytes are cut between
feeds; bytes not yet decodable stay in the buffer, and nothing past the coding's end is consumed; data decoded
before a malformed part is returned first and ``httpx.RemoteProtocolError`` is raised by the next feed; a chunk
header or trailer line longer than 4096 bytes is refused; trailer fields are read and dropped, as httpx drops them.
"""

from __future__ import annotations

import re

import httpx

__all__ = ["Chunks", "dechunk"]

_HEX = re.compile(rb"[0-9A-Fa-f]{1,15}")
_HEAD = re.compile(rb"([0-9A-Fa-f]{1,15})\r\n")  # the usual chunk header: a size alone (anything else: read by line)
_MAX_LINE = 4096  # a chunk header or trailer line longer than this is refused


class Chunks:
    """Chunked transfer coding, decoded from a growing buffer: ``feed`` takes what it can and returns the data."""

    __slots__ = ("left", "crlf", "trailer", "done", "error")

    def __init__(self) -> None:
        self.left = 0  # data bytes still to come in the current chunk
        self.crlf = False  # the CRLF after a chunk's data is next
        self.trailer = False  # after the last chunk: trailer lines until an empty one
        self.done = False
        self.error: httpx.RemoteProtocolError | None = None

    def feed(self, buf: bytearray) -> list[bytes]:
        """The data in ``buf`` (consumed from it); what cannot be decoded yet stays in it. Data decoded before a
        malformed part is returned first; the error is raised by the next call."""
        if self.error is not None:
            raise self.error
        out: list[bytes] = []
        try:
            self._decode(buf, out)
        except httpx.RemoteProtocolError as exc:
            if not out:
                raise
            self.error = exc
        return out

    def _decode(self, buf: bytearray, out: list[bytes]) -> None:
        pos, end = 0, len(buf)
        try:
            if not (self.left or self.crlf or self.trailer):  # whole chunks with a bare size line: one match each
                head = _HEAD.match
                while (m := head(buf, pos)) is not None:
                    start = m.end()
                    stop = start + int(m.group(1), 16)
                    if stop == start or stop + 2 > end or buf[stop:stop + 2] != b"\r\n":
                        break  # the last chunk, a part, or a malformed footer: read below
                    out.append(bytes(buf[start:stop]))
                    pos = stop + 2
            while not self.done:
                if self.left:
                    take = min(self.left, end - pos)
                    if not take:
                        break
                    out.append(bytes(buf[pos:pos + take]))
                    pos += take
                    self.left -= take
                    self.crlf = not self.left
                    continue
                if self.crlf:
                    if end - pos < 2:
                        break
                    if buf[pos:pos + 2] != b"\r\n":
                        raise httpx.RemoteProtocolError(f"malformed chunk footer: {bytes(buf[pos:pos + 2])!r}")
                    pos += 2
                    self.crlf = False
                    continue
                line_end = buf.find(b"\r\n", pos, pos + _MAX_LINE)
                if line_end < 0:
                    if end - pos >= _MAX_LINE:
                        raise httpx.RemoteProtocolError("chunk header or trailer line too long")
                    break
                line = bytes(buf[pos:line_end])
                pos = line_end + 2
                if self.trailer:
                    self.done = not line  # (trailer fields are dropped, as httpx drops them)
                    continue
                size = line.split(b";", 1)[0].rstrip(b" \t")
                if not _HEX.fullmatch(size):
                    raise httpx.RemoteProtocolError(f"illegal chunk header: {line[:80]!r}")
                self.left = int(size, 16)
                self.trailer = not self.left
        finally:
            del buf[:pos]


def dechunk(body: bytes) -> list[bytes]:
    """A whole chunked body's data, chunk by chunk (``httpx.RemoteProtocolError``: malformed, or cut short)."""
    chunks = Chunks()
    parts = chunks.feed(bytearray(body))
    if chunks.error is not None or not chunks.done:
        raise chunks.error or httpx.RemoteProtocolError("the chunked body ends before its last chunk")
    return parts
