"""Check 9: go.mod requires k8s.io/kubernetes and pins every staging module at the project's version."""

from __future__ import annotations

import re
from collections.abc import Iterator

from kplugin.doctor.context import Context
from kplugin.doctor.rules import Problem


def check_go_mod(ctx: Context) -> Iterator[Problem]:
    """9. go.mod pins consistent: k8s.io/kubernetes and every staging module at one version."""
    path = ctx.project.root / "go.mod"
    if not path.is_file():
        yield Problem("go-mod-missing", path, None, "go.mod is missing")
        return
    lines = (ctx.text(path) or "").splitlines()
    version = ctx.project.version
    require = next((i for i, line in enumerate(lines) if re.search(r"\bk8s\.io/kubernetes v", line)), None)
    if require is None or f"k8s.io/kubernetes {version.tag}" not in lines[require]:
        yield Problem(
            "go-mod-require",
            path,
            require + 1 if require is not None else None,
            f"k8s.io/kubernetes is not required at {version.tag} (kplugin.yaml's version)",
        )
    replaced = {}
    for i, line in enumerate(lines):
        match = re.match(r"\s*(k8s\.io/[\w.-]+)\s+=>\s+(k8s\.io/[\w.-]+)\s+(\S+)", line)
        if match:
            replaced[match[1]] = (match[3], i + 1)
    for module in ctx.project.target.release.staging_modules:
        pin = replaced.get(module)
        if pin is None:
            yield Problem(
                "go-mod-replace-missing", path, None, f"no replace for {module}", module=module, tag=version.staging_tag
            )
        elif pin[0] != version.staging_tag:
            yield Problem(
                "go-mod-replace-version",
                path,
                pin[1],
                f"{module} is pinned at {pin[0]}, not {version.staging_tag}",
                tag=version.staging_tag,
            )
