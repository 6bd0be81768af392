"""Install the pinned checking tools: ``python -m kplugin.maintainer.tools [NAME...]``.

golangci-lint, helm, actionlint and kwok (kplugin.model.tools), each looked for in Go's
install directory ($GOBIN, else the first $(go env GOPATH)'s bin). A binary built from
the pinned module version (``go version -m`` tells) is reused; a missing one, or one of
another version, is built with ``go install PACKAGE@VERSION`` from the Go module proxy.
Building them takes a few minutes on two cores, once, one after the other (built at once
they took no less: the compiles share the two cores); checking takes a moment.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from kplugin.core import golang, proc
from kplugin.core.errors import KpluginError, OperationError, ToolError
from kplugin.model.tools import TOOLS, GoTool

INSTALL_TIMEOUT = 1800.0


def bin_dir() -> Path:
    """Where ``go install`` puts commands."""
    gobin, gopath = [*proc.run(["go", "env", "GOBIN", "GOPATH"], what="go env", merge=False).splitlines(), "", ""][:2]
    if gobin.strip():
        return Path(gobin.strip())
    return Path(gopath.strip().split(os.pathsep)[0]) / "bin"


def built_version(binary: Path, module: str) -> str | None:
    """The version of ``module`` that ``binary`` was built from, or None (not a Go
    binary, or not built from that module)."""
    result = proc.probe(["go", "version", "-m", str(binary)])
    if result.returncode != 0:
        return None
    for line in result.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[:2] == ["mod", module]:
            return fields[2]
    return None


def ensure(tool: GoTool, say: Callable[[str], None]) -> Path:
    """The pinned ``tool``, installed first when the one in Go's bin directory is
    missing or of another version."""
    binary = bin_dir() / tool.name
    if binary.is_file():
        found = built_version(binary, tool.module)
        if found == tool.version:
            return binary
        why = f"{binary} is {found}" if found else f"{binary} is not built from {tool.module}"
    else:
        why = f"no {binary}"
    say(f"{tool.name} {tool.version}: {why}; go install {tool.install_ref} (minutes on a cold Go cache)")
    started = time.monotonic()
    proc.run(
        ["go", "install", tool.install_ref],
        # static and -trimpath, as the test suite builds: its own go install of a tool
        # (make lint's) then finds every package in Go's build cache
        env={"GOBIN": str(binary.parent), "CGO_ENABLED": "0", "GOFLAGS": "-trimpath", **golang.compile_env()},
        what=f"go install {tool.install_ref}",
        timeout=INSTALL_TIMEOUT,
    )
    found = built_version(binary, tool.module)
    if found != tool.version:
        raise OperationError(f"go install {tool.install_ref} left {binary} at version {found}")
    say(f"{tool.name} {tool.version}: built in {time.monotonic() - started:.0f}s")
    return binary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"of {', '.join(TOOLS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(TOOLS))
    if unknown:
        parser.error(f"unknown tool {', '.join(unknown)}: choose from {', '.join(TOOLS)}")

    def say(line: str) -> None:
        print(line, flush=True)

    try:
        for name in args.names or TOOLS:
            tool = TOOLS[name]
            say(f"{tool.name} {tool.version}: {ensure(tool, say)}")
    except KpluginError as err:
        tail = err.tail if isinstance(err, ToolError) else "\n".join(err.details)
        print(f"error: {err}" + (f"\n{tail}" if tail else ""), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
