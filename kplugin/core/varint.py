"""Unsigned varints, as Go's encoding/binary and protocol buffers write them (seven bits a
byte, the low group first, the top bit set on every byte but the last): read in Go's build
info (kplugin.core.elf) and in pprof's profiles (kplugin.bench.cpuprofile)."""

from __future__ import annotations


def uvarint(data: bytes, offset: int) -> tuple[int, int]:
    """The varint at ``offset`` and the offset after it (IndexError when ``data`` ends first)."""
    value = shift = 0
    while True:
        byte = data[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, offset
        shift += 7
