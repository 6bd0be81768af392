"""Generate, build, vet and test a project for every supported Kubernetes minor.

    python -m kplugin.maintainer.matrix [--minors 1.28,1.33] [--api layer|native] [--with-api]
        [--extension-points LIST] [--keep DIR]

Each minor gets a project with every extension point (or --extension-points), at the
catalog's newest patch (a minor may be given as an exact version, 1.28.3). --with-api:
one project, made at the first minor with a kind of its own API (kplugin add api and its
code generators), is moved to each next minor with kplugin upgrade, which generates its
client code again, as a user's project moves. The table lists minor, patch, API mode,
build, vet, test and wall time. Uses Go's shared caches.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kplugin.core import golang
from kplugin.generate import addapi, scaffold, upgrade
from kplugin.model import apitypes, points, versions
from kplugin.model.project import load
from kplugin.model.spec import ProjectSpec


def step(project: Path, *cmd: str) -> tuple[bool, str]:
    env = {**os.environ, **golang.build_env(project)}  # the Go the version needs, the compiler's GOGC
    proc = subprocess.run(cmd, cwd=project, capture_output=True, text=True, check=False, env=env)
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()


def _target(minor: str) -> versions.Target:
    """A minor's newest patch (a minor without a release: its pre-release), or an exact version."""
    return versions.newest_target(minor) if minor in versions.catalog() else versions.resolve(minor)


def _checked(project: Path, minor: str) -> dict[str, str]:
    """build, vet and test, each "ok" or "FAIL" (the first failure ends the row)."""
    results = {}
    for label, cmd in [
        ("build", ["go", "build", "./..."]),
        ("vet", ["go", "vet", "./..."]),
        ("test", ["go", "test", "-count=1", "./..."]),
    ]:
        ok, output = step(project, *cmd)
        results[label] = "ok" if ok else "FAIL"
        if not ok:
            print(f"--- {minor} {label}:\n{output[-3000:]}", file=sys.stderr)
            break
    return results


def rows(
    minors: list[str], parent: Path, api: str = "layer", with_api: bool = False, points_given: str | None = None
) -> list[tuple[str, ...]]:
    """The matrix's rows: a fresh project per minor, or (``with_api``) one project with a
    kind of its own moved through the minors by kplugin upgrade."""
    found: list[tuple[str, ...]] = []
    moved: Path | None = None
    for minor in minors:
        target = _target(minor)
        started = time.monotonic()
        name = f"matrix-{api}-" + ("api" if with_api else minor.replace(".", "-"))
        every = points.available_words((target.version.major, target.version.minor))  # every point it has
        results: dict[str, str] = {}
        try:
            if moved is None:
                spec = ProjectSpec.create(
                    name, target, extension_points=points_given or every, plugin="Matrix", api=api
                )
                scaffold.new_project(spec, parent / name, force=True, tidy=golang.mod_tidy)
                project = parent / name
                if with_api:
                    kind = apitypes.create("Quota", "quota.example.com", "v1alpha1")
                    addapi.add_api(load(project), kind)
                    moved = project
            else:  # the project of the previous minor, upgraded (its client code generated again)
                project = moved
                upgrade.upgrade(upgrade.prepare(load(project), target))
            results = _checked(project, minor)
        except Exception as err:  # report and go on with the next minor
            results["build"] = f"FAIL ({err})"
        how = "upgraded" if with_api and minor != minors[0] else "new"
        found.append(
            (
                minor,
                str(target.version),
                api + (f" + api ({how})" if with_api else ""),
                results.get("build", "-"),
                results.get("vet", "-"),
                results.get("test", "-"),
                f"{time.monotonic() - started:.0f}s",
            )
        )
        print(f"{minor}: {found[-1]}", file=sys.stderr)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minors", help="comma-separated minors or versions (default: every supported minor)")
    parser.add_argument("--keep", type=Path, help="generate into this directory and keep the projects")
    parser.add_argument("--api", default="layer", choices=["layer", "native"], help="API mode (default layer)")
    parser.add_argument(
        "--with-api", action="store_true", help="a kind of the project's own API (add api), moved by upgrade"
    )
    parser.add_argument("--extension-points", help="the plugin's points (default: every point of the minor)")
    args = parser.parse_args(argv)
    minors = args.minors.split(",") if args.minors else [r.key for r in versions.supported_releases()]
    parent = args.keep or Path(tempfile.mkdtemp(prefix="kplugin-matrix-"))
    found = rows(minors, parent, args.api, args.with_api, args.extension_points)
    print("| minor | patch | api | build | vet | test | wall time |\n|---|---|---|---|---|---|---|")
    for row in found:
        print("| " + " | ".join(row) + " |")
    return 1 if any(v != "ok" for row in found for v in row[3:6]) else 0


if __name__ == "__main__":
    raise SystemExit(main())
