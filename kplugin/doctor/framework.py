"""Check 12: what the target minor's framework expects of a plugin's Go code."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from kplugin.core.errors import Setting
from kplugin.doctor.context import Context
from kplugin.doctor.rules import Problem
from kplugin.generate import gosource
from kplugin.model import points
from kplugin.model.spec import PluginSpec

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
    (r"\b(?:framework|fwk)\.(?:MaxNodeScore|MinNodeScore)\b", "1.36", "api-deprecated", "use MaxScore and MinScore"),
)  # fmt: skip


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


def check_framework(ctx: Context) -> Iterator[Problem]:
    """12. what the target minor's framework expects of a plugin: QueueingHints where its
    scheduling queue uses them, SignPod where it batches pods, none of the API it removed."""
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
        if ctx.project.api == "native":
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


def _declares(sources: list[tuple[Path, str]], plugin: PluginSpec, method: str) -> bool:
    """Whether one of the plugin's sources declares ``method`` on its type."""
    return any(m.name == method for _, text in sources for m in gosource.methods(text, plugin.name))
