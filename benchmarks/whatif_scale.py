"""The what-if replay at cluster scale (issue 13): a generated snapshot of 5,000 nodes
and 50,000 pods (most bound, some pending), replayed with ``kplugin e2e --compare
default`` on local control planes.

    python benchmarks/whatif_scale.py                     # 5,000 nodes, 50,000 pods, 5,000 pending
    python benchmarks/whatif_scale.py --nodes 500 --pods 5000 --pending 1000   # a quick look

Reports: the snapshot's size and the time (and memory) to load it; per profile the
objects created per second and the scheduling throughput; kplugin's peak RSS (its own
process, polled from /proc: not etcd's, the API server's or the scheduler's); the wall
time of the whole replay; and the diff's summary. Run it on a quiet machine: on 2 cores
etcd, kube-apiserver, the scheduler and kplugin share them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
GPU = "example.com/gpu"


def generate(path: Path, nodes: int, pods: int, pending: int, seed: int = 13) -> dict[str, int]:
    """A snapshot as ``kplugin snapshot`` writes it: one entry per line, sorted."""
    rng = random.Random(seed)
    zones = ["eu-1a", "eu-1b", "eu-1c"]
    node_entries = []
    for i in range(nodes):
        gpu = i % 4 == 0
        labels = {"kubernetes.io/hostname": f"node-{i:05d}", "topology.kubernetes.io/zone": zones[i % 3]}
        capacity = {"cpu": "32", "memory": "128Gi", "pods": "110"}
        entry: dict[str, Any] = {"name": f"node-{i:05d}", "labels": labels, "capacity": capacity}
        if i % 4 != 3:  # the sample plugin's Filter wants the label (its key): three nodes in four have it
            labels["example.com/accelerator"] = "true" if gpu else "false"
        if gpu:
            capacity[GPU] = "8"
            entry["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
        node_entries.append(entry)
    gpu_nodes = [e["name"] for e in node_entries if GPU in e["capacity"]]
    tolerate = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    pod_entries = []
    for i in range(pods):
        namespace = f"team-{i % 10}"
        kind = rng.random()
        entry = {"name": f"pod-{i:06d}", "namespace": namespace, "labels": {"app": f"app-{i % 200}"}}
        if kind < 0.15:  # a GPU job
            entry["containers"] = [
                {"name": "c", "resources": {"requests": {"cpu": "2", "memory": "8Gi", GPU: "1"}, "limits": {GPU: "1"}}}
            ]
            entry["tolerations"] = tolerate
            entry["priorityClassName"] = "batch"
        else:
            cpu = rng.choice(["100m", "250m", "500m", "1"])
            entry["containers"] = [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "512Mi"}}}]
            if kind > 0.9:
                entry["nodeSelector"] = {"topology.kubernetes.io/zone": zones[i % 3]}
        bound = i >= pending
        if bound:
            if GPU in json.dumps(entry["containers"]):
                entry["nodeName"] = gpu_nodes[i % len(gpu_nodes)]
            else:
                entry["nodeName"] = f"node-{(i * 7) % nodes:05d}"
                if "nodeSelector" in entry:
                    del entry["nodeSelector"]
        pod_entries.append(entry)
    pod_entries.sort(key=lambda p: (p["namespace"], p["name"]))
    with path.open("w") as out:
        out.write('{"source":{"anonymized":false,"kubernetes":"generated"},\n"namespaces":[')
        out.write(",\n".join(json.dumps({"name": f"team-{i}"}) for i in range(10)))
        out.write('],\n"priorityClasses":[' + json.dumps({"name": "batch", "value": 100}) + "],\n")
        out.write('"nodes":[\n' + ",\n".join(json.dumps(e, sort_keys=True) for e in node_entries) + "\n],\n")
        out.write('"pods":[\n' + ",\n".join(json.dumps(e, sort_keys=True) for e in pod_entries) + "\n],\n")
        out.write('"objects":[]}\n')
    return {"nodes": nodes, "pods": pods, "pending": pending, "bytes": path.stat().st_size}


def load_cost(path: Path) -> dict[str, float]:
    """Time and memory to read the snapshot (a process of its own, so its peak is its own)."""
    code = (
        "import resource, sys, time; from pathlib import Path; from kplugin.scenario import format as scenario\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "t = time.monotonic(); s = scenario.load_scenario(Path(sys.argv[1])); t = time.monotonic() - t\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(t, before, after, len(s.pods))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code, str(path)], env=env, capture_output=True, text=True, check=True)
    seconds, before, after, _ = out.stdout.split()
    return {
        "seconds": round(float(seconds), 2),
        "peakRssMB": round(int(after) / 1024),
        "grewMB": round((int(after) - int(before)) / 1024),
    }


def peak_rss(pid: int, found: list[int], stop: threading.Event) -> None:
    """kplugin's own high-water mark (VmHWM), polled until it exits."""
    status = Path(f"/proc/{pid}/status")
    while not stop.is_set():
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    found[0] = max(found[0], int(line.split()[1]))
        except OSError:
            return
        time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50_000)
    parser.add_argument("--pending", type=int, default=5000, help="pods without a node (the rest are bound)")
    parser.add_argument("--k8s", default="1.28.3")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--timeout", default="900")
    options = parser.parse_args()
    work = options.work or Path(tempfile.mkdtemp(prefix="kplugin-whatif-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(REPO), "CI": "true"}
    project = work / "bench"
    if not project.is_dir():
        subprocess.run(
            [sys.executable, "-m", "kplugin", "new", "bench", "--k8s", options.k8s, "-o", str(work)],
            env=env,
            check=True,
        )
    args = work / "args.yaml"
    args.write_text(f"nodeLabel: example.com/accelerator\nresourceName: {GPU}\n")
    snapshot = work / "snapshot.json"
    started = time.monotonic()
    shape = generate(snapshot, options.nodes, options.pods, options.pending)
    print(f"generated {snapshot}: {shape} in {time.monotonic() - started:.1f}s", flush=True)
    loading = load_cost(snapshot)
    print(f"load: {loading}", flush=True)
    command = [
        sys.executable, "-m", "kplugin", "e2e", str(project), "--scenario", str(snapshot), "--args", str(args),
        "--compare", "default", "--json", "--timeout", options.timeout,
    ]  # fmt: skip
    started = time.monotonic()
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True) as process:
        found, stop = [0], threading.Event()
        poller = threading.Thread(target=peak_rss, args=(process.pid, found, stop), daemon=True)
        poller.start()
        stdout, _ = process.communicate()
        stop.set()
    wall = time.monotonic() - started
    if process.returncode != 0:
        raise SystemExit(f"kplugin e2e failed (exit {process.returncode})")
    diff = json.loads(stdout)
    report = {
        "shape": shape,
        "load": loading,
        "wallSeconds": round(wall, 1),
        "kpluginPeakRssMB": round(found[0] / 1024),
        "summary": diff["summary"],
        "profiles": {
            name: {"created": p["created"], "scheduling": p["scheduling"], "logDetail": p["logDetail"]}
            for name, p in diff["profiles"].items()
        },
    }
    (work / "report.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
