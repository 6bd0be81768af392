"""Derive the version catalog from the releases themselves, through the Go module proxy.

Run ``python -m kplugin.maintainer.catalog --write`` (or ``make catalog``) to refresh
``kplugin/data/catalog.json``. For each Kubernetes minor it finds the newest patch the
proxy serves that a generated project can be tidied at (the proxy here serves only part
of some releases), reads that release's own go.mod (go directive, every ``k8s.io/*``
module replaced by ``./staging``), checks each staging module is tagged at ``v0.Y.Z``,
reads the Go release the project built it with (``.go-version``), and which scheduler
config API versions its ``k8s.io/kube-scheduler`` still ships. API-shape facts that cannot be read
off a directory listing are kept in ``FACTS`` below, each verified against the source;
``--shapes-only`` re-applies them without the network.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

CATALOG = Path(__file__).resolve().parent.parent / "data" / "catalog.json"
MAX_PATCH_PROBE = 40

# The API facts the templates switch on, as a timeline: each fact's value from a minor on.
# Every entry was read from the release sources in the module cache (k8s.io/kubernetes
# pkg/scheduler/framework and k8s.io/kube-scheduler/framework of that minor); the note is
# what `kplugin versions` shows for the minor where the fact changes.
FACTS: dict[str, list[tuple[str, Any, str]]] = {
    "factory_ctx": [("1.28", False, ""), ("1.29", True, "plugin factory takes a context")],
    "testing_import": [
        ("1.28", "k8s.io/kubernetes/pkg/scheduler/testing", ""),
        ("1.29", "k8s.io/kubernetes/pkg/scheduler/testing/framework", "test helpers move to testing/framework"),
    ],
    "prescore_nodes": [("1.28", "nodes", ""), ("1.30", "nodeinfos", "PreScore gets []*NodeInfo")],
    "prefilter_results": [("1.28", 2, ""), ("1.31", 3, "RunPreFilterPlugins also returns rejectors")],
    "events_ctx": [("1.28", False, ""), ("1.31", True, "EventsToRegister(ctx) returns an error too")],
    "postfilter_arg": [("1.28", "map", ""), ("1.32", "reader", "PostFilter gets a NodeToStatusReader")],
    "score_node_arg": [("1.28", "nodeName", ""), ("1.33", "nodeInfo", "Score gets the NodeInfo, not the name")],
    "fwk_split": [
        ("1.28", "none", ""),
        ("1.34", "types", "Status, CycleState, NodeInfo move to k8s.io/kube-scheduler/framework (interfaces)"),
        ("1.35", "plugins", "plugin interfaces and Handle move to k8s.io/kube-scheduler/framework"),
    ],
    "prefilter_nodes": [("1.28", False, ""), ("1.34", True, "PreFilter gets the nodes")],
    "prebind_preflight": [
        ("1.28", "none", ""),
        ("1.34", "status", "PreBind plugins need PreBindPreFlight"),
        ("1.36", "result", "PreBindPreFlight returns a result too"),
    ],
    "queued_info": [
        ("1.28", "struct", ""),
        ("1.34", "pod", "QueueSort compares QueuedPodInfo interfaces"),
        ("1.37", "entity", "QueueSort compares QueuedEntityInfo (pods or pod groups)"),
    ],
    "max_score": [("1.28", "MaxNodeScore", ""), ("1.36", "MaxScore", "MaxNodeScore deprecated for MaxScore")],
    "permit_results": [("1.28", 1, ""), ("1.36", 2, "RunPermitPlugins also returns wait times")],
    # where the scheduler's own pod-requests helper lives (init and sidecar containers,
    # overhead, pod-level resources): k8s.io/kubernetes/pkg/api/v1/resource up to 1.31
    "pod_requests": [
        ("1.28", "kubernetes", ""),
        ("1.32", "component-helpers", "PodRequests moves to k8s.io/component-helpers/resource"),
    ],
    # deepcopy-gen (make generate): its flags (gengo v1, then v2 from code-generator 1.30),
    # and the code-generator to run where the minor's own does not build with today's Go
    # (1.30 and 1.31 pin a golang.org/x/tools that Go 1.26 refuses; 1.32's writes the same)
    "deepcopy_flags": [("1.28", "gengo", ""), ("1.30", "gengo-v2", "")],
    "deepcopy_tool": [("1.28", "", ""), ("1.30", "v0.32.13", ""), ("1.32", "", "")],
    # client-gen, lister-gen and informer-gen (make generate of a project's own API types):
    # 1.30's and 1.31's own do not build with today's Go (as above), and 1.32's write code
    # that needs client-go 1.32 (rest.CodecFactoryForGeneratedClient; gentype from 1.31),
    # so 1.30 and 1.31 run 1.29's, whose code builds against their client-go
    "clients_tool": [("1.28", "", ""), ("1.30", "v0.29.15", ""), ("1.32", "", "")],
    "clients_flags": [("1.28", "gengo", ""), ("1.32", "gengo-v2", "")],
    # QueueingHintFn returns (QueueingHint, error) with Queue/QueueSkip from 1.29; 1.28's
    # returns the hint only, with QueueAfterBackoff/QueueImmediately (framework/types.go)
    "hint_error": [
        ("1.28", False, ""),
        ("1.29", True, "QueueingHintFn returns an error too; hints are Queue/QueueSkip"),
    ],
    # the SchedulerQueueingHints gate's default (pkg/features): off in 1.28's newest patches
    # (1.28.0-1.28.4 had it on: hints_on_through_patch) to 1.31, beta on in 1.32-1.33, GA
    # locked on 1.34-1.36, removed in 1.37; off, the queue ignores hint functions and
    # retries a rejected pod on every event its rejectors registered
    "queueing_hints": [
        ("1.28", "off", ""),
        ("1.32", "beta-on", "QueueingHints on by default"),
        ("1.34", "ga", "QueueingHints GA, locked on"),
        ("1.37", "always", "the QueueingHints gate is gone: hint functions always apply"),
    ],
    # a minor whose newest patches have the gate off but whose first patches had it on:
    # the last patch with it on by default (1.28.0-1.28.4: beta, on; off from 1.28.5,
    # kubernetes PR 122291), -1 where every patch has the minor's default
    "hints_on_through_patch": [("1.28", 4, ""), ("1.29", -1, "")],
    # fwk.SignPlugin (KEP-5598, gate OpportunisticBatching beta and on): a profile batches
    # only when every PreFilter, Filter, PreScore and Score plugin signs pods
    "sign_pod": [("1.28", False, ""), ("1.35", True, "SignPod: plugins that sign pods keep batching on")],
}
# Minors whose sources the facts above were checked against; a newer minor the proxy
# serves is catalogued as data only (no templates) until someone checks it.
VERIFIED = ("1.28", "1.38")


def _key(minor: str) -> tuple[int, int]:
    major, y = minor.split(".")
    return int(major), int(y)


def shape(minor: str) -> dict[str, Any]:
    """The facts of one minor, whether templates are offered, and what changed in it."""
    result: dict[str, Any] = {"templates": _key(VERIFIED[0]) <= _key(minor) <= _key(VERIFIED[1])}
    changes = []
    for fact, timeline in FACTS.items():
        for since, value, note in timeline:
            if _key(since) <= _key(minor):
                result[fact] = value
                if since == minor and note:
                    changes.append(note)
    result["api_changes"] = changes
    return result


# Pre-releases probed for a minor without a release (the proxy's version list is partial).
PRE_STAGES = ("alpha", "beta", "rc")
# The Go every released minor kplugin supports builds with: a minor whose go directive is
# newer gets a `toolchain` line (the Go Kubernetes builds it with) in generated go.mod
# files, which kplugin selects through GOTOOLCHAIN on a machine with an older Go.
GO_BASELINE = (1, 26)
# GOTOOLCHAIN for the go commands this script runs for a minor that needs a newer Go
_toolchain_env: dict[str, str] = {}


def go_json(*args: str) -> dict[str, Any] | None:
    env = {**os.environ, **_toolchain_env}
    proc = subprocess.run(["go", *args], capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        return None
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def module_info(path: str, version: str) -> dict[str, Any] | None:
    return go_json("list", "-m", "-json", f"{path}@{version}")


def served_patches(minor: str) -> list[int]:
    with ThreadPoolExecutor(max_workers=8) as pool:
        found = list(
            pool.map(
                lambda p: module_info("k8s.io/kubernetes", f"v{minor}.{p}") is not None,
                range(MAX_PATCH_PROBE),
            )
        )
    return [p for p, ok in enumerate(found) if ok]


def untagged_staging(staging: list[str], version: str) -> list[str]:
    """Staging modules the proxy has no v0.Y.Z tag for (no replace is written for them)."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        tagged = list(pool.map(lambda m: module_info(m, version) is not None, staging))
    return [m for m, ok in zip(staging, tagged, strict=True) if not ok]


# What a generated project imports from Kubernetes (the testing helpers come per minor).
PROBE_IMPORTS = (
    "k8s.io/client-go/informers",
    "k8s.io/client-go/kubernetes/fake",
    "k8s.io/component-base/cli",
    "k8s.io/component-base/logs/json/register",
    "k8s.io/component-base/metrics/prometheus/clientgo",
    "k8s.io/component-base/metrics/prometheus/version",
    "k8s.io/kubernetes/cmd/kube-scheduler/app",
    "k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder",
    "k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort",
    "k8s.io/kubernetes/pkg/scheduler/framework/runtime",
    "k8s.io/kubernetes/pkg/scheduler/metrics",
)


def newest_prerelease(minor: str) -> str | None:
    """The newest pre-release of the minor's .0 the proxy serves ("beta.0"), if any."""
    probes = [f"{stage}.{n}" for stage in PRE_STAGES for n in range(4)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        served = list(pool.map(lambda p: module_info("k8s.io/kubernetes", f"v{minor}.0-{p}") is not None, probes))
    found = [p for p, ok in zip(probes, served, strict=True) if ok]
    return found[-1] if found else None


def _go_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:2])


def tidy_problem(minor: str, patch: int, staging: list[str], pre: str = "", directive: str = "1.20") -> str | None:
    """None when ``go mod tidy`` succeeds for a module importing what a generated project
    imports, at this patch with its staging modules replaced; else go's last line. The
    proxy here serves only part of some releases (a zip answering 403): whether that
    matters depends on whether the module's packages are compiled, which tidy knows."""
    import tempfile

    suffix = f"-{pre}" if pre else ""
    tag = f"v0.{minor.split('.')[1]}.{patch}{suffix}"
    imports = [*PROBE_IMPORTS, str(shape(minor)["testing_import"])]
    replaces = "".join(f"\t{m} => {m} {tag}\n" for m in staging)
    with tempfile.TemporaryDirectory(prefix="kplugin-catalog-") as tmp:
        Path(tmp, "go.mod").write_text(
            f"module probe\n\ngo {directive}\n\nrequire k8s.io/kubernetes v{minor}.{patch}{suffix}\n\n"
            f"replace (\n{replaces})\n"
        )
        Path(tmp, "probe.go").write_text(
            "package probe\n\nimport (\n" + "".join(f'\t_ "{i}"\n' for i in imports) + ")\n"
        )
        env = {**os.environ, **_toolchain_env}
        proc = subprocess.run(["go", "mod", "tidy"], cwd=tmp, capture_output=True, text=True, check=False, env=env)
    if proc.returncode == 0:
        return None
    lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
    named = [line for line in lines if "@v" in line]  # the module version that failed
    return (named or lines or [f"go mod tidy exit {proc.returncode}"])[0]


def newest_patch(minor: str) -> int | None:
    """The newest patch a generated project can be tidied (and so built) at."""
    for patch in sorted(served_patches(minor), reverse=True):
        info = module_info("k8s.io/kubernetes", f"v{minor}.{patch}")
        assert info is not None
        staging = sorted(
            set(re.findall(r"^\s*(k8s\.io/[\w.-]+) => \./staging/", Path(info["GoMod"]).read_text(), re.M))
        )
        untagged = untagged_staging(staging, f"v0.{minor.split('.')[1]}.{patch}")
        problem = tidy_problem(minor, patch, [m for m in staging if m not in untagged])
        if problem is None:
            return patch
        print(f"{minor}.{patch}: skipped, {problem}", file=sys.stderr)
    return None


def read_minor(minor: str) -> dict[str, Any] | None:
    """A minor's entry: at its newest usable patch, or, while it has no release, at its
    newest pre-release (recorded as such)."""
    _toolchain_env.clear()
    patch = newest_patch(minor)
    pre = ""
    if patch is None:
        pre = newest_prerelease(minor) or ""
        if not pre:
            return None
        patch = 0
    version = f"v{minor}.{patch}" + (f"-{pre}" if pre else "")
    info = module_info("k8s.io/kubernetes", version)
    assert info is not None
    gomod = Path(info["GoMod"]).read_text()
    go_directive = re.search(r"^go (\S+)$", gomod, re.M)
    godebug = re.search(r"^godebug (\S+)$", gomod, re.M)
    newer_go = go_directive is not None and _go_key(go_directive.group(1)) > GO_BASELINE
    if newer_go:  # the go command refuses the module with an older Go: use the one it names
        assert go_directive is not None
        _toolchain_env["GOTOOLCHAIN"] = f"go{go_directive.group(1)}"
    staging = sorted(set(re.findall(r"^\s*(k8s\.io/[\w.-]+) => \./staging/", gomod, re.M)))
    y = minor.split(".")[1]
    staging_version = f"v0.{y}.{patch}" + (f"-{pre}" if pre else "")
    untagged = untagged_staging(staging, staging_version)
    if pre:
        assert go_directive is not None
        problem = tidy_problem(minor, patch, [m for m in staging if m not in untagged], pre, go_directive.group(1))
        if problem is not None:
            print(f"{version}: not usable, {problem}", file=sys.stderr)
            return None

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
        "prerelease": pre,
        "go_directive": go_directive.group(1) if go_directive else None,
        "go_version": go_version,
        "godebug": godebug.group(1) if godebug else "",
        "toolchain": f"go{go_version}" if newer_go and go_version else "",
        "config_api_versions": config_apis,
        "staging_modules": [m for m in staging if m not in untagged],
        "staging_untagged": untagged,
    }
    entry.update(shape(minor))
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", default="1.28", help="oldest minor (default 1.28)")
    parser.add_argument("--write", action="store_true", help=f"write {CATALOG}")
    parser.add_argument("--only", help="refresh only these comma-separated minors, keep the rest")
    parser.add_argument(
        "--shapes-only", action="store_true", help="re-apply FACTS to the committed catalog (no network)"
    )
    args = parser.parse_args(argv)
    if args.shapes_only:
        data = json.loads(CATALOG.read_text())
        for minor, entry in data["minors"].items():
            for fact in [*FACTS, "templates", "api_changes"]:
                entry.pop(fact, None)
            entry.update(shape(minor))
        return _emit(data, args.write)
    if args.only:
        data = json.loads(CATALOG.read_text())
        for minor in args.only.split(","):
            entry = read_minor(minor)
            if entry is None:
                raise SystemExit(f"{minor}: no usable patch")
            print(
                f"{minor}: v{minor}.{entry['newest_patch']}"
                + (f"-{entry['prerelease']}" if entry.get("prerelease") else ""),
                file=sys.stderr,
            )
            data["minors"][minor] = entry
        return _emit(data, args.write)
    major, first = (int(x) for x in args.first.split("."))
    minors: dict[str, Any] = {}
    y = first
    while True:
        minor = f"{major}.{y}"
        entry = read_minor(minor)
        if entry is None:
            break
        print(
            f"{minor}: v{minor}.{entry['newest_patch']}"
            + (f"-{entry['prerelease']}" if entry.get("prerelease") else ""),
            file=sys.stderr,
        )
        minors[minor] = entry
        y += 1
    return _emit({"schema": 1, "minors": minors}, args.write)


def _shown(minor: str, entry: dict[str, Any]) -> str:
    return f"v{minor}.{entry['newest_patch']}" + (f"-{entry['prerelease']}" if entry.get("prerelease") else "")


def _emit(data: dict[str, Any], write: bool) -> int:
    """The catalog as committed JSON: into kplugin/data/catalog.json, or on stdout."""
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    if write:
        CATALOG.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
