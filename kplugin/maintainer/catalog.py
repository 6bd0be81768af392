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
import gzip
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
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
    # a framework gets its map of pods waiting at Permit from the scheduler (shared by the
    # profiles: frameworkruntime.WithWaitingPods) instead of making its own (runtime/framework.go)
    "waiting_pods_option": [("1.28", False, ""), ("1.31", True, "")],
    # the Status method that names the plugin behind it (framework/interface.go)
    "status_plugin": [("1.28", "FailedPlugin", ""), ("1.29", "Plugin", "Status.FailedPlugin() is Plugin()")],
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
    # deepcopy-gen (make generate, gengo v2's flags): the code-generator to run where the
    # minor's own is not the one to run. 1.30's and 1.31's do not build with today's Go (they
    # pin a golang.org/x/tools that Go 1.26 refuses). 1.28's and 1.29's (gengo v1) build, but
    # parse every package a plugin imports from source: a minute or more per run where
    # gengo v2 (code-generator 1.30 on) takes seconds. Its output is the same bytes (the
    # DeepCopy methods need only apimachinery's runtime, and 1.32's writes the same as 1.30's).
    "deepcopy_tool": [("1.28", "v0.32.13", ""), ("1.32", "", "")],
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
    # framework/interface.go, cycle_state.go, types.go of kube-scheduler and pkg/scheduler/framework
    "pod_groups": [
        ("1.28", "none", ""),
        ("1.36", "v1alpha2", "PlacementGenerate and PlacementScore: a pod group's placements"),
        ("1.37", "v1beta1", "ScorePlacement gets a PlacementCycleState"),
        ("1.38", "generic", "PodGroupInfo wraps GenericPodGroup; GetAllUnscheduledPods"),
    ],
    # gang scheduling's own gate, GangScheduling (pkg/features/kube_features.go: alpha in
    # 1.35 and 1.36, off by default; default_plugins.go adds the GangScheduling plugin only
    # with it on). 1.37 removed it: GenericWorkload alone adds the plugin. A feature gate,
    # not the plugin API: no note for `kplugin versions`' API changes.
    "gang_gate": [("1.28", False, ""), ("1.35", True, ""), ("1.37", False, "")],
    # ClusterEventWithHint.PreQueueingHintFn (kube-scheduler framework/types.go, 1.37 on),
    # called once per event to name the rejected pods worth a QueueingHint; gate
    # SchedulerPreQueueingHints (pkg/features/kube_features.go): alpha and off in 1.37, beta
    # and on by default in 1.38 (pkg/scheduler/backend/queue/scheduling_queue.go
    # runPreQueueingHintPlugins)
    "pre_queueing_hints": [
        ("1.28", "none", ""),
        ("1.37", "alpha-off", "PreQueueingHintFn names the pods an event concerns (gate alpha, off)"),
        ("1.38", "beta-on", "PreQueueingHints on by default (SchedulerPreQueueingHints beta)"),
    ],
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


class Proxy:
    """The questions the catalog asks the module proxy, answered by the go command.

    Every question goes through ``_ask`` with a key that names it, so that ``Recorder``
    can keep the answers and ``Replay`` give them back. ``toolchain`` is the GOTOOLCHAIN
    for a minor whose go directive is newer than this machine's Go (the go command
    refuses such a module otherwise)."""

    def __init__(self) -> None:
        self.toolchain = ""

    def _ask(self, key: str, live: Callable[[], Any]) -> Any:
        return live()

    def _go(self, *args: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **({"GOTOOLCHAIN": self.toolchain} if self.toolchain else {})}
        return subprocess.run(["go", *args], cwd=cwd, capture_output=True, text=True, check=False, env=env)

    def _json(self, *args: str) -> dict[str, Any] | None:
        proc = self._go(*args)
        if proc.returncode != 0:
            return None
        result: dict[str, Any] = json.loads(proc.stdout)
        return result

    def _source(self, path: str, version: str) -> Path | None:
        source = self._json("mod", "download", "-json", f"{path}@{version}")
        return None if source is None else Path(source["Dir"])

    def gomod(self, path: str, version: str) -> str | None:
        """The module's go.mod at version, or None when the proxy does not serve it."""

        def live() -> str | None:
            info = self._json("list", "-m", "-json", f"{path}@{version}")
            return None if info is None else Path(info["GoMod"]).read_text()

        answer: str | None = self._ask(f"gomod {path}@{version}", live)
        return answer

    def file(self, path: str, version: str, name: str) -> str | None:
        """A file of the module's source, or None (not served, or no such file)."""

        def live() -> str | None:
            source = self._source(path, version)
            return (source / name).read_text() if source and (source / name).is_file() else None

        answer: str | None = self._ask(f"file {path}@{version} {name}", live)
        return answer

    def dirs(self, path: str, version: str, name: str) -> list[str]:
        """The directories in a directory of the module's source (none when not served)."""

        def live() -> list[str]:
            source = self._source(path, version)
            folder = None if source is None else source / name
            return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder and folder.is_dir() else []

        answer: list[str] = self._ask(f"dirs {path}@{version} {name}", live)
        return answer

    def tidy(self, gomod: str, source: str) -> str | None:
        """None when ``go mod tidy`` succeeds for this module, else go's first telling line."""

        def live() -> str | None:
            import tempfile

            with tempfile.TemporaryDirectory(prefix="kplugin-catalog-") as tmp:
                Path(tmp, "go.mod").write_text(gomod)
                Path(tmp, "probe.go").write_text(source)
                proc = self._go("mod", "tidy", cwd=tmp)
            if proc.returncode == 0:
                return None
            lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
            named = [line for line in lines if "@v" in line]  # the module version that failed
            return (named or lines or [f"go mod tidy exit {proc.returncode}"])[0]

        answer: str | None = self._ask(f"tidy {_tidy_key(gomod)}", live)
        return answer


class Recorder(Proxy):
    """The live proxy, keeping every answer so that a test can replay it (``--record``)."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: dict[str, Any] = {}

    def _ask(self, key: str, live: Callable[[], Any]) -> Any:
        self.answers[key] = answer = live()
        return answer


class Replay(Proxy):
    """Answers recorded by ``Recorder``; a question it was not asked then is an error."""

    def __init__(self, answers: dict[str, Any]) -> None:
        super().__init__()
        self.answers = answers

    def _ask(self, key: str, live: Callable[[], Any]) -> Any:
        if key not in self.answers:
            raise KeyError(f"no recorded answer for {key!r}; record again with --record")
        return self.answers[key]


def save_answers(answers: dict[str, Any], path: Path) -> None:
    """Recorded answers as gzipped JSON, byte for byte the same for the same answers."""
    text = json.dumps(answers, indent=1, sort_keys=True) + "\n"
    path.write_bytes(gzip.compress(text.encode(), mtime=0))


def load_answers(path: Path) -> dict[str, Any]:
    answers: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return answers


def _tidy_key(gomod: str) -> str:
    """What a tidy probe is about: the Kubernetes version it requires and its go directive."""
    required = re.search(r"^require (\S+ \S+)$", gomod, re.M)
    directive = re.search(r"^go (\S+)$", gomod, re.M)
    return f"{required[1] if required else '?'} go {directive[1] if directive else '?'}"


def served_patches(proxy: Proxy, minor: str) -> list[int]:
    with ThreadPoolExecutor(max_workers=8) as pool:
        found = list(
            pool.map(
                lambda p: proxy.gomod("k8s.io/kubernetes", f"v{minor}.{p}") is not None,
                range(MAX_PATCH_PROBE),
            )
        )
    return [p for p, ok in enumerate(found) if ok]


def untagged_staging(proxy: Proxy, staging: list[str], version: str) -> list[str]:
    """Staging modules the proxy has no v0.Y.Z tag for (no replace is written for them)."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        tagged = list(pool.map(lambda m: proxy.gomod(m, version) is not None, staging))
    return [m for m, ok in zip(staging, tagged, strict=True) if not ok]


def newest_prerelease(proxy: Proxy, minor: str) -> str | None:
    """The newest pre-release of the minor's .0 the proxy serves ("beta.0"), if any."""
    probes = [f"{stage}.{n}" for stage in PRE_STAGES for n in range(4)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        served = list(pool.map(lambda p: proxy.gomod("k8s.io/kubernetes", f"v{minor}.0-{p}") is not None, probes))
    found = [p for p, ok in zip(probes, served, strict=True) if ok]
    return found[-1] if found else None


def _go_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:2])


def _staging(gomod: str) -> list[str]:
    return sorted(set(re.findall(r"^\s*(k8s\.io/[\w.-]+) => \./staging/", gomod, re.M)))


def tidy_problem(
    proxy: Proxy, minor: str, patch: int, staging: list[str], pre: str = "", directive: str = "1.20"
) -> str | None:
    """None when ``go mod tidy`` succeeds for a module importing what a generated project
    imports, at this patch with its staging modules replaced; else go's line. The
    proxy here serves only part of some releases (a zip answering 403): whether that
    matters depends on whether the module's packages are compiled, which tidy knows."""
    suffix = f"-{pre}" if pre else ""
    tag = f"v0.{minor.split('.')[1]}.{patch}{suffix}"
    imports = [*PROBE_IMPORTS, str(shape(minor)["testing_import"])]
    replaces = "".join(f"\t{m} => {m} {tag}\n" for m in staging)
    gomod = (
        f"module probe\n\ngo {directive}\n\nrequire k8s.io/kubernetes v{minor}.{patch}{suffix}\n\n"
        f"replace (\n{replaces})\n"
    )
    source = "package probe\n\nimport (\n" + "".join(f'\t_ "{i}"\n' for i in imports) + ")\n"
    return proxy.tidy(gomod, source)


def _needs(proxy: Proxy, gomod: str) -> str:
    """The release's go directive; a newer Go than this machine's baseline is selected
    for the go commands that follow (the go command refuses the module otherwise)."""
    directive = re.search(r"^go (\S+)$", gomod, re.M)
    if directive is None:
        return "1.20"
    proxy.toolchain = f"go{directive[1]}" if _go_key(directive[1]) > GO_BASELINE else ""
    return directive[1]


def newest_patch(proxy: Proxy, minor: str) -> int | None:
    """The newest patch a generated project can be tidied (and so built) at."""
    for patch in sorted(served_patches(proxy, minor), reverse=True):
        gomod = proxy.gomod("k8s.io/kubernetes", f"v{minor}.{patch}")
        assert gomod is not None
        directive = _needs(proxy, gomod)
        staging = _staging(gomod)
        untagged = untagged_staging(proxy, staging, f"v0.{minor.split('.')[1]}.{patch}")
        problem = tidy_problem(proxy, minor, patch, [m for m in staging if m not in untagged], "", directive)
        if problem is None:
            return patch
        print(f"{minor}.{patch}: skipped, {problem}", file=sys.stderr)
    return None


def read_minor(minor: str, proxy: Proxy | None = None) -> dict[str, Any] | None:
    """A minor's entry: at its newest usable patch, or, while it has no release, at its
    newest pre-release (recorded as such)."""
    proxy = proxy or Proxy()
    proxy.toolchain = ""
    patch = newest_patch(proxy, minor)
    pre = ""
    if patch is None:
        pre = newest_prerelease(proxy, minor) or ""
        if not pre:
            return None
        patch = 0
    version = f"v{minor}.{patch}" + (f"-{pre}" if pre else "")
    gomod = proxy.gomod("k8s.io/kubernetes", version)
    assert gomod is not None
    go_directive = re.search(r"^go (\S+)$", gomod, re.M)
    godebug = re.search(r"^godebug (\S+)$", gomod, re.M)
    directive = _needs(proxy, gomod)
    newer_go = bool(proxy.toolchain)
    staging = _staging(gomod)
    y = minor.split(".")[1]
    staging_version = f"v0.{y}.{patch}" + (f"-{pre}" if pre else "")
    untagged = untagged_staging(proxy, staging, staging_version)
    if pre:
        problem = tidy_problem(proxy, minor, patch, [m for m in staging if m not in untagged], pre, directive)
        if problem is not None:
            print(f"{version}: not usable, {problem}", file=sys.stderr)
            return None

    go_version_file = proxy.file("k8s.io/kubernetes", version, ".go-version")
    go_version = go_version_file.strip() if go_version_file else None
    config_apis = sorted(
        (d for d in proxy.dirs("k8s.io/kube-scheduler", staging_version, "config") if re.fullmatch(r"v\d+(\w+)?", d)),
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
    parser.add_argument(
        "--record",
        type=Path,
        metavar="FILE",
        help="also write the proxy answers to FILE (gzipped JSON, for the tests)",
    )
    args = parser.parse_args(argv)
    if args.shapes_only:
        data = json.loads(CATALOG.read_text())
        for minor, entry in data["minors"].items():
            for fact in [*FACTS, "templates", "api_changes"]:
                entry.pop(fact, None)
            entry.update(shape(minor))
        return _emit(data, args.write)
    proxy = Recorder() if args.record else Proxy()
    if args.only:
        data = json.loads(CATALOG.read_text())
        for minor in args.only.split(","):
            entry = read_minor(minor, proxy)
            if entry is None:
                raise SystemExit(f"{minor}: no usable patch")
            print(f"{minor}: {_shown(minor, entry)}", file=sys.stderr)
            data["minors"][minor] = entry
    else:
        major, y = (int(x) for x in args.first.split("."))
        data = {"schema": 1, "minors": {}}
        while (entry := read_minor(f"{major}.{y}", proxy)) is not None:
            print(f"{major}.{y}: {_shown(f'{major}.{y}', entry)}", file=sys.stderr)
            data["minors"][f"{major}.{y}"] = entry
            y += 1
    if isinstance(proxy, Recorder):
        save_answers(proxy.answers, args.record)
    return _emit(data, args.write)


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
