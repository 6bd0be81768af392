"""The Go steps kplugin runs on a project, with the Go each one needs."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from pathlib import Path

from kplugin.core import proc
from kplugin.core.errors import OperationError, Setting, ToolError

_MISSING_VERSION = re.compile(
    r"(?P<module>k8s\.io/[\w./-]+)@(?P<version>v[\w.+-]+)[^\n]*?"
    r"(unknown revision|not available|invalid version|not found|reading .*: (404|410|403))"
)


# a compiler error line, as go prints it (and as BuildKit prefixes it: "#12 3.4 ")
_GO_ERROR = re.compile(r"^(?:#\d+ [\d.]+ )?\s*((?:\.{0,2}/)?[\w./-]+\.go:\d+(?::\d+)?: .+)$")


# a package of the build that is not the standard library's and has files that import "C"
_CGO_LIST = "{{if not .Standard}}{{if .CgoFiles}}{{.ImportPath}}|{{.Name}}|{{.Dir}}{{end}}{{end}}"


def cgo_packages(module_dir: Path, packages: str, output: str, env: dict[str, str]) -> list[str]:
    """The packages a failed CGO_ENABLED=0 build of ``packages`` failed for because they
    need cgo: a dependency with files that import "C" (left out without cgo) whose
    directory the errors in ``output`` point into, or whose names they say are undefined.
    Empty when the failure is another one."""
    try:
        listed = proc.run(["go", "list", "-deps", "-f", _CGO_LIST, packages], cwd=module_dir,
                          env={**env, "CGO_ENABLED": "1"}, what="go list")  # fmt: skip
    except OperationError:
        return []
    found = []
    for line in listed.splitlines():
        path, name, directory = [*line.split("|"), "", ""][:3]
        # go prints an error's file relative to the module where it can, else absolute
        places = {directory, os.path.relpath(directory, module_dir)} if directory else set()
        if path and (any(p in output for p in places) or re.search(rf"undefined: {re.escape(name)}\.", output)):
            found.append(path)
    return sorted(found)


def compile_failure(err: ToolError) -> OperationError:
    """A failed go build as one line, with the compiler's own file:line errors beneath."""
    errors = [m[1] for line in (err.output or "").splitlines() if (m := _GO_ERROR.match(line.strip()))]
    if errors:
        return OperationError(f"{err.summary}: the plugin does not compile", details=errors[:20])
    return OperationError(f"{err.summary}", details=err.tail.splitlines()[-10:])


def _silent(_: str) -> None:
    return None


# Where kplugin says that it runs another Go than the machine's (one line; the CLI installs
# its printer per command with announce_with), and what it has said since
_announce: Callable[[str], None] = _silent
_announced: set[str] = set()


def announce_with(say: Callable[[str], None]) -> None:
    """Say from now on, through ``say``, which Go kplugin runs where it is not the machine's:
    once per toolchain and command (each command installs its own)."""
    global _announce
    _announce = say
    _announced.clear()


_GO_LINE = re.compile(r"^go (\d+\.\d+(?:\.\d+)?)\s*$", re.M)
_TOOLCHAIN_LINE = re.compile(r"^toolchain (go\d+\.\d+(?:\.\d+)?)\s*$", re.M)
_NEEDS_GO = re.compile(
    r"requires go >= (?P<needed>[\d.]+) \(running go (?P<running>[\d.]+); GOTOOLCHAIN=(?P<mode>\w+)\)"
)


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


@functools.cache
def local_go() -> str | None:
    """The machine's own Go ("1.26.8"), never a toolchain it would switch to; None when
    the go on PATH does not say (then kplugin leaves the choice to it)."""
    try:
        text = proc.run(["go", "env", "GOVERSION"], what="go env", env={"GOTOOLCHAIN": "local"}).strip()
    except OperationError:
        return None
    match = re.fullmatch(r"go(\d+\.\d+(?:\.\d+)?)(?:\S*)", text.split()[0] if text else "")
    return match[1] if match else None


def toolchain_env(module_dir: Path) -> dict[str, str]:
    """The environment go commands in ``module_dir`` need: GOTOOLCHAIN set to the
    toolchain its go.mod names when the machine's Go is older than its go directive (the
    go command fetches it from the module proxy, once), nothing otherwise. A GOTOOLCHAIN
    the user set is left as it is. A module that needs a newer Go and names no toolchain
    is an OperationError naming the Go it needs."""
    try:
        text = (module_dir / "go.mod").read_text(errors="replace")
    except OSError:
        return {}
    directive, named = _GO_LINE.search(text), _TOOLCHAIN_LINE.search(text)
    if directive is None or "GOTOOLCHAIN" in os.environ or proc.which("go") is None:
        return {}
    local = local_go()
    if local is None or _version_key(local) >= _version_key(directive[1]):
        return {}
    if named is None:
        raise OperationError(
            f"{module_dir / 'go.mod'} needs Go {directive[1]} and this machine has Go {local}; install Go "
            f"{directive[1]} or newer (or add a toolchain line, as kplugin writes it, and let the go command fetch it)"
        )
    _announce_once(named[1], directive[1], local)
    return {"GOTOOLCHAIN": named[1]}


# The go command's compiler and linker collect garbage less often: a cold compile of
# Kubernetes' scheduler packages took 112 s instead of 139 s on 2 cores, its largest
# compile 0.6 GB instead of 0.45 GB (the build cache keys nothing on GOGC: the same
# packages, the same bytes).
COMPILE_GOGC = "400"


def compile_env() -> dict[str, str]:
    """The environment kplugin's compiling go commands add: GOGC for the compiler, unless
    the user set one."""
    return {} if "GOGC" in os.environ else {"GOGC": COMPILE_GOGC}


def build_env(module_dir: Path) -> dict[str, str]:
    """The environment a compiling go command in ``module_dir`` adds: the Go the module
    needs (toolchain_env) and the compiler's GOGC (compile_env)."""
    return {**compile_env(), **toolchain_env(module_dir)}


def _announce_once(toolchain: str, needed: str, local: str) -> None:
    line = f"Go {needed} needed, this machine has {local}: using {toolchain} (GOTOOLCHAIN; fetched once)"
    if line not in _announced:
        _announced.add(line)
        _announce(line)


def mod_tidy(project: Path) -> list[str]:
    """Run ``go mod tidy`` (writes go.sum; downloads modules). Returns notices."""
    if proc.which("go") is None:
        return [
            "Go is not on PATH: skipped 'go mod tidy', so go.sum is missing; "
            f"install Go and run 'go mod tidy' in {project.name}"
        ]
    try:
        env = {"GOFLAGS": "-mod=mod", **toolchain_env(project)}
        proc.run(["go", "mod", "tidy"], cwd=project, what="go mod tidy", env=env)
    except ToolError as err:
        raise OperationError(explain_go_failure(err)) from err
    return []


def explain_go_failure(err: ToolError) -> str:
    """One line for a failed go command: a missing module version named, else go's last line."""
    output = err.output or ""
    needs = _NEEDS_GO.search(output)
    if needs:
        return (
            f"{err.summary}: Go {needs['needed']} is needed and this machine runs {needs['running']} with "
            f"GOTOOLCHAIN={needs['mode']}; unset GOTOOLCHAIN (kplugin then selects the toolchain go.mod names) "
            f"or install Go {needs['needed']}"
        )
    missing = _MISSING_VERSION.search(output)
    if missing:
        module, version = missing["module"], missing["version"]
        return (
            f"{err.summary}: {module}@{version} does not exist on the Go module proxy; "
            f"check the {Setting.K8S} version (kplugin versions lists the supported ones)"
        )
    lines = [line for line in output.strip().splitlines() if line.strip()]
    last = lines[-1].strip() if lines else "no output"
    return f"{err.summary}: {last}"
