"""A small cluster whose objects refer to each other in every way the scheduler reads:
a RuntimeClass's node selector and tolerations and the node labels and taints they
match, a claim's label selector and the PersistentVolume it selects, a StorageClass's
allowed topologies and a CSIStorageCapacity's node topology against node labels, an
ephemeral volume's claim named after its pod, the DRA objects (a DeviceClass whose CEL
names an attribute value, a node's ResourceSlice, a claim with a request, a constraint
and an allocation on the node), and (pod_groups) a Workload, its PodGroup and their
pods. Infrastructure values (an NFS server, paths, a volume handle, a CSI node id,
storage parameters, a data source, opaque driver parameters) are there to be hidden.
Served by the stand-in API server (tests/unit/snapshot/test_anonymize) and created in a real
one (test_integration_snapshot)."""

from __future__ import annotations

from typing import Any

DRIVER = "gpu.example.com"
CSI = "csi.example.com"
GPU = "example.com/gpu"
TOPOLOGY = "topology.csi.example.com/zone"
SECRETS = ("nfs.corp.example", "/exports/team", "/mnt/disks/ssd0", "vol-0abc", "i-0node", "s3cr3t", "snap-1")


def node(name: str, zone: str, gpus: str, **spec: Any) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, "zone": zone, TOPOLOGY: zone, "example.com/accelerator": "true"}
    capacity = {"cpu": "4", "memory": "8Gi", "pods": "110", GPU: gpus}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "labels": {"app": name}},
        "spec": {
            "schedulerName": "someone-else",  # nothing schedules them in the source cluster
            "containers": [{"name": "app", "image": "example.com/app:1", "resources": {"requests": {"cpu": "1"}}}],
            **spec,
        },
    }


TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}
LOCAL_AFFINITY = {
    "required": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n-a"]}]}
        ]
    }
}


def objects(dra: bool = True, allocated: bool = False) -> list[dict[str, Any]]:
    """The cluster's objects as the API has them (``allocated``: the claim's allocation
    in its status, as a cluster whose scheduler placed the pod would have it)."""
    found: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"team": "shop"}}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "gold"}, "value": 100},
        node("n-a", "a", "1", taints=[{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]),
        node("n-b", "b", "4"),
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": "sandboxed"},
            "handler": "runsc",
            "scheduling": {"nodeSelector": {"zone": "a"}, "tolerations": [TOLERATION]},
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "local"},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "zonal"},
            "provisioner": CSI,
            "volumeBindingMode": "WaitForFirstConsumer",
            "parameters": {"type": "s3cr3t"},
            "mountOptions": ["nfsvers=s3cr3t"],
            "allowedTopologies": [{"matchLabelExpressions": [{"key": TOPOLOGY, "values": ["b"]}]}],
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {"name": CSI},
            "spec": {"storageCapacity": True},
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": "n-b"},
            "spec": {"drivers": [{"name": CSI, "nodeID": "i-0node", "topologyKeys": [TOPOLOGY]}]},
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIStorageCapacity",
            "metadata": {"name": "zonal-b", "namespace": "shop"},
            "storageClassName": "zonal",
            "capacity": "100Gi",
            "nodeTopology": {"matchLabels": {TOPOLOGY: "b"}},
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "pv-gold", "labels": {"tier": "gold"}},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "local",
                "local": {"path": "/mnt/disks/ssd0"},
                "claimRef": {"namespace": "shop", "name": "gold-data"},
                "nodeAffinity": LOCAL_AFFINITY,
            },
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "pv-nfs", "labels": {"tier": "silver"}},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteMany"],
                "storageClassName": "shared",
                "nfs": {"server": "nfs.corp.example", "path": "/exports/team"},
                "mountOptions": ["hard"],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": "gold-data",
                "namespace": "shop",
                "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
            },
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "local",
                "selector": {"matchLabels": {"tier": "gold"}},
                "volumeName": "pv-gold",
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "scratch-job-scratch", "namespace": "shop"},  # the ephemeral volume's claim
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "zonal",
                "resources": {"requests": {"storage": "1Gi"}},
                "dataSource": {"kind": "VolumeSnapshot", "name": "snap-1", "apiGroup": "snapshot.storage.k8s.io"},
            },
        },
        pod("sandboxed", runtimeClassName="sandboxed", nodeSelector={"zone": "a"}, tolerations=[TOLERATION]),
        pod(
            "uses-gold",
            priorityClassName="gold",
            tolerations=[TOLERATION],
            volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "gold-data"}}],
        ),
        pod(
            "scratch-job",
            schedulingGates=[{"name": "example.com/quota"}],
            volumes=[
                {
                    "name": "scratch",
                    "ephemeral": {
                        "volumeClaimTemplate": {
                            "spec": {
                                "storageClassName": "zonal",
                                "accessModes": ["ReadWriteOnce"],
                                "resources": {"requests": {"storage": "1Gi"}},
                            }
                        }
                    },
                }
            ],
        ),
    ]
    if not dra:
        return found
    cel = f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].model == "a100-s3cr3t"'
    claim: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "train-gpu", "namespace": "shop"},
        "spec": {
            "devices": {
                "requests": [{"name": "one", "exactly": {"deviceClassName": "gpus"}}],
                "constraints": [{"requests": ["one"], "matchAttribute": f"{DRIVER}/model"}],
                "config": [{"requests": ["one"], "opaque": {"driver": DRIVER, "parameters": {"key": "s3cr3t"}}}],
            }
        },
    }
    if allocated:
        results = [{"request": "one", "driver": DRIVER, "pool": "n-a-pool", "device": "gpu-0"}]
        by_name = [{"key": "metadata.name", "operator": "In", "values": ["n-a"]}]
        claim["status"] = {
            "allocation": {
                "devices": {"results": results},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": by_name}]},
            }
        }
    return [
        *found,
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpus"},
            "spec": {
                "selectors": [{"cel": {"expression": cel}}],
                "config": [{"opaque": {"driver": DRIVER, "parameters": {"token": "s3cr3t"}}}],
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "n-a-gpu"},
            "spec": {
                "driver": DRIVER,
                "nodeName": "n-a",
                "pool": {"name": "n-a-pool", "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": "gpu-0",
                        "attributes": {"model": {"string": "a100-s3cr3t"}, "index": {"int": 0}},
                        "capacity": {"memory": {"value": "40Gi"}},
                    }
                ],
            },
        },
        claim,
        pod(
            "train",
            tolerations=[TOLERATION],
            resourceClaims=[{"name": "gpu", "resourceClaimName": "train-gpu"}],
            containers=[
                {
                    "name": "app",
                    "image": "example.com/app:1",
                    "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpu", "request": "one"}]},
                }
            ],
        ),
    ]


def pod_groups() -> list[dict[str, Any]]:
    """The workload-aware scheduling API (scheduling.k8s.io/v1beta1, 1.37): a Workload with
    a gang template, the PodGroup made from it (its workloadRef names both), and the
    group's two pods (their schedulingGroup names the PodGroup); served only where
    kube-apiserver runs with GenericWorkload and the API's runtime-config."""
    api = "scheduling.k8s.io/v1beta1"
    gang = {"gang": {"minCount": 2}}
    template = {"name": "workers", "schedulingPolicy": gang, "priorityClassName": "gold"}
    return [
        {
            "apiVersion": api,
            "kind": "Workload",
            "metadata": {"name": "trainer", "namespace": "shop", "labels": {"app": "trainer"}},
            "spec": {"podGroupTemplates": [template]},
        },
        {
            "apiVersion": api,
            "kind": "PodGroup",
            "metadata": {"name": "trainer-workers", "namespace": "shop"},
            "spec": {
                "workloadRef": {"workloadName": "trainer", "templateName": "workers"},
                "schedulingPolicy": gang,
                "priorityClassName": "gold",
            },
        },
        # a group's pods have its priority (the scheduler refuses them otherwise)
        *(
            pod(f"worker-{i}", schedulingGroup={"podGroupName": "trainer-workers"}, priorityClassName="gold")
            for i in range(2)
        ),
    ]
