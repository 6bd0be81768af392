"""The project's own RBAC rules: what its plugins read beyond what kube-scheduler itself
needs (the podgroups of a gang plugin, a quota object of its own API). One user-owned
file, ``config/rbac/rules.yaml``, a list of ClusterRole rules; kplugin merges them into
deploy/rbac.yaml, the chart's values and the e2e ServiceAccount (through deploy/), and
``kplugin add api`` adds its kind's. The file is the user's: kplugin reads it, checks
every value before anything is written, and never rewrites it but to add a rule."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from kplugin.core import safefs, yamlio
from kplugin.core.errors import UsageError

RULES_FILE = PurePosixPath("config/rbac/rules.yaml")
VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
READ = ("get", "list", "watch")
MAX_RULES = 200
_KEYS = {"apiGroups", "resources", "verbs", "resourceNames"}
# an API group ("" is the core group), a resource with an optional subresource, a name
_GROUP = re.compile(r"(|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)", re.ASCII)
_RESOURCE = re.compile(r"[a-z][a-z0-9]{0,62}(/[a-z][a-z0-9]{0,62})?", re.ASCII)
_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?", re.ASCII)

HEADER = """\
# The ClusterRole rules the project's plugins need beyond kube-scheduler's own: objects
# of their own kind (a CRD), or built-in kinds the scheduler does not read. kplugin
# merges them into deploy/rbac.yaml, the chart's values (rbac.rules) and the account
# kplugin e2e runs the scheduler as (through deploy/rbac.yaml).
# After editing this file, run `kplugin refresh` to rewrite deploy/ and the chart.
# Verbs: get, list, watch, create, update, patch, delete, deletecollection (no "*").
"""


@dataclass(frozen=True)
class PolicyRule:
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    resource_names: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        rule: dict[str, Any] = {
            "apiGroups": list(self.api_groups),
            "resources": list(self.resources),
            "verbs": list(self.verbs),
        }
        if self.resource_names:
            rule["resourceNames"] = list(self.resource_names)
        return rule

    def grants(self) -> set[tuple[str, str, str]]:
        """(group, resource, verb) for every combination this rule allows (of any name)."""
        if self.resource_names:
            return set()
        return {(g, r, v) for g in self.api_groups for r in self.resources for v in self.verbs}


def load(root: Path) -> tuple[PolicyRule, ...]:
    """The project's rules (none when the file does not exist); a bad value is a
    UsageError naming the file, the entry and what is allowed. Read as every project file
    is: a regular file inside the project, never through a symlink or from a FIFO."""
    data = safefs.read_project_file(root, RULES_FILE, safefs.SMALL_FILE)
    if data is None:
        return ()
    path = root / RULES_FILE
    return parse(
        yamlio.parse(safefs.decode(data, "RBAC rules file", path), f"RBAC rules file {path}", path=path),
        str(RULES_FILE),
    )


def parse(data: Any, where: str) -> tuple[PolicyRule, ...]:
    if data is None:
        return ()
    if not isinstance(data, list):
        raise UsageError(f"{where}: must be a list of rules (apiGroups, resources, verbs), not {type(data).__name__}")
    if len(data) > MAX_RULES:
        raise UsageError(f"{where}: {len(data)} rules; at most {MAX_RULES}")
    return tuple(_rule(item, f"{where}: rule {i + 1}") for i, item in enumerate(data))


def _rule(item: Any, where: str) -> PolicyRule:
    if not isinstance(item, dict):
        raise UsageError(f"{where}: must be a mapping of apiGroups, resources and verbs")
    unknown = sorted(str(k) for k in item if k not in _KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0][:60]!r}; a rule has {', '.join(sorted(_KEYS))}")
    groups = _strings(item.get("apiGroups"), f"{where} apiGroups", _GROUP, "an API group ('' for the core group)")
    resources = _strings(item.get("resources"), f"{where} resources", _RESOURCE, "a plural such as podgroups")
    verbs = _strings(item.get("verbs"), f"{where} verbs", None, f"one of {', '.join(VERBS)}")
    names = item.get("resourceNames")
    resource_names = _strings(names, f"{where} resourceNames", _NAME, "an object name") if names is not None else ()
    for what, values in (("apiGroups", groups), ("resources", resources), ("verbs", verbs)):
        if not values:
            raise UsageError(f"{where}: {what} must list at least one value")
    bad = [v for v in verbs if v not in VERBS]
    if bad:
        raise UsageError(f"{where} verbs: {bad[0][:40]!r} is not a verb kplugin grants; use {', '.join(VERBS)}")
    return PolicyRule(groups, resources, verbs, resource_names)


def _strings(value: Any, where: str, pattern: re.Pattern[str] | None, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > 50:
        raise UsageError(f"{where}: must be a list of at most 50 strings")
    for item in value:
        if not isinstance(item, str) or (pattern is not None and not pattern.fullmatch(item)):
            shown = repr(item)[:60]
            raise UsageError(f"{where}: {shown} is not {what} (a wildcard is not allowed: name what the plugin reads)")
    return tuple(dict.fromkeys(value))


def watches(group: str, plural: str) -> PolicyRule:
    """What an informer of a resource needs: list and watch."""
    return PolicyRule((group,), (plural,), ("list", "watch"))


def merged(base: list[dict[str, Any]], extra: tuple[PolicyRule, ...]) -> list[dict[str, Any]]:
    """kube-scheduler's rules, then the project's (each once)."""
    rules = list(base)
    for rule in extra:
        if rule.as_dict() not in rules:
            rules.append(rule.as_dict())
    return rules


def _granted(rules: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """(group, resource, verb) of every combination ClusterRole ``rules`` allow (of any name)."""
    granted: set[tuple[str, str, str]] = set()
    for given in rules:
        if not given.get("resourceNames"):
            granted |= {
                (str(g), str(r), str(v))
                for g in given.get("apiGroups") or []
                for r in given.get("resources") or []
                for v in given.get("verbs") or []
            }
    return granted


def beyond(granted_rules: list[dict[str, Any]], wanted_rules: list[dict[str, Any]]) -> list[str]:
    """What ClusterRole rules ``granted_rules`` grant that ``wanted_rules`` do not ask for,
    as "verb group/resource", sorted (rules by name are left out: the lease's)."""
    return [f"{v} {g or 'core'}/{r}" for g, r, v in sorted(_granted(granted_rules) - _granted(wanted_rules))]


def missing(wanted: tuple[PolicyRule, ...], granted_rules: list[dict[str, Any]]) -> list[str]:
    """What of ``wanted`` the ClusterRole rules ``granted_rules`` do not grant, as
    "verb group/resource" (a rule by name: "verbs resources by name"). A granted ``*``
    (group, resource or verb) grants every one, as the API server reads it."""
    granted = _granted(granted_rules)

    def allowed(group: str, resource: str, verb: str) -> bool:
        return any(g in (group, "*") and r in (resource, "*") and v in (verb, "*") for g, r, v in granted)

    found: list[str] = []
    for rule in wanted:
        if rule.resource_names:
            if rule.as_dict() not in granted_rules:
                found.append(f"{','.join(rule.verbs)} {'/'.join(rule.resources)} by name")
            continue
        found += [f"{v} {g or 'core'}/{r}" for g, r, v in sorted(rule.grants()) if not allowed(g, r, v)]
    return found


def text(rules: tuple[PolicyRule, ...]) -> str:
    """The file's content for ``rules`` (with its header)."""
    body = yamlio.dump([r.as_dict() for r in rules]) if rules else "[]\n"
    return HEADER + body
