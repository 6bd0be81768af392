"""Check 10: the generated files are as kplugin wrote them."""

from __future__ import annotations

from collections.abc import Iterator

from kplugin.core import digest, safefs
from kplugin.core.errors import UsageError
from kplugin.doctor.context import Context
from kplugin.doctor.rules import Problem


def check_generated(ctx: Context) -> Iterator[Problem]:
    """10. generated files as kplugin wrote them (kplugin.yaml records their sha256)."""

    for name, recorded in sorted(ctx.project.generated.items()):
        path = ctx.project.root / name
        try:
            data = safefs.read_project_file(ctx.project.root, name)
        except UsageError as err:
            yield Problem("generated-unreadable", path, None, err.message)
            continue
        if data is None:
            yield Problem("generated-missing", path, None, f"generated file {name} is missing")
        elif digest.sha256_hex(data) != recorded:
            yield Problem("generated-edited", path, None, f"generated file {name} was edited by hand")
