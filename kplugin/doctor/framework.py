"""Check 12: what the target minor's framework expects of a plugin's Go code, and, in a
project written against internal/fw (api: layer), that its code does not import the
framework itself."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from kplugin.core.errors import UsageError
from kplugin.doctor.context import Context
from kplugin.doctor.rules import Problem
from kplugin.generate import gosource
from kplugin.model import goapi, points, rbacrules
from kplugin.model.apichanges import API_CHANGES, framework_moves
from kplugin.model.apifacts import QueuedInfo
from kplugin.model.spec import ExtensionPoint, PluginSpec
from kplugin.model.versions import supported_releases

# The framework's packages, which layer code reaches only through internal/fw.
FRAMEWORK_PACKAGES = ("k8s.io/kubernetes/pkg/scheduler/framework", "k8s.io/kube-scheduler/framework")
_IMPORT_BLOCK = re.compile(r"^import[ \t]*\((?P<body>.*?)^\)", re.M | re.S)
_IMPORT_SINGLE = re.compile(r'^import[ \t]+(?:[\w.]+[ \t]+)?"[^"\n]*"', re.M)
_IMPORT_SPEC = re.compile(r'^[ \t]*(?:import[ \t]+)?(?:(?P<alias>[\w.]+)[ \t]+)?"(?P<path>[^"\n]*)"', re.M)


def _plugin_sources(ctx: Context, plugin: PluginSpec) -> list[tuple[Path, str]]:
    """The plugin's own Go files (not tests, not kplugin's zz_generated ones) and their text."""
    directory = ctx.project.root / "pkg" / plugin.package
    if not directory.is_dir() or directory.is_symlink():
        return []
    found = []
    for path in sorted(directory.glob("*.go")):
        if not path.name.endswith("_test.go") and not path.name.startswith("zz_generated"):
            text = ctx.text(path)
            if text is not None:
                found.append((path, text))
    return found


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# a return of a PreQueueingHintFn: of no pod (an empty result, AllPods false), of pods or
# all of them (AllPods, Pods: ..., a helper that names pods); anything else is not told
_RETURN = re.compile(r"^\s*return\b(?P<value>[^\n]*)", re.M)
_NO_POD = re.compile(r"^\s*(?:\w+\.)?PreQueueingHintResult\{\s*(?:AllPods\s*:\s*false\s*)?\}\s*(?:,|$)")


def _names_no_pod(sources: list[tuple[Path, str]], plugin: str, fn: str) -> bool:
    """Whether the function a PreQueueingHintFn names (a method of the plugin, or a
    function of its package) returns an empty result at every return: the event then
    never reaches the plugin's QueueingHint, for any pod. False where the code does not
    tell (a function literal, a function found nowhere, a result it does not spell)."""
    if fn == "func":
        return False
    name = fn.rsplit(".", 1)[-1]
    for _, text in sources:
        if "." in fn:  # a method value: pl.name
            found = next((m for m in gosource.methods(text, plugin) if m.name == name), None)
        elif (top := re.search(rf"^func {re.escape(name)}\(", text, re.M)) is not None:
            found = gosource.Method(name, _line(text, top.start()), top.end())
        else:
            found = None
        if found is not None:
            _, code = gosource.body(text, found)
            returns = [m["value"] for m in _RETURN.finditer(code)]
            return bool(returns) and all(_NO_POD.match(value) for value in returns)
    return False


def _pre_hints_problems(ctx: Context, plugin: PluginSpec, sources: list[tuple[Path, str]]) -> Iterator[Problem]:
    """A plugin's PreQueueingHintFns: one that names no pod whatever the event; one on a
    minor without them (1.37 on); one the scheduler does not call, its gate off (1.37)."""
    facts, version = ctx.target.facts, ctx.target.version
    named = [(path, line, fn) for path, text in sources for line, fn in gosource.pre_hints(text, plugin.name)]
    if not named:
        return
    for path, line, fn in named:
        if _names_no_pod(sources, plugin.name, fn):
            yield Problem(
                "prequeueinghint-no-pods", path, line,
                f"{plugin.name}'s PreQueueingHint {fn} names no pod at any of its returns, so the scheduler never asks "
                "its QueueingHint about a pod it rejected on this event",
            )  # fmt: skip
    path, line, _ = named[0]
    if not facts.pre_hints:
        native = ctx.project.api == goapi.NATIVE
        yield Problem(
            "prequeueinghint-unsupported" if native else "prequeueinghint-ignored", path, line,
            f"{plugin.name} names a PreQueueingHintFn, and Kubernetes {version} has none (1.37 on)",
        )  # fmt: skip
        return
    if (gate := facts.pre_hints_gate) is None:
        return
    for deployment in _deployments(ctx):
        text = ctx.text(deployment)
        if text is None:
            continue
        if any(f"{gate}=true" in m["gates"].split(",") for m in _FEATURE_GATES.finditer(text)):
            yield Problem(
                "prequeueinghint-gate-on", deployment, None,
                f"the scheduler runs with {gate}, alpha at {version.minor_key}, for {plugin.name}'s "
                f"PreQueueingHints ({path.name}:{line})",
            )  # fmt: skip
        else:
            yield Problem(
                "prequeueinghint-gate-off", deployment, None,
                f"the scheduler runs without {gate}, so at {version.minor_key} it never calls {plugin.name}'s "
                f"PreQueueingHints ({path.name}:{line})",
            )  # fmt: skip


def _deployments(ctx: Context) -> tuple[Path, ...]:
    """The Deployments that run the scheduler: deploy/'s and the chart's."""
    root = ctx.project.root
    return (root / "deploy" / "deployment.yaml", root / "charts" / ctx.project.name / "templates" / "deployment.yaml")


# what reads a queue entry's pod (layer's fw.QueuedPod, the pod's entry of native code),
# and what shows the entry's kind is checked first (its Type, a nil pod, a checked assertion)
_READS_POD = re.compile(r"\bQueuedPod\(|\bGetPodInfo\(|\.\(\*?\w+\.QueuedPodInfo\)")
_CHECKS_KIND = re.compile(r"\.Type\(\)|\bnil\b|\bok\b")


def _pods_only(ctx: Context, plugin: PluginSpec, sources: list[tuple[Path, str]]) -> Iterator[Problem]:
    """A QueueSort plugin whose Less reads each entry's pod without checking that it is one."""
    for path, text in sources:
        for method in gosource.methods(text, plugin.name):
            if method.name != "Less":
                continue
            start, code = gosource.body(text, method)
            read = _READS_POD.search(code)
            if read is not None and _CHECKS_KIND.search(code) is None:
                yield Problem(
                    "queuesort-pods-only", path, _line(text, start + read.start()),
                    f"{plugin.name}'s Less reads the pod of every queue entry, and Kubernetes {ctx.target.version} "
                    "queues pod groups as entries too",
                )  # fmt: skip


def check_framework(ctx: Context) -> Iterator[Problem]:
    """12. what the target minor's framework expects of a plugin: QueueingHints where its
    scheduling queue uses them, SignPod where it batches pods, none of the API it removed
    (native code) and no framework package but through internal/fw (layer code)."""
    facts = ctx.target.facts
    minor = (ctx.target.version.major, ctx.target.version.minor)
    signing = points.where("signs")  # in cycle order, as the message lists them
    for plugin in ctx.project.plugins:
        sources = _plugin_sources(ctx, plugin)
        if facts.hints_on_by_default:
            for path, text in sources:
                for line in gosource.events_without_hints(text, plugin.name):
                    yield Problem(
                        "hints-missing", path, line,
                        f"{plugin.name} registers an event without a QueueingHintFn, and Kubernetes "
                        f"{ctx.target.version} uses hints ({facts.queueing_hints})",
                    )  # fmt: skip
        if facts.sign_pod and any(plugin.has(p) for p in signing) and not _declares(sources, plugin, "SignPod"):
            declared = re.compile(rf"^type {re.escape(plugin.name)} struct", re.M)
            where = next(((p, _line(t, m.start())) for p, t in sources if (m := declared.search(t))), None)
            yield Problem(
                "signpod-missing",
                where[0] if where else ctx.project.root / "pkg" / plugin.package,
                where[1] if where else None,
                f"{plugin.name} is a {'/'.join(str(p) for p in signing if plugin.has(p))} plugin without SignPod: "
                f"Kubernetes {ctx.target.version} schedules its profile pod by pod",
            )  # fmt: skip
        if ctx.project.api == goapi.NATIVE:
            for pattern, since, rule, fix in (*framework_moves(), *API_CHANGES):
                if minor < tuple(int(x) for x in since.split(".")):
                    continue
                for path, text in sources:
                    for match in re.finditer(pattern, text):
                        yield Problem(
                            rule, path, _line(text, match.start()),
                            f"{match[0]} is {'gone' if rule == 'api-removed' else 'deprecated'} from {since}",
                            fix=fix,
                        )  # fmt: skip
        if facts.queued_info == QueuedInfo.ENTITY and plugin.has(ExtensionPoint.QUEUE_SORT):
            yield from _pods_only(ctx, plugin, sources)
        yield from _pre_hints_problems(ctx, plugin, sources)
    if ctx.project.api == goapi.LAYER:
        yield from _framework_imported(ctx)
    yield from _informers_unread(ctx)
    yield from _gates_off(ctx)
    yield from _gates_unknown(ctx)


_FEATURE_GATES = re.compile(r"--feature-gates[= ](?P<gates>[\w=,.-]+)")


def _gates_off(ctx: Context) -> Iterator[Problem]:
    """A plugin at points the scheduler calls only with feature gates on (a pod group's):
    the Deployment of deploy/ and of the chart must run the scheduler with them, and with
    GangScheduling where the minor keeps gang scheduling behind it (1.36)."""
    target = ctx.project.target
    for plugin in ctx.project.plugins:
        needed = points.minor_gates(plugin.gates, target.facts.gang_gate)
        if not needed:
            continue
        at = ", ".join(str(p) for p in plugin.extension_points if p.row.gates)
        for path in _deployments(ctx):
            text = ctx.text(path)
            if text is None:
                continue  # a missing deploy/ file is generated-missing's
            flags = list(_FEATURE_GATES.finditer(text))
            on = {gate for m in flags for gate in m["gates"].split(",")}
            missing = [gate for gate in needed if f"{gate}=true" not in on]
            if not missing:
                continue
            if any(gate in plugin.gates for gate in missing):
                effect = f"so it never calls {plugin.name} at {at}"
            else:  # GangScheduling alone: the plugin is called, a gang is not held
                effect = (f"so at {target.version.minor_key} a PodGroup's gang policy holds nothing (before 1.37 gang "
                          "scheduling has a gate of its own)")  # fmt: skip
            yield Problem(
                "gate-off", path, _line(text, flags[0].start()) if flags else None,
                f"the scheduler runs without {', '.join(missing)}, {effect}",
                gates=",".join(f"{gate}=true" for gate in needed),
            )  # fmt: skip


def _gates_unknown(ctx: Context) -> Iterator[Problem]:
    """A gate the Deployment turns on that the target minor does not know (GangScheduling
    after 1.36, kept by upgrade --keep-edited from a 1.36 Deployment, say)."""
    target = ctx.target.version
    for path in _deployments(ctx):
        text = ctx.text(path)
        if text is None:
            continue
        for match in _FEATURE_GATES.finditer(text):
            for setting in match["gates"].split(","):
                gate = setting.split("=", 1)[0]
                if not points.gate_known(gate, (target.major, target.minor)):
                    first, last = points.GATE_MINORS[gate]
                    yield Problem(
                        "gate-unknown", path, _line(text, match.start()),
                        f"--feature-gates turns on {gate}, which Kubernetes {target.minor_key} does not know "
                        f"(it has it in {first}" + (f" to {last})" if last else " and later)"),
                        gate=gate,
                    )  # fmt: skip


def _informers_unread(ctx: Context) -> Iterator[Problem]:
    """A custom resource the plugins' code reads or registers events on is one
    config/rbac/rules.yaml lets the scheduler list and watch (a bad rules file is
    rbac-rules-file's finding)."""
    try:
        granted = [r.as_dict() for r in rbacrules.load(ctx.project.root)]
    except UsageError:
        return
    constants = gosource.GoConstants(_own_go(ctx))
    for plugin in ctx.project.plugins:
        for path, text in _plugin_sources(ctx, plugin):
            for line, group, plural in gosource.custom_resources(text, constants, path.parent.name):
                reads = rbacrules.watches(group, plural)
                if rbacrules.missing((reads,), granted):
                    yield Problem(
                        "rbac-informer-unread",
                        path,
                        line,
                        f"{plugin.name} reads {plural}.{group}, and {rbacrules.RULES_FILE} grants no list and "
                        "watch on it",
                        api_group=group,
                        resource=plural,
                    )


def go_imports(text: str) -> Iterator[tuple[int, str | None, str]]:
    """The line, alias (None without one) and path of each import of a Go file, from
    import blocks and single-line imports."""
    spans = [(m.start("body"), m.end("body")) for m in _IMPORT_BLOCK.finditer(text)]
    spans += [(m.start(), m.end()) for m in _IMPORT_SINGLE.finditer(text)]
    for start, end in sorted(spans):
        for spec in _IMPORT_SPEC.finditer(text, start, end):
            yield _line(text, spec.start("path")), spec["alias"], spec["path"]


@cache
def _layer_spellings() -> dict[str, str]:
    """internal/fw's name for each name the framework gives it on some supported minor
    (framework.GVK -> EventResource, fwk.QueuedEntityInfo -> QueuedInfo, ...)."""
    layer = goapi.layer_names()
    found: dict[str, str] = {}
    for release in supported_releases():
        for name, spelled in goapi.native_names(release.facts).items():
            if name in layer and "." in spelled:
                found.setdefault(spelled.rsplit(".", 1)[1], layer[name])
    return found


def _framework_imported(ctx: Context) -> Iterator[Problem]:
    """A layer project's own Go code under pkg/ (and its helper packages) that imports the
    framework itself."""
    spellings = _layer_spellings()
    # pkg/, and the helper packages beside it (internal/, test/util...): not tests, which
    # may use the framework's own test helpers
    for path, text in _own_sources(ctx, ("pkg", "internal", "test")):
        code = gosource.blank_comments(text)
        for line, alias, package in go_imports(code):
            if package not in FRAMEWORK_PACKAGES:
                continue
            qualifier = alias or gosource.package_name(package)
            used = dict.fromkeys(re.findall(rf"(?<![\w.]){re.escape(qualifier)}\.(\w+)", code))
            aliases = [f"{spellings[name]} for {qualifier}.{name}" for name in used if name in spellings]
            aliases += [f"no alias for {qualifier}.{name}" for name in used if name not in spellings]
            yield Problem(
                "framework-imported", path, line,
                f"imports {package} directly, in a project written against internal/fw (api: layer)",
                aliases="; ".join(aliases) or "fw.Handle, fw.Status, fw.WaitingPod, fw.EventResource and the rest",
            )  # fmt: skip


def _own_sources(ctx: Context, tops: tuple[str, ...] = ("pkg",), generated: bool = False) -> Iterator[tuple[Path, str]]:
    """The project's own Go code under ``tops``: not tests, not what go build skips, and
    not the files kplugin generates (zz_generated ones and those kplugin.yaml records)
    unless ``generated``."""
    for top in (ctx.project.root / name for name in tops):
        if not top.is_dir() or top.is_symlink():
            continue
        for directory, subdirectories, files in os.walk(top):  # symlinked directories are not entered
            subdirectories[:] = sorted(d for d in subdirectories if not d.startswith((".", "_")) and d != "testdata")
            for name in sorted(files):
                path = Path(directory) / name
                relative = path.relative_to(ctx.project.root).as_posix()
                if not name.endswith(".go") or name.endswith("_test.go"):
                    continue
                if not generated and (name.startswith("zz_generated") or relative in ctx.project.generated):
                    continue
                text = ctx.text(path)
                if text is not None:
                    yield path, text


def _own_go(ctx: Context) -> Iterator[tuple[Path, str]]:
    """Where a plugin's constants may be declared: pkg/ and apis/ (register.go's GroupName),
    generated or not, but pkg/generated/ (client code, large, none of them)."""
    for path, text in _own_sources(ctx, ("pkg", "apis"), generated=True):
        if "generated" not in path.relative_to(ctx.project.root).parts[:2]:
            yield path, text


def _declares(sources: list[tuple[Path, str]], plugin: PluginSpec, method: str) -> bool:
    """Whether one of the plugin's sources declares ``method`` on its type."""
    return any(m.name == method for _, text in sources for m in gosource.methods(text, plugin.name))
