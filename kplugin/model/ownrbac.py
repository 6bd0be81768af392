"""What an adopted repository's own RBAC manifests give its scheduler: the rules of every
ClusterRole they define and bind to the ServiceAccount their scheduler Deployment runs as
(a Deployment whose container is given --config; any ServiceAccount they bind, when
there is none). kplugin e2e runs the scheduler with them (on top of kube-scheduler's own
role), and adopt --with deploy writes them into its manifests. A wildcard is kept (the
API server checks it); rules of non-resource URLs are left out."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kplugin.core import safefs, yamlio
from kplugin.core.errors import Setting, UsageError

_RBAC_API = "rbac.authorization.k8s.io/v1"


def _documents(root: Path, manifests: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """Every mapping of the repository's recorded manifests, with its file."""
    found = []
    for relative in manifests:
        data = safefs.read_project_file(root, relative)
        path = root / relative
        if data is None:
            raise UsageError(f"{path} is missing; kplugin refresh records the files again")
        for document in yamlio.parse(
            safefs.decode(data, "manifest", path), f"manifest {path}", path=path, every_document=True
        ):
            if isinstance(document, dict):
                found.append((relative, document))
    return found


def _runs_scheduler(pod: dict[str, Any]) -> bool:
    """Whether a pod spec runs a kube-scheduler: a container given --config (the flag
    every kube-scheduler is started with, the subcommand's too)."""
    for container in pod.get("containers") or []:
        if isinstance(container, dict):
            words = [str(w) for w in (container.get("command") or []) + (container.get("args") or [])]
            if any(w.split("=", 1)[0] in ("--config", "-config") for w in words):
                return True
    return False


Account = tuple[str | None, str]  # (namespace, name); None: not said (kubectl -n decides)


def _accounts(documents: list[tuple[str, dict[str, Any]]]) -> set[Account]:
    """The ServiceAccounts the repository's scheduler Deployments run as (a Deployment
    whose container is given --config; the namespace's default account when it names none)."""
    accounts: set[Account] = set()
    for _, doc in documents:
        if doc.get("kind") != "Deployment":
            continue
        pod = ((doc.get("spec") or {}).get("template") or {}).get("spec") or {}
        if isinstance(pod, dict) and _runs_scheduler(pod):
            name = pod.get("serviceAccountName") or "default"
            accounts.add(((doc.get("metadata") or {}).get("namespace"), str(name)))
    return accounts


def _same(account: Account, other: Account) -> bool:
    """The same account: the same name, and the same namespace where both say one."""
    return account[1] == other[1] and (account[0] is None or other[0] is None or account[0] == other[0])


def _rule(rule: Any, where: str) -> dict[str, Any] | None:
    """A rule of the repository's as the run's ClusterRole takes it: its lists of words
    (wildcards too: the API server checks them); a rule of non-resource URLs is not one
    an informer needs (None)."""
    if not isinstance(rule, dict):
        raise UsageError(f"{where}: a rule must be a mapping (apiGroups, resources, verbs)")
    if "nonResourceURLs" in rule and not rule.get("resources"):
        return None
    kept: dict[str, Any] = {}
    for key in ("apiGroups", "resources", "resourceNames", "verbs"):
        value = rule.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) and len(v) < 254 for v in value):
            raise UsageError(f"{where}: {key} must be a list of names; fix the manifest, or run with {Setting.ADMIN}")
        kept[key] = list(value)
    return kept


def manifest_rules(root: Path, manifests: Sequence[str]) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """The rules of the ClusterRoles the repository's ``manifests`` define and bind (with
    a ClusterRoleBinding) to its scheduler's ServiceAccount, and the files they came from."""
    documents = _documents(root, manifests)
    accounts = _accounts(documents)
    roles = {
        str((doc.get("metadata") or {}).get("name")): (relative, doc)
        for relative, doc in documents
        if doc.get("kind") == "ClusterRole" and str(doc.get("apiVersion")) == _RBAC_API
    }
    rules: list[dict[str, Any]] = []
    sources: list[str] = []
    for _, doc in documents:
        ref = doc.get("roleRef") or {}
        if doc.get("kind") != "ClusterRoleBinding" or not isinstance(ref, dict) or ref.get("kind") != "ClusterRole":
            continue
        subjects = [s for s in doc.get("subjects") or [] if isinstance(s, dict) and s.get("kind") == "ServiceAccount"]
        bound = [(s.get("namespace"), str(s.get("name"))) for s in subjects]
        if not bound or (accounts and not any(_same(a, b) for a in accounts for b in bound)):
            continue
        role = str(ref.get("name"))
        if role not in roles:
            continue  # kube-scheduler's own (system:kube-scheduler) or one the repository does not define
        relative, body = roles[role]
        for number, given in enumerate(body.get("rules") or [], 1):
            rule = _rule(given, f"{relative} (ClusterRole {role}, rule {number})")
            if rule is not None and rule not in rules:
                rules.append(rule)
        sources.append(relative)
    return rules, tuple(dict.fromkeys(sources))
