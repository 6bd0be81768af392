"""Derive the version catalog from the releases themselves, through the Go module proxy.

Run ``python -m kplugin.maintainer.catalog --write`` (or ``make catalog``) to refresh
``kplugin/data/catalog.json``. For each Kubernetes minor it finds the newest patch the
proxy serves, reads that release's own go.mod (go directive, every ``k8s.io/*`` module
replaced by ``./staging``), checks each staging module is tagged at ``v0.Y.Z``, reads the
Go release the project built it with (``.go-version``), and which scheduler config API
versions its ``k8s.io/kube-scheduler`` still ships. API-shape facts that cannot be read
off a directory listing are kept in ``SHAPES`` below, each verified against the source.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

CATALOG = Path(__file__).resolve().parent.parent / "data" / "catalog.json"
MAX_PATCH_PROBE = 40

# Facts the templates switch on, read from the release sources (see KUBERNETES.md).
# Only minors listed with "templates": true are offered to users; the rest are data
# waiting for their templates.
SHAPES: dict[str, dict[str, Any]] = {
    "1.28": {
        "templates": True,
        "factory_ctx": False,
        "testing_import": "k8s.io/kubernetes/pkg/scheduler/testing",
        "score_node_arg": "nodeName",
        "prescore_nodes": "nodes",
        "events_to_register": "plain",
        "fwk_split": "none",
    },
}


def go_json(*args: str) -> dict[str, Any] | None:
    proc = subprocess.run(["go", *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return None
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def module_info(path: str, version: str) -> dict[str, Any] | None:
    return go_json("list", "-m", "-json", f"{path}@{version}")


def newest_patch(minor: str) -> int | None:
    with ThreadPoolExecutor(max_workers=8) as pool:
        found = list(
            pool.map(
                lambda p: module_info("k8s.io/kubernetes", f"v{minor}.{p}") is not None,
                range(MAX_PATCH_PROBE),
            )
        )
    patches = [p for p, ok in enumerate(found) if ok]
    return max(patches) if patches else None


def read_minor(minor: str) -> dict[str, Any] | None:
    patch = newest_patch(minor)
    if patch is None:
        return None
    version = f"v{minor}.{patch}"
    info = module_info("k8s.io/kubernetes", version)
    assert info is not None
    gomod = Path(info["GoMod"]).read_text()
    go_directive = re.search(r"^go (\S+)$", gomod, re.M)
    staging = sorted(set(re.findall(r"^\s*(k8s\.io/[\w.-]+) => \./staging/", gomod, re.M)))
    _, y, _ = version.lstrip("v").split(".")
    staging_version = f"v0.{y}.{patch}"
    with ThreadPoolExecutor(max_workers=8) as pool:
        tagged = list(pool.map(lambda m: module_info(m, staging_version) is not None, staging))
    untagged = [m for m, ok in zip(staging, tagged, strict=True) if not ok]

    source = go_json("mod", "download", "-json", f"k8s.io/kubernetes@{version}")
    go_version = None
    if source is not None:
        go_version_file = Path(source["Dir"]) / ".go-version"
        if go_version_file.exists():
            go_version = go_version_file.read_text().strip()
    sched = go_json("mod", "download", "-json", f"k8s.io/kube-scheduler@{staging_version}")
    config_apis = []
    if sched is not None:
        config_dir = Path(sched["Dir"]) / "config"
        config_apis = sorted(
            (p.name for p in config_dir.iterdir() if p.is_dir() and re.fullmatch(r"v\d+(\w+)?", p.name)),
            key=lambda v: (v != "v1", v),
        )
    entry: dict[str, Any] = {
        "newest_patch": patch,
        "go_directive": go_directive.group(1) if go_directive else None,
        "go_version": go_version,
        "config_api_versions": config_apis,
        "staging_modules": [m for m in staging if m not in untagged],
        "staging_untagged": untagged,
    }
    entry.update(SHAPES.get(minor, {"templates": False}))
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", default="1.28", help="oldest minor (default 1.28)")
    parser.add_argument("--write", action="store_true", help=f"write {CATALOG}")
    args = parser.parse_args(argv)
    major, first = (int(x) for x in args.first.split("."))
    minors: dict[str, Any] = {}
    y = first
    while True:
        minor = f"{major}.{y}"
        entry = read_minor(minor)
        if entry is None:
            break
        print(f"{minor}: v{minor}.{entry['newest_patch']}", file=sys.stderr)
        minors[minor] = entry
        y += 1
    text = json.dumps({"schema": 1, "minors": minors}, indent=2, sort_keys=True) + "\n"
    if args.write:
        CATALOG.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
