"""A GGUF file's metadata: its header and key-value section, read with bounds, never its tensors.

Invariants: standard library only; each declared length and count is checked against the bytes left in the file
and ``GGUFLimits`` before anything is read or allocated, so a truncated or hostile file is a ``TemplateSourceError``
naming it (never another exception, a hang, or memory in proportion to what it claims); versions 2 and 3, either
byte order, every value type (arrays inside arrays to ``max_depth``); arrays longer than ``keep_items`` stay in the
file (``ArrayRef``), and one string of such an array is read on demand (``string_item``).
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Mapping

from .errors import TemplateSourceError

__all__ = ["GGUFMetadata", "GGUFLimits", "GGUF_LIMITS", "ArrayRef", "read_gguf_metadata", "STRING"]


@dataclass(frozen=True)
class GGUFLimits:
    """What a GGUF header may claim before it is refused."""

    max_kv: int = 1 << 16  # key-value pairs
    max_key: int = 1 << 16  # bytes of one key
    max_string: int = 16 << 20  # bytes of one string value
    max_array: int = 1 << 25  # elements of one array
    max_depth: int = 3  # arrays inside arrays
    keep_items: int = 64  # arrays up to this length are read; longer ones are left in the file (``ArrayRef``)
    max_header: int = 512 << 20  # bytes of header and key-value section together


GGUF_LIMITS = GGUFLimits()
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
STRING, _ARRAY = 8, 9  # the value types that are not scalars


@dataclass(frozen=True)
class ArrayRef:
    """An array left in the file: its element type, its length, and the offset of its first element."""

    item_type: int
    count: int
    offset: int


@dataclass(frozen=True)
class GGUFMetadata:
    """A GGUF file's key-value section (long arrays as ``ArrayRef``), and how to read one string of an array."""

    path: Path
    version: int
    tensors: int
    values: Mapping[str, Any]
    byte_order: str  # "<" or ">"
    end: int  # offset of the first byte after the key-value section

    def string_item(self, key: str, index: int, limits: GGUFLimits = GGUF_LIMITS) -> str | None:
        """Element ``index`` of the string array ``key`` (e.g. a token of ``tokenizer.ggml.tokens``), or None."""
        ref = self.values.get(key)
        if isinstance(ref, tuple):
            item = ref[index] if 0 <= index < len(ref) else None
            return item if isinstance(item, str) else None
        if not isinstance(ref, ArrayRef) or ref.item_type != STRING or not 0 <= index < ref.count:
            return None
        try:
            with open(self.path, "rb") as fh:
                reader = _Reader(fh, os.fstat(fh.fileno()).st_size, self.byte_order, self.path, limits)
                reader.seek(ref.offset)
                reader.skip_strings(index)
                return reader.string()
        except OSError:
            return None
        except TemplateSourceError:
            return None


def read_gguf_metadata(path: str | os.PathLike[str], limits: GGUFLimits = GGUF_LIMITS) -> GGUFMetadata:
    """The header and key-value section of the GGUF file at ``path`` (versions 2 and 3, either byte order)."""
    where = Path(path)
    try:
        with open(where, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            head = fh.read(8)
            if len(head) < 8 or head[:4] != b"GGUF":
                raise TemplateSourceError(f"{where}: not a GGUF file (no GGUF magic)")
            version, order = struct.unpack("<I", head[4:])[0], "<"
            if version & 0xFFFF == 0 and version >> 16:  # written big-endian
                version, order = struct.unpack(">I", head[4:])[0], ">"
            if version not in (2, 3):
                raise TemplateSourceError(f"{where}: GGUF version {version} (versions 2 and 3 are read)")
            reader = _Reader(fh, size, order, where, limits)
            reader.seek(8)
            tensors, count = reader.scalar(11), reader.scalar(11)
            if not 0 <= count <= limits.max_kv or tensors < 0:
                raise TemplateSourceError(f"{where}: claims {count} metadata keys and {tensors} tensors")
            values: dict[str, Any] = {}
            for _ in range(count):
                key = reader.string(limits.max_key)
                values[key] = reader.value(reader.scalar(4), 0)
            return GGUFMetadata(where, version, tensors, values, order, reader.pos)
    except OSError as exc:
        raise TemplateSourceError(f"{where}: {exc.strerror or exc}") from None


class _Reader:
    """Bounded reads from a GGUF file: every length is checked before it is read."""

    def __init__(self, fh: IO[bytes], size: int, order: str, path: Path, limits: GGUFLimits):
        self.fh, self.size, self.order, self.path, self.limits = fh, size, order, path, limits
        self.pos = 0

    def fail(self, what: str) -> TemplateSourceError:
        return TemplateSourceError(f"{self.path}: {what} at byte {self.pos}")

    def seek(self, pos: int) -> None:
        if pos > self.size:
            raise self.fail("truncated (a length runs past the end of the file)")
        if pos > self.limits.max_header:
            raise self.fail(f"a metadata section over {self.limits.max_header} bytes")
        self.fh.seek(pos)
        self.pos = pos

    def take(self, n: int) -> bytes:
        if n < 0 or n > self.size - self.pos:
            raise self.fail("truncated (a length runs past the end of the file)")
        if self.pos + n > self.limits.max_header:
            raise self.fail(f"a metadata section over {self.limits.max_header} bytes")
        data = self.fh.read(n)
        if len(data) != n:
            raise self.fail("truncated")
        self.pos += n
        return data

    def scalar(self, kind: int) -> Any:
        fmt = self.order + _SCALARS[kind]
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self, cap: int | None = None) -> str:
        n = self.scalar(10)
        if n > (self.limits.max_string if cap is None else cap):
            raise self.fail(f"a string of {n} bytes")
        return self.take(n).decode("utf-8", "replace")

    def skip_strings(self, count: int) -> None:
        """Past ``count`` strings, their lengths read from blocks of the file (not one read each)."""
        fmt, base, block, at = self.order + "Q", self.pos, b"", 0
        for _ in range(count):
            if len(block) - at < 8:
                base += at
                self.seek(base)
                block, at = self.fh.read(1 << 20), 0
                if len(block) < 8:
                    raise self.fail("truncated (a length runs past the end of the file)")
            n = struct.unpack_from(fmt, block, at)[0]
            if n > self.limits.max_string:
                raise self.fail(f"a string of {n} bytes")
            at += 8 + n
        self.seek(base + at)

    def value(self, kind: int, depth: int) -> Any:
        if kind in _SCALARS:
            return self.scalar(kind)
        if kind == STRING:
            return self.string()
        if kind != _ARRAY:
            raise self.fail(f"unknown value type {kind}")
        if depth >= self.limits.max_depth:
            raise self.fail(f"arrays nested over {self.limits.max_depth} deep")
        item, count = self.scalar(4), self.scalar(10)
        if item not in _SCALARS and item not in (STRING, _ARRAY):
            raise self.fail(f"unknown array item type {item}")
        width = struct.calcsize(self.order + _SCALARS[item]) if item in _SCALARS else 8  # (at least, for the others)
        if count > self.limits.max_array or count * width > self.size - self.pos:
            raise self.fail(f"an array of {count} items")
        if count <= self.limits.keep_items:
            return tuple(self.value(item, depth + 1) for _ in range(count))
        start = self.pos
        if item in _SCALARS:
            self.seek(self.pos + count * width)
        elif item == STRING:
            self.skip_strings(count)
        else:
            for _ in range(count):
                self.value(item, depth + 1)
        return ArrayRef(item, count, start)
