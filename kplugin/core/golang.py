"""The Go steps kplugin runs on a project."""

from __future__ import annotations

import re
from pathlib import Path

from kplugin.core import proc
from kplugin.core.errors import OperationError, Setting, ToolError

_MISSING_VERSION = re.compile(
    r"(?P<module>k8s\.io/[\w./-]+)@(?P<version>v[\w.+-]+)[^\n]*?"
    r"(unknown revision|not available|invalid version|not found|reading .*: (404|410|403))"
)


# a compiler error line, as go prints it (and as BuildKit prefixes it: "#12 3.4 ")
_GO_ERROR = re.compile(r"^(?:#\d+ [\d.]+ )?\s*((?:\.{0,2}/)?[\w./-]+\.go:\d+(?::\d+)?: .+)$")


def compile_failure(err: ToolError) -> OperationError:
    """A failed go build as one line, with the compiler's own file:line errors beneath."""
    errors = [m[1] for line in (err.output or "").splitlines() if (m := _GO_ERROR.match(line.strip()))]
    if errors:
        return OperationError(f"{err.summary}: the plugin does not compile", details=errors[:20])
    return OperationError(f"{err.summary}", details=err.tail.splitlines()[-10:])


def mod_tidy(project: Path) -> list[str]:
    """Run ``go mod tidy`` (writes go.sum; downloads modules). Returns notices."""
    if proc.which("go") is None:
        return [
            "Go is not on PATH: skipped 'go mod tidy', so go.sum is missing; "
            f"install Go and run 'go mod tidy' in {project.name}"
        ]
    try:
        proc.run(["go", "mod", "tidy"], cwd=project, what="go mod tidy", env={"GOFLAGS": "-mod=mod"})
    except ToolError as err:
        raise OperationError(explain_go_failure(err)) from err
    return []


def explain_go_failure(err: ToolError) -> str:
    """One line for a failed go command: a missing module version named, else go's last line."""
    output = err.output or ""
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
