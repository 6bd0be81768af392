"""Just enough ELF and Go build-info reading to verify a built scheduler binary."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from kplugin.core.varint import uvarint

PT_DYNAMIC = 2
PT_INTERP = 3
MACHINES = {0x3E: "amd64", 0xB7: "arm64", 0x03: "386", 0x28: "arm", 0xF3: "riscv64", 0x15: "ppc64le", 0x16: "s390x"}
_BUILDINFO_MAGIC = b"\xff Go buildinf:"


@dataclass(frozen=True)
class ElfInfo:
    arch: str
    has_interpreter: bool
    has_dynamic_section: bool
    go_version: str | None

    @property
    def static(self) -> bool:
        return not self.has_interpreter and not self.has_dynamic_section


class NotElf(ValueError):
    pass


def inspect(path: Path) -> ElfInfo:
    """What kplugin checks of a binary; a file that is not a whole 64-bit ELF raises
    NotElf (never an index or struct error)."""
    data = path.read_bytes()
    try:
        return _inspect(path, data)
    except (struct.error, IndexError, OverflowError):
        raise NotElf(f"{path} is a truncated or corrupt ELF file (a header points past its end)") from None


def _inspect(path: Path, data: bytes) -> ElfInfo:
    if data[:4] != b"\x7fELF":
        raise NotElf(f"{path} is not an ELF executable")
    if len(data) < 64:
        raise NotElf(f"{path} is a truncated ELF file ({len(data)} bytes)")
    if data[4] != 2:
        raise NotElf(f"{path} is not a 64-bit ELF")
    endian = "<" if data[5] == 1 else ">"
    (machine,) = struct.unpack_from(endian + "H", data, 18)
    (phoff,) = struct.unpack_from(endian + "Q", data, 32)
    phentsize, phnum = struct.unpack_from(endian + "HH", data, 54)
    if phentsize < 4 or phoff + phnum * phentsize > len(data):
        raise IndexError("program headers out of the file")
    types = {struct.unpack_from(endian + "I", data, phoff + i * phentsize)[0] for i in range(phnum)}
    return ElfInfo(
        arch=MACHINES.get(machine, f"machine-{machine:#x}"),
        has_interpreter=PT_INTERP in types,
        has_dynamic_section=PT_DYNAMIC in types,
        go_version=_buildinfo_go_version(data),
    )


def _buildinfo_go_version(data: bytes) -> str | None:
    """The Go release a binary was built with, from its build-info blob (Go 1.18+ layout)."""
    at = data.find(_BUILDINFO_MAGIC)
    if at < 0 or at + 32 > len(data):
        return None
    flags = data[at + 15]
    if not flags & 0x2:  # pre-1.18 pointer layout: not worth supporting here
        return None
    length, offset = uvarint(data, at + 32)
    return data[offset : offset + length].decode(errors="replace")
