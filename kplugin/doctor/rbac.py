"""Check 5: deploy/rbac.yaml grants what the target's scheduler reads, and its own lease."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from kplugin.core import safefs
from kplugin.core.errors import UsageError
from kplugin.doctor.context import Context, line_of
from kplugin.doctor.rules import Problem
from kplugin.kube import kinds
from kplugin.model import crds, manifests, rbacrules
from kplugin.model.schedconfig import DEFAULT_LEASE


def _rules(ctx: Context) -> tuple[Path, list[dict[str, Any]]]:
    """The rules of deploy/rbac.yaml, each a mapping of its document's kind and its
    apiGroups, resources, verbs and resourceNames, lists of strings (values of other
    types are findings)."""
    path = ctx.project.root / "deploy/rbac.yaml"
    found = []
    for i, doc in enumerate(ctx.load(path, many=True) or []):
        doc = ctx.mapping(doc, path, None, f"document {i + 1}")
        kind = ctx.string(doc.get("kind"), path, line_of(doc, "kind"), f"document {i + 1} kind", "")
        rules = ctx.sequence(doc.get("rules"), path, line_of(doc, "rules"), f"document {i + 1} rules")
        for j, rule in enumerate(rules):
            rule = ctx.mapping(rule, path, line_of(rules, j), f"rules[{j}]")
            clean: dict[str, Any] = {"kind": kind}
            for key in ("apiGroups", "resources", "verbs", "resourceNames"):
                values = ctx.sequence(rule.get(key), path, line_of(rule, key), f"rules[{j}].{key}")
                clean[key] = [
                    v
                    for k, v in enumerate(values)
                    if ctx.string(v, path, line_of(values, k), f"rules[{j}].{key}[{k}]", "") is not None
                ]
            found.append(clean)
    return path, found


def check_rbac(ctx: Context) -> Iterator[Problem]:
    """5. RBAC covers what this version's scheduler reads, and its own lease."""
    path, rules = _rules(ctx)
    if not rules:
        yield Problem("rbac-missing", path, None, "no RBAC rules found")
        return
    granted: set[tuple[str, str, str]] = set()
    for rule in rules:
        if rule["kind"] != "ClusterRole":
            continue
        for group in rule.get("apiGroups") or []:
            for resource in rule.get("resources") or []:
                for verb in rule.get("verbs") or []:
                    granted.add((str(group), str(resource), str(verb)))
    version = ctx.target.version
    for need in manifests.scheduler_rules(version.major, version.minor):
        missing = [
            f"{verb} {group or 'core'}/{resource}"
            for group in need["apiGroups"]
            for resource in need["resources"]
            for verb in need["verbs"]
            if (group, resource, verb) not in granted and ("*", resource, verb) not in granted
        ]
        if missing:
            yield Problem(
                "rbac-rules",
                path,
                None,
                f"the ClusterRole misses {', '.join(missing[:4])}{' …' if len(missing) > 4 else ''}",
                version=version,
            )
    lease = ctx.config.get("leaderElection") if isinstance(ctx.config, dict) else None
    lease = lease if isinstance(lease, dict) else {}
    name = lease.get("resourceName", DEFAULT_LEASE)
    if lease and lease.get("leaderElect", True) is True and isinstance(name, str):  # wrong types: check_lease
        ok = any(
            rule["kind"] in ("Role", "ClusterRole")
            and "leases" in (rule.get("resources") or [])
            and "update" in (rule.get("verbs") or [])
            and name in (rule.get("resourceNames") or [name])
            for rule in rules
        )
        if not ok:
            yield Problem("rbac-lease", path, None, f"no rule lets the scheduler update its lease {name!r}", name=name)
    yield from _project_rules(ctx, path, rules)
    yield from _chart_rules(ctx, rules)
    yield from _crds(ctx)


def _project_rules(ctx: Context, path: Path, rules: list[dict[str, Any]]) -> Iterator[Problem]:
    """The ClusterRole holds every rule of config/rbac/rules.yaml."""
    try:
        wanted = rbacrules.load(ctx.project.root)
    except UsageError as err:
        yield Problem("rbac-rules-file", ctx.project.root / rbacrules.RULES_FILE, None, str(err))
        return
    cluster_role = [{k: v for k, v in r.items() if k != "kind"} for r in rules if r["kind"] == "ClusterRole"]
    missing = rbacrules.missing(wanted, cluster_role)
    if missing:
        shown = ", ".join(missing[:4]) + (" …" if len(missing) > 4 else "")
        yield Problem("rbac-project-rules", path, None, f"the ClusterRole misses {shown} ({rbacrules.RULES_FILE})")


def _chart_rules(ctx: Context, rules: list[dict[str, Any]]) -> Iterator[Problem]:
    """The chart's values grant what deploy/rbac.yaml's ClusterRole grants."""
    values = ctx.project.root / "charts" / ctx.project.name / "values.yaml"
    data = ctx.load(values)
    if not isinstance(data, dict) or not isinstance(data.get("rbac"), dict):
        return  # no chart, or not kplugin's: nothing to compare
    listed = data["rbac"].get("rules")
    chart = [_plain(r) for r in listed] if isinstance(listed, list) else None
    deploy = [{k: v for k, v in r.items() if k != "kind" and v} for r in rules if r["kind"] == "ClusterRole"]
    if chart != deploy:
        extra = next((r for r in chart or [] if r not in deploy), None)
        lacking = next((r for r in deploy if r not in (chart or [])), None)
        shown = (
            f"it lacks {_rule_text(lacking)}"
            if lacking
            else f"it adds {_rule_text(extra)}"
            if extra
            else ("in another order")
        )
        yield Problem(
            "rbac-chart-differs",
            values,
            line_of(data["rbac"], "rules"),
            f"rbac.rules differ from deploy/rbac.yaml's ClusterRole: {shown}",
        )


def _plain(rule: Any) -> Any:
    if not isinstance(rule, dict):
        return rule
    return {str(k): [str(v) for v in vs] if isinstance(vs, list) else vs for k, vs in rule.items() if vs}


def _rule_text(rule: Any) -> str:
    if not isinstance(rule, dict):
        return repr(rule)[:80]
    groups = ",".join(str(g) or "core" for g in rule.get("apiGroups") or [])
    return f"{','.join(map(str, rule.get('verbs') or []))} {groups}/{','.join(map(str, rule.get('resources') or []))}"


def _crds(ctx: Context) -> Iterator[Problem]:
    """The project's CRDs (config/crd/) are readable, their kinds readable by the
    scheduler (config/rbac/rules.yaml), and deploy/crds.yaml installs exactly them."""
    root = ctx.project.root
    try:
        definitions = crds.load(root)
        granted = [r.as_dict() for r in rbacrules.load(root)]
    except UsageError as err:
        yield Problem("rbac-crd-file", root / crds.CRD_DIR, None, str(err))
        return
    for definition in definitions:
        for info in kinds.from_crd(definition.body)[:1]:  # one plural and group for all its versions
            reads = rbacrules.watches(info.group, info.plural)
            if rbacrules.missing((reads,), granted):
                yield Problem(
                    "rbac-crd-unread",
                    root / definition.file,
                    None,
                    f"{info.plural}.{info.group} ({info.kind}): {rbacrules.RULES_FILE} grants no list and watch on it",
                    api_group=info.group,
                    resource=info.plural,
                )
    defined = {d.name for d in definitions}
    for api in ctx.project.apis:
        lister = PurePosixPath("pkg/generated/listers", api.short, api.version)
        missing = (
            f"no CRD named {api.crd_name} in config/crd/"
            if api.crd_name not in defined
            else f"no {lister}/"
            if safefs.lstat_mode(root / lister) is None
            else ""
        )
        if missing:
            yield Problem("rbac-api-ungenerated", root / api.directory, None, f"{api.kind}: {missing}")
    manifest = crds.manifest(definitions)
    expected = manifest.encode() if manifest is not None else None
    deployed = safefs.read_project_file(root, "deploy/crds.yaml")
    if deployed != expected:
        what = (
            "deploy/crds.yaml is missing"
            if deployed is None
            else "deploy/crds.yaml installs CRDs config/crd/ does not hold"
            if expected is None
            else "deploy/crds.yaml differs from config/crd/"
        )
        yield Problem("rbac-crd-stale", root / "deploy/crds.yaml", None, what)
