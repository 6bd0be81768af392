"""Check 6: the built kube-scheduler is statically linked and for this machine's architecture."""

from __future__ import annotations

from collections.abc import Iterator

from kplugin.core import elf
from kplugin.doctor.context import Context
from kplugin.doctor.rules import Problem


def check_binary(ctx: Context) -> Iterator[Problem]:
    """6. the built binary is statically linked and for the right architecture."""
    binary = ctx.binary
    if not binary.is_file():
        return
    try:
        info = elf.inspect(binary)
    except (elf.NotElf, OSError, IndexError) as err:
        yield Problem("binary-unreadable", binary, None, str(err))
        return
    if not info.static:
        yield Problem("binary-dynamic", binary, None, "the binary is dynamically linked")
    from kplugin.builder import host_arch

    if info.arch != host_arch():
        yield Problem("binary-arch", binary, None, f"the binary is for {info.arch}, this machine is {host_arch()}")
