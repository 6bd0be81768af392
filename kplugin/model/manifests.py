"""Kubernetes manifests of a generated project: deploy/, and the Helm chart's templates
and values (generate.chart), from the same data.

Built as data and emitted with ruamel.yaml. The scheduler runs as a second scheduler
with a lease of its own, non-root, read-only root filesystem, no capabilities. What a
chart's release chooses (names, namespace, image, replicas, resources, rules) comes in
through a Placement and the functions' arguments: deploy/'s literal values, or the
chart's Helm expressions.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kplugin.core import yamlio
from kplugin.core.errors import Setting, UsageError
from kplugin.model.apifacts import SCHEDULING_GROUP, ApiFacts, pod_group_api
from kplugin.model.points import GENERIC_WORKLOAD, minor_gates
from kplugin.model.schedconfig import LEASE_NAMESPACE, SchedulerConfig

NAMESPACE = LEASE_NAMESPACE
CONFIG_DIR = "/etc/kubernetes/scheduler"
CONFIG_FILE = "scheduler-config.yaml"
NONROOT_UID = 65532
SECURE_PORT = 10259
# where the API server keeps the extension-apiserver-authentication ConfigMap
AUTHENTICATION_NAMESPACE = "kube-system"
REPLICAS = 1
PULL_POLICY = "IfNotPresent"
RESOURCES: dict[str, Any] = {"requests": {"cpu": "100m", "memory": "128Mi"}}

_READ = ["get", "list", "watch"]

# What kube-scheduler reads and writes, as in the bootstrap policy's
# system:kube-scheduler role of these releases, minus its grant on the default
# scheduler's lease: this scheduler's own lease is granted by a Role in kube-system.
SCHEDULER_RULES: list[dict[str, Any]] = [
    {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": _READ},
    {"apiGroups": [""], "resources": ["pods"], "verbs": [*_READ, "delete"]},
    {"apiGroups": [""], "resources": ["bindings", "pods/binding"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["patch", "update"]},
    {"apiGroups": [""], "resources": ["replicationcontrollers", "services"], "verbs": _READ},
    {"apiGroups": ["apps", "extensions"], "resources": ["replicasets"], "verbs": _READ},
    {"apiGroups": ["apps"], "resources": ["statefulsets"], "verbs": _READ},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": _READ},
    {"apiGroups": [""], "resources": ["persistentvolumeclaims", "persistentvolumes"], "verbs": _READ},
    {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
    {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
    {"apiGroups": ["storage.k8s.io"], "resources": ["csidrivers", "csinodes", "csistoragecapacities"], "verbs": _READ},
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": _READ},
]


# Rules later releases' schedulers need on top, keyed by the first minor that reads them:
# bootstrappolicy/policy.go's system:kube-scheduler rules of that release, for the feature
# gates on by default there (pkg/features/kube_features.go). From 1.32 the scheduler
# watches VolumeAttachments (the CSI volume limits), unconditionally: without the rule its
# informer never syncs and it schedules nothing. DynamicResourceAllocation is GA from
# 1.34; from 1.36 DRAExtendedResource (claims the scheduler creates and deletes) and
# DRAResourceClaimGranularStatusAuthorization (resourceclaims/binding); from 1.37
# DRADeviceTaintRules, whose informer the scheduler waits for: without the rule it
# schedules nothing (kplugin e2e found this, running as the generated ServiceAccount).
EXTRA_RULES: dict[tuple[int, int], list[dict[str, Any]]] = {
    (1, 32): [
        {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattachments"], "verbs": _READ},
    ],
    (1, 34): [
        {"apiGroups": ["resource.k8s.io"], "resources": ["deviceclasses", "resourceslices"], "verbs": _READ},
        {
            "apiGroups": ["resource.k8s.io"],
            "resources": ["resourceclaims", "resourceclaims/status"],
            "verbs": [*_READ, "update", "patch"],
        },
        {"apiGroups": [""], "resources": ["pods/finalizers"], "verbs": ["update"]},
    ],
    (1, 36): [
        {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"], "verbs": ["create", "delete"]},
        {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims/binding"], "verbs": ["update", "patch"]},
        # GenericWorkload's (off by default): the scheduler watches PodGroups and writes
        # their status. Granted to every project from 1.36: a second scheduler in a cluster
        # that turns the gate on runs the in-tree gang plugin too, whatever its own
        # plugins' points, and without the rule its informer never syncs
        {"apiGroups": [SCHEDULING_GROUP], "resources": ["podgroups"], "verbs": _READ},
        {"apiGroups": [SCHEDULING_GROUP], "resources": ["podgroups/status"], "verbs": ["patch", "update"]},
    ],
    (1, 37): [
        {"apiGroups": ["resource.k8s.io"], "resources": ["devicetaintrules"], "verbs": _READ},
    ],
}


def scheduler_rules(major: int, minor: int) -> list[dict[str, Any]]:
    """What kube-scheduler major.minor reads and writes (without any lease), its feature
    gates on as the bootstrap policy grants for them (PodGroups from 1.36)."""
    rules = list(SCHEDULER_RULES)
    for since, extra in sorted(EXTRA_RULES.items()):
        if (major, minor) >= since:
            rules += extra
    return rules


def gate_args(gates: tuple[str, ...], settings: Mapping[str, bool] | None = None) -> list[str]:
    """kube-scheduler's command-line flag that turns the gates on, and sets those of
    ``settings`` as they say (none: no flag), sorted by name."""
    values = {gate: True for gate in gates} | dict(settings or {})
    return [f"--feature-gates={','.join(f'{g}={str(v).lower()}' for g, v in sorted(values.items()))}"] if values else []


_GATE_SETTING = re.compile(r"(?P<name>[A-Z][A-Za-z0-9]{0,99})=(?P<value>(?i:true|false))")


def gate_settings(values: list[str] | None, option: str = Setting.FEATURE_GATES) -> tuple[tuple[str, bool], ...]:
    """NAME=true|false settings of feature gates (comma-separated, or given several
    times), checked in shape: which gates exist is the scheduler binary's to say."""
    found: dict[str, bool] = {}
    for value in values or ():
        for item in value.split(","):
            match = _GATE_SETTING.fullmatch(item.strip())
            if match is None:
                raise UsageError(
                    f"{option} {item.strip()[:80]!r}: give NAME=true or NAME=false, NAME a feature gate "
                    "of kube-scheduler (e.g. SchedulerPreQueueingHints=false)"
                )
            found[match["name"]] = match["value"].lower() == "true"
    return tuple(sorted(found.items()))


def gate_served(gates: tuple[str, ...], facts: ApiFacts) -> list[tuple[str, str]]:
    """(API version, resource) the API server must serve for the gates' objects, which is
    off by default (PodGroups: scheduling.k8s.io/v1alpha2 in 1.36, v1beta1 from 1.37;
    storage_scheduling.go and controlplane/instance.go)."""
    version = pod_group_api(facts)
    return [(version, "podgroups")] if GENERIC_WORKLOAD in gates and version else []


def apiserver_gate_args(gates: tuple[str, ...], facts: ApiFacts) -> list[str]:
    """kube-apiserver's flags for the gates: the gates, and the API versions that serve
    their objects (gate_served)."""
    served = sorted({version for version, _ in gate_served(gates, facts)})
    return gate_args(gates) + [f"--runtime-config={version}=true" for version in served]


@dataclass(frozen=True)
class GateFlags:
    """What a cluster's components need for the gates of a project's plugins."""

    apiserver: tuple[str, ...]
    scheduler: tuple[str, ...]
    served: tuple[tuple[str, str], ...]  # (API version, resource) the API server must serve

    @classmethod
    def of(
        cls,
        gates: tuple[str, ...],
        facts: ApiFacts,
        settings: Mapping[str, bool] | None = None,
    ) -> GateFlags:
        """The flags for ``gates`` as the minor of ``facts`` needs them (minor_gates), the
        scheduler's with ``settings`` last (the user's, which win)."""
        gates = minor_gates(gates, facts.gang_gate)
        scheduler = gate_args(gates, settings)
        return cls(tuple(apiserver_gate_args(gates, facts)), tuple(scheduler), tuple(gate_served(gates, facts)))


def labels(project: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": project, "app.kubernetes.io/component": "scheduler"}


@dataclass(frozen=True)
class Placement:
    """What a project's objects are named and where they go. ``name`` (the project's)
    names the Deployment, its ServiceAccount and roles; the scheduler's lease, and so its
    Role, is in ``lease_namespace``; ``instance`` is a chart release's name."""

    name: str
    namespace: str = NAMESPACE
    lease_namespace: str = NAMESPACE
    instance: str | None = None

    @property
    def labels(self) -> dict[str, str]:
        found = labels(self.name)
        if self.instance is not None:
            found["app.kubernetes.io/instance"] = self.instance
        return found

    def meta(self, name: str, namespace: str | None = None, namespaced: bool = True) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name}
        if namespaced:
            meta["namespace"] = namespace or self.namespace
        meta["labels"] = self.labels
        return meta


def _placement(project: str | Placement) -> Placement:
    return Placement(project) if isinstance(project, str) else project


def rbac(project: str | Placement, scheduler_name: str, rules: Any) -> list[dict[str, Any]]:
    """The ServiceAccount and what it may do; ``rules`` are the ClusterRole's."""
    place = _placement(project)
    project = place.name
    subject = [{"kind": "ServiceAccount", "name": project, "namespace": place.namespace}]
    rbac_api = "rbac.authorization.k8s.io/v1"

    def binding(kind: str, name: str, role_kind: str, role: str, namespace: str | None = None) -> dict[str, Any]:
        return {
            "apiVersion": rbac_api,
            "kind": kind,
            "metadata": place.meta(name, namespace, namespaced=kind == "RoleBinding"),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
            "subjects": subject,
        }

    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": place.meta(project)},
        {
            "apiVersion": rbac_api,
            "kind": "ClusterRole",
            "metadata": place.meta(project, namespaced=False),
            "rules": rules,
        },
        binding("ClusterRoleBinding", project, "ClusterRole", project),
        # PVC/PV binding decisions (VolumeBinding plugin).
        binding("ClusterRoleBinding", f"{project}-volume-scheduler", "ClusterRole", "system:volume-scheduler"),
        {
            "apiVersion": rbac_api,
            "kind": "Role",
            "metadata": place.meta(f"{project}-leader-election", place.lease_namespace),
            "rules": [
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
                {
                    "apiGroups": ["coordination.k8s.io"],
                    "resources": ["leases"],
                    "resourceNames": [scheduler_name],
                    "verbs": ["get", "update"],
                },
            ],
        },
        binding(
            "RoleBinding", f"{project}-leader-election", "Role", f"{project}-leader-election", place.lease_namespace
        ),
        # Delegated authentication of the secure port reads a ConfigMap in kube-system.
        binding(
            "RoleBinding",
            f"{project}-authentication-reader",
            "Role",
            "extension-apiserver-authentication-reader",
            AUTHENTICATION_NAMESPACE,
        ),
    ]


def configmap(project: str | Placement, config: SchedulerConfig | Any) -> dict[str, Any]:
    """The scheduler's configuration file: ``config`` rendered, or what stands for it."""
    place = _placement(project)
    text = yamlio.dump(config.document()) if isinstance(config, SchedulerConfig) else config
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": place.meta(f"{place.name}-config"),
        "data": {CONFIG_FILE: text},
    }


def deployment(
    project: str | Placement,
    image: str,
    *,
    replicas: Any = REPLICAS,
    pull_policy: str = PULL_POLICY,
    resources: Any = None,
    pod_annotations: dict[str, str] | None = None,
    gates: tuple[str, ...] = (),
) -> dict[str, Any]:
    place = _placement(project)
    project = place.name
    pod_metadata: dict[str, Any] = {"labels": place.labels}
    if pod_annotations:
        pod_metadata["annotations"] = pod_annotations
    probe = {
        "httpGet": {"path": "/healthz", "port": SECURE_PORT, "scheme": "HTTPS"},
        "initialDelaySeconds": 15,
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": place.meta(project),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app.kubernetes.io/name": project}},
            "template": {
                "metadata": pod_metadata,
                "spec": {
                    "serviceAccountName": project,
                    "priorityClassName": "system-cluster-critical",
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": NONROOT_UID,
                        "runAsGroup": NONROOT_UID,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [
                        {
                            "name": "scheduler",
                            "image": image,
                            "imagePullPolicy": pull_policy,
                            "args": [f"--config={CONFIG_DIR}/{CONFIG_FILE}", *gate_args(gates), "--v=2"],
                            "livenessProbe": probe,
                            "readinessProbe": {"httpGet": probe["httpGet"]},
                            "resources": copy.deepcopy(RESOURCES) if resources is None else resources,
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "readOnlyRootFilesystem": True,
                                "capabilities": {"drop": ["ALL"]},
                            },
                            "volumeMounts": [
                                {"name": "config", "mountPath": CONFIG_DIR, "readOnly": True},
                                {"name": "tmp", "mountPath": "/tmp"},
                            ],
                        }
                    ],
                    "volumes": [
                        {"name": "config", "configMap": {"name": f"{project}-config"}},
                        {"name": "tmp", "emptyDir": {}},
                    ],
                },
            },
        },
    }


def sample_pod(project: str, scheduler_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{project}-sample", "namespace": "default"},
        "spec": {
            "schedulerName": scheduler_name,
            "terminationGracePeriodSeconds": 0,
            "securityContext": {"runAsNonRoot": True, "runAsUser": NONROOT_UID},
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.9",
                    "resources": {"requests": {"cpu": "100m", "memory": "16Mi"}},
                    "securityContext": {
                        "allowPrivilegeEscalation": False,
                        "capabilities": {"drop": ["ALL"]},
                    },
                }
            ],
        },
    }
