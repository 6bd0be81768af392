"""kplugin bench on a kwok cluster beside its local mode: the same workload, project and
machine, one mode after the other.

    python benchmarks/kwok_vs_local.py [PROJECT] [--nodes 1000] [--pods 1000] [--repeat 1]

Local mode: ``kplugin bench`` starts etcd and kube-apiserver itself and creates nodes that
nothing runs (no kubelet, no status updates). kwok mode: the same control plane started
here with a real kwok controller (kplugin.maintainer.kwok, the pinned kwok), which keeps
bench's nodes Ready, renews their leases and runs the pods bound to them, and ``kplugin
bench --kubeconfig`` against it: what a user's kwok cluster gives. Prints a Markdown
table (the figures: benchmarks/kwok.md). Without PROJECT it makes the sample (kplugin new
gpu). Not a test: it measures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kplugin.bench.scheduler import cpu_seconds  # noqa: E402
from kplugin.kube.controlplane import ControlPlane, apiserver_binary  # noqa: E402
from kplugin.maintainer import kwok  # noqa: E402
from kplugin.model.project import load  # noqa: E402


def bench(project: Path, args: list[str]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "CI": "true"}
    done = subprocess.run(
        [sys.executable, "-m", "kplugin", "bench", str(project), "--json", *args],
        env=env, stdout=subprocess.PIPE, text=True, check=True,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def row(mode: str, document: dict[str, Any], extra: str) -> str:
    throughput = {
        i["labels"]["Profile"]: i["data"]["Average"]
        for i in document["dataItems"]
        if i["labels"]["Metric"] == "SchedulingThroughput"
    }
    facts = document["kplugin"]
    per_pod = {}
    for kind in ("baseline", "project"):
        runs = [r for r in facts["runs"] if r["profile"] == kind]
        per_pod[kind] = 1000 * sum(r["schedulerCPUSeconds"] for r in runs) / sum(r["measuredPods"] for r in runs)
    created = min(r["creation"]["podsPerSecond"] for r in facts["runs"])
    dry = sum(r["queue"]["ranDry"] for r in facts["runs"])
    return (
        f"| {mode} | {throughput['baseline']:.1f} | {throughput['project']:.1f} | {facts['throughputRatio']:.2f} | "
        f"{per_pod['baseline']:.2f} / {per_pod['project']:.2f} | {facts['cpuRatio']:.2f} | "
        f"{facts['nodes']['perSecond']:.0f} | {created:.0f} | {dry} of {len(facts['runs'])} | {extra} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", nargs="?", type=Path)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kplugin-kwok-bench-") as tmp:
        work = Path(tmp)
        project = options.project
        if project is None:
            subprocess.run([sys.executable, "-m", "kplugin", "new", "gpu", "-o", tmp], check=True, cwd=REPO)
            project = work / "gpu"
        args = ["--nodes", str(options.nodes), "--pods", str(options.pods), "--repeat", str(options.repeat)]
        local = bench(project, args)
        apiserver = apiserver_binary(load(project), lambda line: print(line, file=sys.stderr))
        say = lambda line: print(line, file=sys.stderr)  # noqa: E731
        with ControlPlane(work, apiserver, say) as plane, kwok.controller(plane, work) as controller:
            before = cpu_seconds(controller.popen.pid)
            on_kwok = bench(project, [*args, "--kubeconfig", str(plane.kubeconfig())])
            kwok_cpu = cpu_seconds(controller.popen.pid) - before
    print(f"`kplugin bench --nodes {options.nodes} --pods {options.pods} --repeat {options.repeat}`, "
          f"Kubernetes {local['kplugin']['kubernetes']}, {os.cpu_count()} CPUs\n")  # fmt: skip
    print(
        "| mode | baseline pods/s | project pods/s | throughput ratio | scheduler CPU per pod, ms "
        "(baseline / project) | CPU ratio | nodes created/s | pods created/s (slowest run) | runs whose queue "
        "ran dry | kwok's CPU over the benchmark |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(row("local (bare nodes)", local, "-"))
    print(row("--kubeconfig, kwok", on_kwok, f"{kwok_cpu:.1f}s"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
