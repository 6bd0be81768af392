"""Creating a scenario's state for a replay, in dependency order: the kinds of custom
objects looked up in the API's discovery (before anything is created), namespaces and
classes (pods' admission reads them), the CustomResourceDefinitions (waited for until
Established), then the other objects, the nodes and the bound pods, all in parallel
(kplugin.kube.bulk), before the scheduler starts; the pending pods once it runs, one at a
time in the order its queue takes them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from kplugin.core.errors import OperationError
from kplugin.core.progress import Observer
from kplugin.e2e.session import CreationTotals, ReplayProfile
from kplugin.kube import bulk, discovery, kinds
from kplugin.kube.apiclient import MERGE_PATCH
from kplugin.kube.cluster import KWOK_ANNOTATIONS, Cluster
from kplugin.scenario import entries
from kplugin.scenario.format import Scenario
from kplugin.scenario.state import KubeObject, Node, Pod


def _object_path(target: Cluster, info: kinds.KindInfo, namespace: str | None) -> str:
    return info.path(target.namespace(namespace) if namespace else None)


def _labelled(meta: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    return {**meta, "labels": {**(meta.get("labels") or {}), **labels}} if labels else meta


def _rewrite_namespaces(spec: dict[str, Any], target: Cluster) -> dict[str, Any]:
    """Pod (anti-)affinity terms name namespaces: on an existing cluster, kplugin's own."""
    affinity = spec.get("affinity")
    if not affinity or target.namespace("default") == "default":
        return spec
    affinity = json.loads(json.dumps(affinity))
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind) or {}
        terms = list(section.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        terms += [
            p.get("podAffinityTerm") or {} for p in section.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        ]
        for term in terms:
            if term.get("namespaces"):
                term["namespaces"] = [target.namespace(n) for n in term["namespaces"]]
    return {**spec, "affinity": affinity}


def pod_manifest(pod: Pod, profile: ReplayProfile, target: Cluster, bound: bool = True) -> dict[str, Any]:
    manifest = pod.manifest(
        profile.scheduler_name, namespace=target.namespace(pod.namespace), labels=target.labels(), bound=bound
    )
    manifest["spec"] = _rewrite_namespaces(manifest["spec"], target)
    return manifest


def node_manifest(node: Node, target: Cluster) -> dict[str, Any]:
    """The node as the scenario has it; on an existing cluster (kplugin's labels) with the
    annotations kwok manages, so that kwok keeps it Ready there."""
    labels = target.labels()
    manifest = node.manifest(labels)
    if labels:
        manifest["metadata"]["annotations"] = {**manifest["metadata"].get("annotations", {}), **KWOK_ANNOTATIONS}
    return manifest


def resolve_kinds(scenario: Scenario, resolver: discovery.Resolver) -> Scenario:
    """``scenario`` with the plural and scope of every custom kind its CRDs do not define
    (those the API server serves already), from discovery; a kind it does not serve is an
    OperationError naming the object."""
    if not any(o.info.custom and not o.info.resolved for o in _objects(scenario)):
        return scenario

    def resolved(obj: KubeObject) -> KubeObject:
        if not obj.info.custom or obj.info.resolved:
            return obj
        info = resolver.find(obj.info, wait=0)
        if info is None:
            raise OperationError(
                f"{obj.origin}: {obj.info.api_version} {obj.info.kind} is not served by {resolver.client.endpoint.name}"
                ": add its CustomResourceDefinition to config/crd/ or to the scenario's objects"
            )
        scoped = obj.scoped(info)
        if scoped is None:
            raise OperationError(
                f"{obj.origin}.metadata.namespace: {info.kind} is cluster-scoped; remove the namespace"
            )
        return scoped

    steps = tuple(replace(s, obj=resolved(s.obj)) if s.obj is not None else s for s in scenario.steps)
    return replace(scenario, objects=tuple(resolved(o) for o in scenario.objects), steps=steps)


def _objects(scenario: Scenario) -> list[KubeObject]:
    return [*scenario.objects, *(s.obj for s in scenario.steps if s.obj is not None)]


def object_body(obj: KubeObject, target: Cluster) -> dict[str, Any]:
    """The object as the API takes it on ``target``: its namespace mapped, the run's
    labels added, a custom kind's status in the body when it has no status subresource."""
    body: dict[str, Any] = dict(obj.body)
    meta = dict(body["metadata"])
    if obj.namespace:
        meta["namespace"] = target.namespace(obj.namespace)
    body["metadata"] = _labelled(meta, target.labels())
    ref = (body.get("spec") or {}).get("claimRef") if obj.info.kind == "PersistentVolume" else None
    if isinstance(ref, dict) and ref.get("namespace"):
        body["spec"] = {**body["spec"], "claimRef": {**ref, "namespace": target.namespace(ref["namespace"])}}
    if obj.status and obj.info.custom and not obj.info.status_subresource:
        body["status"] = obj.status
    return body


def object_path(obj: KubeObject, target: Cluster) -> str:
    return _object_path(target, obj.info, obj.namespace)


def status_request(obj: KubeObject, target: Cluster) -> bulk.Request | None:
    """The request that sets the status an object keeps (through /status), if any."""
    if not obj.status or (obj.info.custom and not obj.info.status_subresource):
        return None
    return bulk.Request(
        "PATCH",
        f"{object_path(obj, target)}/{obj.name}/status",
        {"status": obj.status},
        f"{obj.info.kind.lower()} {obj.name} status",
        MERGE_PATCH,
    )


def create_state(scenario: Scenario, profile: ReplayProfile, target: Cluster, feedback: Observer) -> CreationTotals:
    """Namespaces, classes, RuntimeClasses and CRDs first (pods' admission reads the
    classes; a CRD must be Established before its objects), then the other objects and
    the nodes, then the pods, then the statuses objects keep. ``scenario``'s custom kinds
    are resolved already (resolve_kinds)."""
    client, labels = target.client, target.labels()
    created = CreationTotals()
    exist_ok = frozenset({409}) if labels else frozenset()  # a cluster's own StorageClass, ...

    def phase(what: str, requests: list[bulk.Request] | Iterable[bulk.Request], total: int, ok: frozenset[int]) -> None:
        nonlocal created
        if total:
            created = created.plus(
                bulk.run(client, requests, total=total, what=what, progress=feedback.count, tolerate=ok)
            )

    existing = target.existing_namespaces()
    declared = {ns.name: ns for ns in scenario.namespaces}
    first: list[bulk.Request] = []
    for name in scenario.namespace_names():
        ns_labels = {**(declared[name].labels if name in declared else {}), **labels}
        real = target.namespace(name)
        if name in existing:
            if ns_labels:
                first.append(
                    bulk.Request("PATCH", f"/api/v1/namespaces/{real}", {"metadata": {"labels": ns_labels}},
                                 f"namespace {name}", MERGE_PATCH)
                )  # fmt: skip
            continue
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": real, "labels": ns_labels}}
        first.append(bulk.Request("POST", "/api/v1/namespaces", namespace, f"namespace {name}"))
    for pc in scenario.priority_classes:
        first.append(bulk.Request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", pc.manifest(labels),
                                  f"priorityclass {pc.name}"))  # fmt: skip
    later: list[bulk.Request] = []
    for obj in scenario.objects:
        shown = f"{obj.info.kind.lower()} {obj.namespace + '/' if obj.namespace else ''}{obj.name}"
        request = bulk.Request("POST", object_path(obj, target), object_body(obj, target), shown)
        (first if obj.info.kind == "RuntimeClass" or obj.info is kinds.CRD else later).append(request)
        if obj.info.custom and not obj.info.namespaced:
            target.custom_kinds.add(obj.info)
    phase("namespaces, classes and CRDs", first, len(first), exist_ok)
    defined = [o.name for o in scenario.objects if o.info is kinds.CRD]
    if defined:
        feedback.step(f"{profile.label}: waiting for {len(defined)} CustomResourceDefinition(s) to be Established")
        discovery.wait_established(client, defined)
    phase("objects", later, len(later), exist_ok)
    phase("nodes", (bulk.Request("POST", "/api/v1/nodes", node_manifest(n, target), f"node {n.name}")
                    for n in scenario.nodes), len(scenario.nodes), frozenset())  # fmt: skip

    def pod_request(pod: Pod) -> bulk.Request:
        path = f"/api/v1/namespaces/{target.namespace(pod.namespace)}/pods"
        return bulk.Request("POST", path, pod_manifest(pod, profile, target), f"pod {pod.key}")

    bound = [p for p in scenario.pods if p.node_name]
    phase("bound pods", (pod_request(p) for p in bound), len(bound), frozenset())
    statuses = [r for r in (status_request(o, target) for o in scenario.objects) if r is not None]
    phase("statuses", statuses, len(statuses), frozenset())
    return created


def queue_order(scenario: Scenario, pods: Iterable[Pod]) -> list[Pod]:
    """Pods in the order the scheduler's queue takes them: higher priority first (the
    PriorityClass's value; the global default's without one), then namespace and name."""
    values = {c.name: c.value for c in scenario.priority_classes}
    values.update(entries.BUILTIN_PRIORITY_CLASS_VALUES)
    default = next((c.value for c in scenario.priority_classes if c.global_default), 0)

    def key(pod: Pod) -> tuple[int, str, str]:
        value = values.get(pod.priority_class, default) if pod.priority_class else default
        return (-value, pod.namespace, pod.name)

    return sorted(pods, key=key)


def create_pending(profile: ReplayProfile, target: Cluster, feedback: Observer, pods: list[Pod]) -> bulk.Result:
    """Pending pods one at a time in queue order, to a scheduler that is running: each
    arrives as an event of its own, in that order, whether the scheduler keeps up or a
    backlog builds (a scheduler's first list of pods comes in no fixed order), so a
    replay comes out the same every time."""
    requests = (
        bulk.Request(
            "POST",
            f"/api/v1/namespaces/{target.namespace(p.namespace)}/pods",
            pod_manifest(p, profile, target),
            f"pod {p.key}",
        )
        for p in pods
    )
    what = f"{profile.label}: pending pods"
    return bulk.run(target.client, requests, total=len(pods), what=what, progress=feedback.count, workers=1)
