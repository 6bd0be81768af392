"""Check 5: deploy/rbac.yaml grants what the target's scheduler reads, and its own lease."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kplugin.doctor.context import Context, line_of
from kplugin.doctor.rules import Problem
from kplugin.model import manifests
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
