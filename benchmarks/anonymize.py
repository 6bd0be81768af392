"""What ``kplugin snapshot --anonymize`` costs against a plain snapshot (issue 26): the
output's size and the time to take it, on the committed kubectl List
(tests/data/kubectl-list.yaml) and on a generated cluster of 5,000 nodes, their pods,
volumes, storage and DRA objects. Two ways, each mode ``--repeat`` times, the fastest
kept: ``served``, the objects served as JSON pages of 500 by the stand-in API server of
the unit tests (tests/support/fakeapi) and read by kplugin's own client, as a snapshot
of a cluster reads them (without the network); and ``direct``, the objects handed to
kplugin.snapshot.job.take from memory: kplugin's own work alone, the worst case for the
ratio. With ``--apiserver`` (or a kube-apiserver kplugin built into its cache, as
``kplugin e2e`` does), a third way, ``cluster``: the generated objects created in a real
kube-apiserver with etcd (kplugin's local control plane) and snapshotted from it, as
``kplugin snapshot`` does: what a user waits for.

The stand-in server runs in a child process, and the generated objects are frozen out of
the garbage collector's view (``gc.freeze``): a real snapshot holds one page of the
cluster at a time, not the whole cluster, and a collector walking the benchmark's own
fixture on every collection would charge kplugin for memory it never holds.

    python benchmarks/anonymize.py                        # 5,000 nodes, 50,000 pods
    python benchmarks/anonymize.py --nodes 500 --pods 5000 --repeat 3   # a quick look
    python benchmarks/anonymize.py --apiserver ~/.cache/kplugin/bin/kube-apiserver-v1.37.2

Prints the sizes, the times and the ratios anonymized / plain (the goal: within 1.2x).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

sys.path.insert(0, str(REPO / "tests"))

from support.fakeapi import JsonHandler, serving  # noqa: E402

from kplugin.core import cache, yamlio  # noqa: E402
from kplugin.kube import apiclient, bulk, controlplane, kinds  # noqa: E402
from kplugin.snapshot import job as snapshot  # noqa: E402

LIST = REPO / "tests" / "data" / "kubectl-list.yaml"
SERVED = ["policy/v1", "scheduling.k8s.io/v1", "storage.k8s.io/v1", "node.k8s.io/v1", "resource.k8s.io/v1"]


class Stub:
    """What snapshot.take asks of an API client, answered from memory."""

    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.lists: dict[str, list[dict[str, Any]]] = {}
        for obj in objects:
            self.lists.setdefault(kinds.ALL[obj["kind"]].path(), []).append(obj)

    def get(self, path: str) -> Any:
        if path == "/version":
            return {"gitVersion": "v1.37.2"}
        if path == "/apis":
            return {"groups": [{"versions": [{"groupVersion": v}]} for v in SERVED]}
        return {"metadata": {"name": "kube-system", "uid": "bench-uid"}}

    def list_pages(self, path: str) -> Iterator[dict[str, Any]]:
        yield from self.lists.get(path, [])


def generated(nodes: int, pods: int) -> list[dict[str, Any]]:
    """A cluster of ``nodes`` nodes (a GPU node in four, tainted, with a ResourceSlice),
    ``pods`` pods bound to them, a local PersistentVolume and its claim per 10 nodes."""
    zones = ["eu-1a", "eu-1b", "eu-1c"]
    found: list[dict[str, Any]] = [
        {"kind": "Namespace", "metadata": {"name": f"team-{t}", "labels": {"team": f"t{t}"}}} for t in range(10)
    ]
    found.append({"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000})
    found.append({"kind": "StorageClass", "metadata": {"name": "local"}, "provisioner": "kubernetes.io/no-provisioner"})
    cel = 'device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "a100"'
    found.append(
        {"kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": cel}}]}}
    )
    for i in range(nodes):
        name = f"node-{i:05d}"
        labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zones[i % 3], "pool": f"p{i % 7}"}
        capacity = {"cpu": "32", "memory": "128Gi", "pods": "110"}
        spec: dict[str, Any] = {}
        if i % 4 == 0:
            capacity["example.com/gpu"] = "8"
            spec["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
            devices = [{"name": f"gpu-{d}", "attributes": {"model": {"string": "a100"}}} for d in range(8)]
            found.append(
                {
                    "kind": "ResourceSlice",
                    "metadata": {"name": f"{name}-gpu"},
                    "spec": {
                        "driver": "gpu.example.com",
                        "nodeName": name,
                        "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                        "devices": devices,
                    },
                }
            )
        status = {"capacity": capacity, "allocatable": capacity, "conditions": [{"type": "Ready", "status": "True"}]}
        found.append(
            {
                "kind": "Node",
                "metadata": {"name": name, "uid": f"uid-{i}", "labels": labels, "annotations": {"a": "b"}},
                "spec": spec,
                "status": status,
            }
        )
        if i % 10 == 0:
            affinity = {"key": "kubernetes.io/hostname", "operator": "In", "values": [name]}
            found.append(
                {
                    "kind": "PersistentVolume",
                    "metadata": {"name": f"pv-{i}", "labels": {"tier": "ssd"}},
                    "spec": {
                        "capacity": {"storage": "100Gi"},
                        "accessModes": ["ReadWriteOnce"],
                        "local": {"path": f"/mnt/disks/{i}"},
                        "storageClassName": "local",
                        "claimRef": {"namespace": "team-0", "name": f"data-{i}"},
                        "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [affinity]}]}},
                    },
                }
            )
            found.append(
                {
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": f"data-{i}", "namespace": "team-0"},
                    "spec": {
                        "storageClassName": "local",
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "100Gi"}},
                        "volumeName": f"pv-{i}",
                        "selector": {"matchLabels": {"tier": "ssd"}},
                    },
                }
            )
    for i in range(pods):
        requests = {"cpu": "500m", "memory": "1Gi"}
        spec = {
            "nodeName": f"node-{i % nodes:05d}",
            "containers": [{"name": "app", "image": "example.com/app:1", "resources": {"requests": requests}}],
            "affinity": {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 10,
                            "podAffinityTerm": {
                                "labelSelector": {"matchLabels": {"app": f"app-{i % 200}"}},
                                "topologyKey": "kubernetes.io/hostname",
                            },
                        }
                    ]
                }
            },
        }
        meta = {"name": f"pod-{i:06d}", "namespace": f"team-{i % 10}", "labels": {"app": f"app-{i % 200}"}}
        found.append({"kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Running"}})
    return found


def served(stub: Stub) -> type[JsonHandler]:
    """A handler answering ``stub``'s lists as the API server does, in pages."""
    import json
    import urllib.parse

    class Handler(JsonHandler):
        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query)
            if url.path not in stub.lists:
                return self.answer(200, stub.get(url.path) if not url.query else {"metadata": {}, "items": []})
            items = stub.lists[url.path]
            limit, start = int(query.get("limit", ["500"])[0]), int(query.get("continue", ["0"])[0])
            more = str(start + limit) if start + limit < len(items) else ""
            body = json.dumps({"metadata": {"continue": more}, "items": items[start : start + limit]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextlib.contextmanager
def served_elsewhere(stub: Stub) -> Iterator[str]:
    """``stub`` served as the API server does, from a child process (forked: it has the
    objects already); its URL while it runs."""
    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe()

    def serve() -> None:
        with serving(served(stub)) as url:
            child.send(url)
            child.recv()  # until the parent is done

    process = context.Process(target=serve, daemon=True)
    process.start()
    try:
        yield parent.recv()
    finally:
        parent.send("done")
        process.join(10)


def measure(objects: list[dict[str, Any]], anonymize: bool, endpoint: apiclient.Endpoint | None) -> tuple[int, float]:
    """(bytes written, seconds) of one snapshot, through the API server at ``endpoint``
    or from memory."""
    chunks: list[bytes] = []
    client: Any = Stub(objects) if endpoint is None else apiclient.Client(endpoint)
    request = snapshot.Request(anonymize=anonymize, salt="bench-key")
    started = time.perf_counter()
    snapshot.take(client, request, chunks.append, lambda *_: None)
    seconds = time.perf_counter() - started
    if endpoint is not None:
        client.close()
    return sum(len(c) for c in chunks), seconds


def compare(way: str, objects: list[dict[str, Any]], repeat: int, endpoint: apiclient.Endpoint | None) -> None:
    """Plain and anonymized in turn, ``repeat`` times each (so that a busy moment of the
    machine falls on both alike); the fastest of each kept."""
    best = {False: (0, float("inf")), True: (0, float("inf"))}
    for _ in range(repeat):
        for anonymize in (False, True):
            size, seconds = measure(objects, anonymize, endpoint)
            best[anonymize] = (size, min(seconds, best[anonymize][1]))
    (plain_size, plain_time), (masked_size, masked_time) = best[False], best[True]
    print(
        f"  {way}: plain {plain_size:,} bytes in {plain_time:.3f}s; anonymized {masked_size:,} bytes in "
        f"{masked_time:.3f}s; ratio: size {masked_size / plain_size:.2f}x, time {masked_time / plain_time:.2f}x"
    )


def report(title: str, objects: list[dict[str, Any]], repeat: int, apiserver: Path | None) -> None:
    print(f"{title}: {len(objects):,} objects")
    gc.collect()
    gc.freeze()  # the fixture is not kplugin's memory (see the module docstring)
    with served_elsewhere(Stub(objects)) as url:
        compare("served", objects, repeat, apiclient.Endpoint(url, token="t"))
    compare("direct", objects, repeat, None)
    if apiserver is not None:
        work = tempfile.TemporaryDirectory(prefix="kplugin-bench-anonymize-")
        privileged = ["--allow-privileged=true"]  # a kubectl List's kube-proxy pods are
        with work, controlplane.ControlPlane(Path(work.name), apiserver, lambda _: None, privileged) as plane:
            created = populate(plane.client(), objects)
            print(f"  cluster: {created:,} objects created in kube-apiserver {apiserver.name}")
            endpoint = apiclient.Endpoint(plane.url, token=plane.token, ca_file=str(plane.cafile))
            compare("cluster", objects, repeat, endpoint)


def creatable(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``objects`` as they can be created (a kubectl List has uids and resource versions),
    with a Namespace for each namespace they name."""
    import copy

    found = []
    for obj in copy.deepcopy(objects):
        meta = obj["metadata"]
        for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"):
            meta.pop(key, None)
        found.append(obj)
    named = {o["metadata"]["name"] for o in found if o["kind"] == "Namespace"} | {"default", "kube-system"}
    wanted = sorted({o["metadata"]["namespace"] for o in found if o["metadata"].get("namespace")} - named)
    return [{"kind": "Namespace", "metadata": {"name": n}} for n in wanted] + found


def populate(client: apiclient.Client, objects: list[dict[str, Any]]) -> int:
    """``objects`` created, what others refer to first (namespaces, nodes, classes)."""
    done = 0
    objects = creatable(objects)
    try:
        ordered = sorted(objects, key=lambda o: (o["kind"] != "Namespace", kinds.ALL[o["kind"]].namespaced))
        for first in (True, False):  # cluster-scoped objects, then namespaced ones
            batch = [o for o in ordered if (not kinds.ALL[o["kind"]].namespaced) == first]
            path_of = lambda o: kinds.ALL[o["kind"]].path(o["metadata"].get("namespace"))  # noqa: E731
            created = bulk.run(client, bulk.create(path_of, batch), total=len(batch), tolerate=frozenset({409}))
            done += created.done  # 409: one of the cluster's own (system-node-critical)
    finally:
        client.close()
    return done


def newest_apiserver() -> Path | None:
    """The newest kube-apiserver kplugin built into its cache (``kplugin e2e`` builds one)."""
    home = cache.directory("bin")
    found = sorted(home.glob("kube-apiserver-v*"), key=lambda p: kinds_version(p.name)) if home else []
    return found[-1] if found else None


def kinds_version(name: str) -> tuple[int, ...]:
    return tuple(int(n) for n in name.rsplit("-v", 1)[1].split("-")[0].split(".") if n.isdigit())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--apiserver", type=Path, help="a kube-apiserver (default: the newest in kplugin's cache)")
    parser.add_argument("--no-cluster", action="store_true", help="skip the real kube-apiserver")
    options = parser.parse_args()
    apiserver = None if options.no_cluster else options.apiserver or newest_apiserver()
    if apiserver is None and not options.no_cluster:
        print("no kube-apiserver in kplugin's cache (`kplugin e2e` builds one): served and direct only")
    listed = yamlio.parse(LIST.read_text(), str(LIST))["items"]
    report("kubectl List (tests/data/kubectl-list.yaml)", listed, max(options.repeat, 20), apiserver)
    report(
        f"generated: {options.nodes:,} nodes, {options.pods:,} pods",
        generated(options.nodes, options.pods),
        options.repeat,
        apiserver,
    )


if __name__ == "__main__":
    main()
