"""Generate, build, vet and test a project for every supported Kubernetes minor.

    python -m kplugin.maintainer.matrix [--minors 1.28,1.33] [--api layer|native] [--with-api] [--keep DIR]

Each minor gets a project with every extension point, at the catalog's newest patch
(--with-api: and a kind of its own API, added with kplugin add api and its code
generators); the table lists minor, patch, API mode, build, vet, test and wall time.
Uses Go's shared caches.
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
from kplugin.generate import addapi, scaffold
from kplugin.model import apitypes, points, versions
from kplugin.model.project import load
from kplugin.model.spec import ProjectSpec


def step(project: Path, *cmd: str) -> tuple[bool, str]:
    env = {**os.environ, **golang.build_env(project)}  # the Go the version needs, the compiler's GOGC
    proc = subprocess.run(cmd, cwd=project, capture_output=True, text=True, check=False, env=env)
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minors", help="comma-separated minors (default: every supported one)")
    parser.add_argument("--keep", type=Path, help="generate into this directory and keep the projects")
    parser.add_argument("--api", default="layer", choices=["layer", "native"], help="API mode (default layer)")
    parser.add_argument("--with-api", action="store_true", help="add a kind of the project's own API (add api)")
    args = parser.parse_args(argv)
    minors = args.minors.split(",") if args.minors else [r.key for r in versions.supported_releases()]
    parent = args.keep or Path(tempfile.mkdtemp(prefix="kplugin-matrix-"))
    rows = []
    failed = False
    for minor in minors:
        # a minor without a release is built at its pre-release (which --k8s X.Y refuses)
        target = versions.newest_target(minor) if minor in versions.catalog() else versions.resolve(minor)
        started = time.monotonic()
        name = f"matrix-{args.api}-{minor.replace('.', '-')}"
        every = points.available_words((target.version.major, target.version.minor))  # every point it has
        spec = ProjectSpec.create(name, target, extension_points=every, plugin="Matrix", api=args.api)
        results = {}
        try:
            scaffold.new_project(spec, parent / name, force=True, tidy=golang.mod_tidy)
            project = parent / name
            if args.with_api:
                kind = apitypes.create("Quota", "quota.example.com", "v1alpha1")
                addapi.add_api(load(project), kind)
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
        except Exception as err:  # report and go on with the next minor
            results["build"] = f"FAIL ({err})"
        failed = failed or any(v != "ok" for v in results.values()) or len(results) < 3
        rows.append(
            (
                minor,
                str(target.version),
                args.api + (" + api" if args.with_api else ""),
                results.get("build", "-"),
                results.get("vet", "-"),
                results.get("test", "-"),
                f"{time.monotonic() - started:.0f}s",
            )
        )
        print(f"{minor}: {rows[-1]}", file=sys.stderr)
    print("| minor | patch | api | build | vet | test | wall time |\n|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
