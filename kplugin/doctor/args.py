"""Check 7: pluginConfig args and the args files decode, by the plugins' own decoders."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kplugin.core import yamlio
from kplugin.core.errors import OperationError, UsageError
from kplugin.doctor.context import Context, line_of, plain, plugin_configs, profiles
from kplugin.doctor.rules import Problem


def check_args(ctx: Context) -> Iterator[Problem]:
    """7. pluginConfig args (and the args files) decode into the plugins' Args, by the
    plugins' own decoders (their Go code, run through argsinfo)."""
    from kplugin.generate import argsinfo

    ours = {p.name: p for p in ctx.project.plugins}
    entries: list[tuple[str, Any, Path, int | None]] = []  # plugin, args, file, line
    for profile in profiles(ctx):
        for j, entry, configs in plugin_configs(ctx, profile):
            name = str(entry.get("name", ""))
            if name not in ours:
                continue
            args = plain(entry.get("args") or {})
            if not isinstance(args, dict):
                yield Problem(
                    "args-not-mapping",
                    ctx.config_path,
                    line_of(entry, "args") or line_of(configs, j),
                    f"pluginConfig args of {name} must be a mapping, not {yamlio.describe(args)}",
                    name=name,
                )
                continue
            entries.append((name, args, ctx.config_path, line_of(configs, j)))
    for plugin in ctx.project.plugins:
        path = ctx.project.root / argsinfo.args_file(plugin)
        try:
            values = argsinfo.read_args_file(ctx.project, plugin)
        except UsageError as err:
            yield Problem("args-file-invalid", path, None, err.message)
            continue
        if values is not None:
            entries.append((plugin.name, values, path, None))
    if not entries:
        return
    try:
        for name, args, path, line in entries:
            report = argsinfo.learn(ctx.project, {name: args}).get(name)
            if report is None:
                continue  # not registered: check_plugin_names reports it
            if not report.takes_args and args:
                yield Problem("args-unexpected", path, line, f"args for {name}, which takes none", name=name)
            elif report.error is not None:
                yield Problem("args-invalid", path, line, report.error, type=report.type_name or name + "Args")
    except argsinfo.Unavailable as why:
        yield Problem(
            "args-unchecked",
            ctx.project.root / argsinfo.ARGS_DIR,
            None,
            f"pluginConfig args not checked against the plugins' Go code: {why}",
        )
    except OperationError as err:
        where, line, fix = _build_failure(ctx, err.details)
        yield Problem("plugins-do-not-build", where, line, err.message + "".join(f"; {d}" for d in err.details[:1]),
                      fix=fix)  # fmt: skip


# a compiler's error line: FILE:LINE[:COLUMN]: message
_COMPILE_ERROR = re.compile(r"^(?:\./)?(?P<file>[\w./-]+\.go):(?P<line>[0-9]+)(?::[0-9]+)?: ")


def _build_failure(ctx: Context, details: list[str]) -> tuple[Path, int | None, str]:
    """Where the build failed (its first error's file and line, else pkg/), and the fix:
    ``make generate`` where that file is code-generator's (pkg/generated/, deepcopy), whose
    output is stale for the project's types or Kubernetes version."""
    for detail in details:
        match = _COMPILE_ERROR.match(detail.strip())
        if match is None:
            continue
        relative = match["file"]
        path = ctx.project.root / relative
        if relative.startswith("pkg/generated/") or Path(relative).name == "zz_generated.deepcopy.go":
            return (
                path,
                int(match["line"]),
                (
                    f"make generate: {relative} is written by code-generator from the project's API types for its "
                    "Kubernetes version, and is stale"
                ),
            )
        return path, int(match["line"]), "fix the compile error (go build ./...)"
    return ctx.project.root / "pkg", None, "fix the compile error (go build ./...)"
