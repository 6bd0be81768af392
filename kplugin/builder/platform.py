"""Target platforms of a build: linux/ARCH, and this machine's architecture."""

from __future__ import annotations

import platform as host_platform
from dataclasses import dataclass

from kplugin.core import elf
from kplugin.core.errors import Setting, UsageError

_HOST_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


@dataclass(frozen=True)
class Platform:
    os: str
    arch: str

    def __str__(self) -> str:
        return f"{self.os}/{self.arch}"

    @property
    def slug(self) -> str:
        return f"{self.os}_{self.arch}"


def parse_platforms(value: str | None) -> tuple[Platform, ...]:
    if value is None:  # '' is a mistake, not the default
        return (Platform("linux", host_arch()),)
    platforms = []
    for item in value.split(","):
        parts = item.strip().split("/")
        if len(parts) != 2 or parts[0] != "linux" or parts[1] not in elf.MACHINES.values():
            raise UsageError(
                f"{Setting.PLATFORM} {item.strip()!r} is not supported; use linux/ARCH with ARCH one of "
                f"{', '.join(sorted(set(elf.MACHINES.values())))}"
            )
        platforms.append(Platform(*parts))
    return tuple(dict.fromkeys(platforms))


def host_arch() -> str:
    return _HOST_ARCH.get(host_platform.machine(), host_platform.machine())
