"""``kplugin snapshot --anonymize``: one rule per field of every kind a snapshot reads
(applied by kplugin.snapshot.anonymizer).

``TABLE`` says, for each field of each scenario entry (nodes, pods, namespaces and
priority classes in the scenario's own shape, the other kinds as Kubernetes objects),
what becomes of it: kept, hashed through the one keyed hash, renamed by its position, or
dropped. A field the table does not name is dropped, so a field a new Kubernetes adds
leaves nothing behind until someone decides its rule here.

Every name and value goes through the same HMAC-SHA256 (key: ``salt``), so every
reference still matches: a pod's node and class names and the objects they name, PV and
PVC names, selectors and the labels they select, node selectors, topologies and the
node labels they match, DRA pools, devices, request names and the string literals of
CEL selectors and the attribute values they compare with. Label, annotation, taint and
attribute keys are kept; so are driver and provisioner names and extended resource
names unless ``drivers`` is set (then they are hashed too, as valid names of their kind).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias, Union


class Act(StrEnum):
    """What becomes of one field."""

    KEEP = "kept"  # numbers, quantities, modes, keys: nothing that names the cluster
    HASH = "hashed"  # one keyed hash: the same name gives the same result everywhere
    NAMESPACE = "hashed (Kubernetes' own namespaces kept)"
    PRIORITY_CLASS = "hashed (the built-in system-* classes kept)"
    CLAIM = "hashed (an ephemeral volume's claim: <hashed pod>-<hashed volume>)"
    REQUEST = "hashed, each part of <request>/<subrequest>"
    PATH = "hashed into an absolute path"
    LABELS = "keys kept, values hashed (the values of the keys to keep kept)"
    VALUE = "hashed as a value of the sibling key (as labels)"
    VALUES = "each hashed as a value of the sibling key (as labels)"
    RESOURCES = "values kept; extended resource names kept, hashed when drivers are hashed too"
    RESOURCE_NAME = "kept, hashed when drivers are hashed too (an extended resource name)"
    DRIVER = "kept, hashed when drivers are hashed too (a driver or provisioner name)"
    ATTRIBUTE_NAME = "kept, its domain hashed when drivers are hashed too"
    ATTRIBUTES = "names as ATTRIBUTE_NAME; string values hashed; numbers, booleans, versions, quantities kept"
    CEL = "string literals hashed as the values they compare with"
    DROP = "dropped"


@dataclass(frozen=True)
class Position:
    """A name replaced by ``prefix`` and its position in the list (c0, c1, ...)."""

    prefix: str


# a rule: an action, a position, the rules of a mapping's fields, or [rule of each item]
Rule: TypeAlias = Union[Act, Position, dict[str, "Rule"], list["Rule"]]  # noqa: UP007 (a forward reference)
Fields: TypeAlias = dict[str, Rule]

K, H = Act.KEEP, Act.HASH
SELECTOR: Rule = {"matchLabels": Act.LABELS, "matchExpressions": [{"key": K, "operator": K, "values": Act.VALUES}]}
NODE_SELECTOR_TERM: Rule = {
    "matchExpressions": [{"key": K, "operator": K, "values": Act.VALUES}],
    "matchFields": [{"key": K, "operator": K, "values": [H]}],  # metadata.name: a node's name
}
NODE_SELECTOR: Rule = {"nodeSelectorTerms": [NODE_SELECTOR_TERM]}
TOLERATION: Rule = {"key": K, "operator": K, "value": Act.VALUE, "effect": K, "tolerationSeconds": K}
TAINT: Rule = {"key": K, "value": Act.VALUE, "effect": K}
POD_TERM: Rule = {
    "labelSelector": SELECTOR,
    "namespaceSelector": SELECTOR,
    "namespaces": [Act.NAMESPACE],
    "topologyKey": K,
    "matchLabelKeys": K,
    "mismatchLabelKeys": K,
}
POD_AFFINITY: Rule = {
    "requiredDuringSchedulingIgnoredDuringExecution": [POD_TERM],
    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": K, "podAffinityTerm": POD_TERM}],
}
AFFINITY: Rule = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": NODE_SELECTOR,
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": K, "preference": NODE_SELECTOR_TERM}],
    },
    "podAffinity": POD_AFFINITY,
    "podAntiAffinity": POD_AFFINITY,
}
CONTAINER_RESOURCES: Rule = {
    "requests": Act.RESOURCES,
    "limits": Act.RESOURCES,
    "claims": [{"name": H, "request": Act.REQUEST}],
}
PORTS: Rule = [{"containerPort": K, "hostPort": K, "protocol": K}]  # hostIP (an address) dropped
META: Fields = {"name": H, "labels": Act.LABELS, "annotations": Act.LABELS}
NAMESPACED_META: Fields = {**META, "namespace": Act.NAMESPACE}
CEL_SELECTORS: Rule = [{"cel": {"expression": Act.CEL}}]
DEVICE_REQUEST: Fields = {
    "deviceClassName": H,
    "selectors": CEL_SELECTORS,
    "allocationMode": K,
    "count": K,
    "adminAccess": K,
    "tolerations": [TOLERATION],
    "capacity": {"requests": Act.ATTRIBUTES},
}
DEVICE: Rule = {
    "name": H,
    "attributes": Act.ATTRIBUTES,
    "capacity": Act.ATTRIBUTES,
    "consumesCounters": [{"counterSet": H, "counters": K}],
    "nodeName": H,
    "nodeSelector": NODE_SELECTOR,
    "allNodes": K,
    "taints": [TAINT],
    "bindsToNode": K,
    "bindingConditions": K,
    "bindingFailureConditions": K,
    "allowMultipleAllocations": K,
}
# the workload-aware scheduling API (kinds.GATED), the fields of 1.36's v1alpha2 and of v1beta1
POD_GROUP_POLICY: Fields = {
    "schedulingPolicy": {"basic": K, "gang": {"minCount": K}},
    "schedulingConstraints": {"topology": [{"key": K}]},  # node label keys
    "resourceClaims": [{"name": H, "resourceClaimName": H, "resourceClaimTemplateName": H}],
    "disruptionMode": K,
    "priorityClassName": Act.PRIORITY_CLASS,
    "priority": K,
    "preemptionPolicy": K,
}
POD_GROUP_TEMPLATE: Rule = {"name": H, **POD_GROUP_POLICY}
WORKLOAD_TEMPLATE_DEPTH = 4  # composite templates nest at most this deep (WorkloadMaxTemplateDepth)


def _composite_template(depth: int) -> Rule:
    """A Workload's composite pod-group template, with those nested in it (finite: the
    table is walked whole by its tests)."""
    rule: Fields = {
        "name": H,
        **POD_GROUP_POLICY,
        "schedulingPolicy": {"basic": K, "gang": {"minGroupCount": K}},
        "podGroupTemplates": [POD_GROUP_TEMPLATE],
    }
    del rule["resourceClaims"]  # a composite template has none
    if depth > 1:
        rule["compositePodGroupTemplates"] = [_composite_template(depth - 1)]
    return rule


TABLE: dict[str, Fields] = {
    # the scenario's own entries (kplugin.scenario.entries)
    "Namespace": {"name": Act.NAMESPACE, "labels": Act.LABELS},
    "PriorityClass": {"name": H, "value": K, "globalDefault": K, "preemptionPolicy": K},
    "Node": {
        "name": H,
        "labels": Act.LABELS,
        "annotations": Act.LABELS,
        "capacity": Act.RESOURCES,
        "allocatable": Act.RESOURCES,
        "taints": [TAINT],
        "unschedulable": K,
    },
    "Pod": {
        "name": H,
        "namespace": Act.NAMESPACE,
        "labels": Act.LABELS,
        "annotations": Act.LABELS,
        "nodeSelector": Act.LABELS,
        "nodeName": H,
        "priorityClassName": Act.PRIORITY_CLASS,
        "tolerations": [TOLERATION],
        "affinity": AFFINITY,
        "topologySpreadConstraints": [
            {
                "maxSkew": K,
                "topologyKey": K,
                "whenUnsatisfiable": K,
                "labelSelector": SELECTOR,
                "minDomains": K,
                "nodeAffinityPolicy": K,
                "nodeTaintsPolicy": K,
                "matchLabelKeys": K,
            }
        ],
        "overhead": Act.RESOURCES,
        "runtimeClassName": H,
        "schedulingGates": [{"name": H}],
        "schedulingGroup": {"podGroupName": H},
        "resourceClaims": [{"name": H, "resourceClaimName": H, "resourceClaimTemplateName": H}],
        "hostNetwork": K,
        "containers": [{"name": Position("c"), "resources": CONTAINER_RESOURCES, "ports": PORTS}],
        "initContainers": [
            {"name": Position("init"), "resources": CONTAINER_RESOURCES, "ports": PORTS, "restartPolicy": K}
        ],
        "volumes": [{"name": H, "persistentVolumeClaim": {"claimName": Act.CLAIM}}],
    },
    # the other kinds, as Kubernetes objects (kplugin.kube.kinds)
    "RuntimeClass": {
        "metadata": META,
        "handler": H,
        "overhead": {"podFixed": Act.RESOURCES},
        "scheduling": {"nodeSelector": Act.LABELS, "tolerations": [TOLERATION]},
    },
    "StorageClass": {
        "metadata": META,
        "provisioner": Act.DRIVER,
        "parameters": Act.DROP,
        "reclaimPolicy": K,
        "volumeBindingMode": K,
        "allowedTopologies": [{"matchLabelExpressions": [{"key": K, "values": Act.VALUES}]}],
        "mountOptions": Act.DROP,
        "allowVolumeExpansion": K,
    },
    "CSIDriver": {
        "metadata": {**META, "name": Act.DRIVER},
        "spec": {
            "attachRequired": K,
            "podInfoOnMount": K,
            "volumeLifecycleModes": K,
            "storageCapacity": K,
            "fsGroupPolicy": K,
            "requiresRepublish": K,
            "seLinuxMount": K,
            "nodeAllocatableUpdatePeriodSeconds": K,
            "tokenRequests": Act.DROP,
        },
    },
    "CSINode": {  # named after its node
        "metadata": META,
        "spec": {"drivers": [{"name": Act.DRIVER, "nodeID": H, "topologyKeys": K, "allocatable": {"count": K}}]},
    },
    "DeviceClass": {
        "metadata": META,
        "spec": {"selectors": CEL_SELECTORS, "extendedResourceName": Act.RESOURCE_NAME, "config": Act.DROP},
    },
    "PersistentVolume": {
        "metadata": META,
        "spec": {
            "capacity": Act.RESOURCES,
            "accessModes": K,
            "claimRef": {"namespace": Act.NAMESPACE, "name": Act.CLAIM},
            "persistentVolumeReclaimPolicy": K,
            "storageClassName": H,
            "volumeMode": K,
            "volumeAttributesClassName": H,
            "nodeAffinity": {"required": NODE_SELECTOR},
            "csi": {"driver": Act.DRIVER, "volumeHandle": H, "readOnly": K, "fsType": K},  # attributes, secrets out
            "nfs": {"server": H, "path": Act.PATH, "readOnly": K},
            "hostPath": {"path": Act.PATH, "type": K},
            "local": {"path": Act.PATH, "fsType": K},
            "mountOptions": Act.DROP,
        },
    },
    "ResourceSlice": {
        "metadata": META,
        "spec": {
            "driver": Act.DRIVER,
            "pool": {"name": H, "generation": K, "resourceSliceCount": K},
            "nodeName": H,
            "nodeSelector": NODE_SELECTOR,
            "allNodes": K,
            "perDeviceNodeSelection": K,
            "devices": [DEVICE],
            "sharedCounters": [{"name": H, "counters": K}],
        },
    },
    "PersistentVolumeClaim": {
        "metadata": {**NAMESPACED_META, "name": Act.CLAIM},
        "spec": {
            "accessModes": K,
            "selector": SELECTOR,
            "resources": {"requests": Act.RESOURCES, "limits": Act.RESOURCES},
            "volumeName": H,
            "storageClassName": H,
            "volumeMode": K,
            "volumeAttributesClassName": H,
            "dataSource": Act.DROP,
            "dataSourceRef": Act.DROP,
        },
    },
    "CSIStorageCapacity": {
        "metadata": NAMESPACED_META,
        "storageClassName": H,
        "capacity": K,
        "maximumVolumeSize": K,
        "nodeTopology": SELECTOR,
    },
    "ResourceClaim": {
        "metadata": NAMESPACED_META,
        "spec": {
            "devices": {
                "requests": [{"name": H, "exactly": DEVICE_REQUEST, "firstAvailable": [{**DEVICE_REQUEST, "name": H}]}],
                "constraints": [{"requests": [Act.REQUEST], "matchAttribute": Act.ATTRIBUTE_NAME}],
                "config": Act.DROP,  # opaque driver parameters
            }
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": Act.REQUEST,
                            "driver": Act.DRIVER,
                            "pool": H,
                            "device": H,
                            "adminAccess": K,
                            "tolerations": [TOLERATION],
                            "bindingConditions": K,
                            "bindingFailureConditions": K,
                            "shareID": K,
                            "consumedCapacity": Act.ATTRIBUTES,
                        }
                    ],
                    "config": Act.DROP,
                },
                "nodeSelector": NODE_SELECTOR,  # the node it was allocated on: its hashed name
                "allocationTimestamp": K,
            }
        },
    },
    "Workload": {
        "metadata": NAMESPACED_META,
        "spec": {
            "controllerRef": {"apiGroup": K, "kind": K, "name": H},
            "podGroupTemplates": [POD_GROUP_TEMPLATE],
            "compositePodGroupTemplates": [_composite_template(WORKLOAD_TEMPLATE_DEPTH)],
        },
    },
    "PodGroup": {  # its name is what its pods' schedulingGroup.podGroupName says
        "metadata": NAMESPACED_META,
        "spec": {
            **POD_GROUP_POLICY,
            "workloadRef": {"workloadName": H, "templateName": H},  # v1beta1
            "podGroupTemplateRef": {"workload": {"workloadName": H, "podGroupTemplateName": H}},  # v1alpha2
            "parentCompositePodGroupName": H,
        },
    },
    "PodDisruptionBudget": {
        "metadata": NAMESPACED_META,
        "spec": {"minAvailable": K, "maxUnavailable": K, "selector": SELECTOR, "unhealthyPodEvictionPolicy": K},
        "status": {"disruptionsAllowed": K, "currentHealthy": K, "desiredHealthy": K, "expectedPods": K},
    },
}
for _kind, _rule in TABLE.items():
    if "metadata" in _rule:
        TABLE[_kind] = {"apiVersion": K, "kind": K, **_rule}
