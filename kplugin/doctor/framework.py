"""Check 12: what the target minor's framework expects of a plugin's Go code, and, in a
project written against internal/fw (api: layer), that its code does not import the
framework itself."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from kplugin.core.errors import Setting, UsageError
from kplugin.doctor.context import Context
from kplugin.doctor.rules import Problem
from kplugin.generate import gosource
from kplugin.model import goapi, points, rbacrules
from kplugin.model.apifacts import QueuedInfo
from kplugin.model.spec import ExtensionPoint, PluginSpec
from kplugin.model.versions import supported_releases

# What the framework removed or deprecated, as --api native code would spell it (layer
# code goes through internal/fw, which kplugin keeps current): pattern, minor from which
# it applies, rule, what to write instead.
API_CHANGES: tuple[tuple[str, str, str, str], ...] = (
    (r"\b(?:framework|fwk)\.(?:QueueAfterBackoff|QueueImmediately)\b", "1.29", "api-removed",
     "return Queue (and an error) from QueueingHintFn"),
    (r"\bframework\.(?:Status|Code|CycleState|NodeInfo|PodInfo|QueuedPodInfo|ClusterEvent|ClusterEventWithHint|"
     r"NewStatus|AsStatus|QueueingHint|QueueingHintFn)\b", "1.34", "api-removed",
     f"these moved to k8s.io/kube-scheduler/framework (fwk); or move the plugin to {Setting.API} layer"),
    (r"\bframework\.(?:Handle|Plugin|FilterPlugin|ScorePlugin|PreFilterPlugin|PreScorePlugin|QueueSortPlugin|"
     r"ReservePlugin|PermitPlugin|PreBindPlugin|BindPlugin|PostBindPlugin|PostFilterPlugin|PreEnqueuePlugin|"
     r"EnqueueExtensions|NodeScoreList|PreFilterResult)\b", "1.35", "api-removed",
     f"these moved to k8s.io/kube-scheduler/framework (fwk); or move the plugin to {Setting.API} layer"),
    (r"\bframework\.GVK\b", "1.32", "api-removed", "it is framework.EventResource from 1.32 (fwk's from 1.34)"),
    (r"\bframework\.EventResource\b", "1.34", "api-removed",
     f"it moved to k8s.io/kube-scheduler/framework (fwk); or move the plugin to {Setting.API} layer"),
    (r"\bframework\.WaitingPod\b", "1.35", "api-removed",
     f"it moved to k8s.io/kube-scheduler/framework (fwk); or move the plugin to {Setting.API} layer"),
    (r"\b(?:framework|fwk)\.(?:MaxNodeScore|MinNodeScore)\b", "1.36", "api-deprecated", "use MaxScore and MinScore"),
    # 1.38 (read in k8s.io/kube-scheduler v0.38.0-beta.0 framework/ and k8s.io/kubernetes
    # v1.38.0-beta.0 pkg/scheduler, pkg/features, diffed against 1.37.2)
    (r"\bNominatedPodsForNode\(\s*(?!logger\b|klog\.)", "1.38", "api-removed",
     "NominatedPodsForNode takes the logger first from 1.38: NominatedPodsForNode(logger, nodeName)"),
    (r"\bGetPodGroupSchedulingCycle\(", "1.38", "api-removed", "it is GetPodGroupCycleState from 1.38"),
    (r"\bGetUnscheduledPods\(", "1.38", "api-removed", "it is GetAllUnscheduledPods from 1.38"),
    (r"\bfwk\.MustParseEntityKey\b", "1.38", "api-removed", "PodGroupInfo.GetKey returns an EntityKey from 1.38"),
    (r"\bframework\.(?:PlacementFeasiblePlugin|PlacementProgress)\b", "1.38", "api-removed",
     "it moved to k8s.io/kube-scheduler/framework (fwk) in 1.38"),
    (r"\bfeatures\.(?:PodGroupPreemptionPolicy|DynamicResourceAllocation|InPlacePodVerticalScaling|"
     r"MatchLabelKeysInPodAffinity|PodSchedulingReadiness)\b", "1.38", "api-removed",
     "the feature gate is gone from 1.38 (GA and locked, or removed): drop the check"),
    (r"\bEnable(?:DynamicResourceAllocation|InPlacePodVerticalScaling|PodGroupPreemptionPolicy)\b", "1.38",
     "api-removed", "feature.Features has no such field from 1.38: the feature is always on"),
)  # fmt: skip

# The framework's packages, which layer code reaches only through internal/fw.
FRAMEWORK_PACKAGES = ("k8s.io/kubernetes/pkg/scheduler/framework", "k8s.io/kube-scheduler/framework")
_IMPORT_BLOCK = re.compile(r"^import[ \t]*\((?P<body>.*?)^\)", re.M | re.S)
_IMPORT_SINGLE = re.compile(r'^import[ \t]+(?:[\w.]+[ \t]+)?"[^"\n]*"', re.M)
_IMPORT_SPEC = re.compile(r'^[ \t]*(?:import[ \t]+)?(?:(?P<alias>[\w.]+)[ \t]+)?"(?P<path>[^"\n]*)"', re.M)
# comments, and the literals a comment marker inside of is no comment
_COMMENT = re.compile(r"(?P<literal>\"(?:\\.|[^\"\\\n])*\"|`[^`]*`|'(?:\\.|[^'\\\n])*')|//[^\n]*|/\*.*?\*/", re.S)


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


def events_without_hints(text: str, plugin: str) -> list[int]:
    """The lines of the events a plugin's EventsToRegister registers without a
    QueueingHintFn (read from its source: each {Event: ...} literal of the function)."""
    start = next((m.end for m in gosource.methods(text, plugin) if m.name == "EventsToRegister"), None)
    if start is None:
        return []
    end = re.compile(r"^}", re.M).search(text, start)
    body_end = end.start() if end else len(text)
    lines = []
    for event in re.finditer(r"\{\s*Event\s*:", text[start:body_end]):
        at = start + event.start()
        depth, i = 0, at
        while i < body_end:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        if "QueueingHintFn" not in text[at:i]:
            lines.append(_line(text, at))
    return lines


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
                for line in events_without_hints(text, plugin.name):
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
            for pattern, since, rule, fix in API_CHANGES:
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
    if ctx.project.api == goapi.LAYER:
        yield from _framework_imported(ctx)
    yield from _informers_unread(ctx)
    yield from _gates_off(ctx)


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
        for path in (
            ctx.project.root / "deploy" / "deployment.yaml",
            ctx.project.root / "charts" / ctx.project.name / "templates" / "deployment.yaml",
        ):
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


# the custom resources a plugin's code names: fw.CustomResource("plural", "version",
# "group"), an EventResource or GVK of "plural.version.group", a GroupVersionResource literal
_CUSTOM_RESOURCE = re.compile(
    r'\bCustomResource\(\s*"(?P<plural>[^"]+)"\s*,\s*"(?P<version>[^"]+)"\s*,\s*"(?P<group>[^"]+)"\s*\)'
)
_EVENT_RESOURCE = re.compile(
    r'\b(?:EventResource|GVK)\(\s*"(?P<plural>[a-z0-9-]+)\.(?P<version>v[0-9a-z]+)\.(?P<group>[a-z0-9.-]+)"\s*\)'
)
_GVR = re.compile(r"\bGroupVersionResource\{(?P<fields>[^}]*)\}")
_GVR_FIELD = re.compile(r'\b(?P<key>Group|Version|Resource)\s*:\s*"(?P<value>[^"]*)"')


def custom_resources(text: str) -> list[tuple[int, str, str]]:
    """(line, group, plural) of each custom resource the Go source names (comments left out)."""
    code = _COMMENT.sub(lambda m: m[0] if m["literal"] else re.sub(r"[^\n]", " ", m[0]), text)
    found = [(_line(code, m.start()), m["group"], m["plural"]) for m in _CUSTOM_RESOURCE.finditer(code)]
    found += [(_line(code, m.start()), m["group"], m["plural"]) for m in _EVENT_RESOURCE.finditer(code)]
    for match in _GVR.finditer(code):
        fields = {f["key"]: f["value"] for f in _GVR_FIELD.finditer(match["fields"])}
        if fields.get("Group") and fields.get("Resource"):  # the core group's kinds are kube-scheduler's own
            found.append((_line(code, match.start()), fields["Group"], fields["Resource"]))
    return sorted(set(found))


def _informers_unread(ctx: Context) -> Iterator[Problem]:
    """A custom resource the plugins' code reads or registers events on is one
    config/rbac/rules.yaml lets the scheduler list and watch (a bad rules file is
    rbac-rules-file's finding)."""
    try:
        granted = [r.as_dict() for r in rbacrules.load(ctx.project.root)]
    except UsageError:
        return
    for plugin in ctx.project.plugins:
        for path, text in _plugin_sources(ctx, plugin):
            for line, group, plural in custom_resources(text):
                reads = rbacrules.watches(group, plural)
                if rbacrules.missing((reads,), granted):
                    yield Problem(
                        "rbac-informer-unread",
                        path,
                        line,
                        f"{plugin.name} reads {plural}.{group}, and {rbacrules.RULES_FILE} grants no list and "
                        "watch on it",
                        group=group,
                        plural=plural,
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
    """A layer project's own Go code under pkg/ that imports the framework itself."""
    spellings = _layer_spellings()
    for path, text in _own_sources(ctx):
        code = _COMMENT.sub(lambda m: m[0] if m["literal"] else re.sub(r"[^\n]", " ", m[0]), text)
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


def _own_sources(ctx: Context) -> Iterator[tuple[Path, str]]:
    """The project's own Go code under pkg/: not tests, not the files kplugin generates
    (zz_generated ones and those kplugin.yaml records), not what go build skips."""
    top = ctx.project.root / "pkg"
    if not top.is_dir() or top.is_symlink():
        return
    for directory, subdirectories, files in os.walk(top):  # symlinked directories are not entered
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith((".", "_")) and d != "testdata")
        for name in sorted(files):
            path = Path(directory) / name
            relative = path.relative_to(ctx.project.root).as_posix()
            if not name.endswith(".go") or name.endswith("_test.go") or name.startswith("zz_generated"):
                continue
            if relative in ctx.project.generated:
                continue
            text = ctx.text(path)
            if text is not None:
                yield path, text


def _declares(sources: list[tuple[Path, str]], plugin: PluginSpec, method: str) -> bool:
    """Whether one of the plugin's sources declares ``method`` on its type."""
    return any(m.name == method for _, text in sources for m in gosource.methods(text, plugin.name))
