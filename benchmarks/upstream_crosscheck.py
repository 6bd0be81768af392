"""Cross-check kplugin bench against upstream scheduler_perf on the same machine: the
same SchedulingBasic (N nodes, M initial pods, M measured pods) run by
``k8s.io/kubernetes/test/integration/scheduler_perf``'s RunBenchmarkPerfScheduling
with the project's plugins in its out-of-tree registry, and by ``kplugin bench``.

    python benchmarks/upstream_crosscheck.py [PROJECT] [--k8s 1.37] [--nodes 5000] [--pods 1000]
                                             [--repeat 1] [--etcd DIR] [--keep DIR]

Upstream runs two test cases: SchedulingBasic with the default profile (the project's
plugins registered, not enabled: kplugin bench's baseline) and SchedulingBasicWithPlugin
whose schedulerConfigPath enables them in the default profile (kplugin bench's project
profile, with the same args: render-config's). The figure that matters is kplugin bench's
baseline SchedulingThroughput Average over upstream's (goal: at least 0.8, our harness
within 20% of upstream's); the plugin's ratio in each harness is printed beside it.

Only minors whose scheduler_perf exports RunBenchmarkPerfScheduling with an out-of-tree
registry can be checked: 1.30 and 1.31 (RunBenchmarkPerfScheduling(b, registry), the
config at the fixed path config/performance-config.yaml) and 1.32 on
(RunBenchmarkPerfScheduling(b, configFile, topic, registry, ...), flags from
InitTests()); 1.28 and 1.29 have the runner only in a _test package. Upstream starts its
own etcd from PATH (--etcd DIR puts DIR first; from 1.34 it listens on a unix socket,
which Debian's etcd 3.4 refuses, so the etcd the project's module graph requires is
built when --etcd is not given). Needs Go and the Go module proxy (or warm caches);
upstream's build links the whole kube-apiserver into the test binary.

Not a test: it measures. Without PROJECT it makes the sample (kplugin new gpu).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kplugin.core import yamlio  # noqa: E402
from kplugin.model.project import Project, load  # noqa: E402

POD = (REPO / "kplugin" / "data" / "bench" / "pod-default.yaml").read_text()

CONFIG = """\
- name: SchedulingBasic
  defaultPodTemplatePath: config/pod-default.yaml
  workloadTemplate:
  - opcode: createNodes
    countParam: $initNodes
  - opcode: createPods
    countParam: $initPods
  - opcode: createPods
    countParam: $measurePods
    collectMetrics: true
  workloads:
  - name: Crosscheck
    params: {{initNodes: {nodes}, initPods: {pods}, measurePods: {pods}}}
- name: SchedulingBasicWithPlugin
  defaultPodTemplatePath: config/pod-default.yaml
  schedulerConfigPath: config/scheduler-config.yaml
  workloadTemplate:
  - opcode: createNodes
    countParam: $initNodes
  - opcode: createPods
    countParam: $initPods
  - opcode: createPods
    countParam: $measurePods
    collectMetrics: true
  workloads:
  - name: Crosscheck
    params: {{initNodes: {nodes}, initPods: {pods}, measurePods: {pods}}}
"""

TEST_OLD = """\
package kpluginperf

import (
	"testing"

	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
)

// BenchmarkPerfScheduling runs config/performance-config.yaml (the fixed path of 1.30 and 1.31).
func BenchmarkPerfScheduling(b *testing.B) {
	perf.RunBenchmarkPerfScheduling(b, outOfTree())
}
"""

TEST_NEW = """\
package kpluginperf

import (
	"fmt"
	"os"
	"testing"

	_ "k8s.io/component-base/logs/json/register"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
)

func TestMain(m *testing.M) {
	if err := perf.InitTests(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	m.Run()
}

func BenchmarkPerfScheduling(b *testing.B) {
	perf.RunBenchmarkPerfScheduling(b, "config/performance-config.yaml", "kplugin", outOfTree())
}
"""

REGISTRY = """\
package kpluginperf

import (
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"{module}/pkg/registry"
{imports}
)

// outOfTree is the project's plugins as cmd/scheduler registers them.
func outOfTree() frameworkruntime.Registry {{
	plugins := frameworkruntime.Registry{{}}
	for _, name := range registry.Names() {{
		plugins[name] = registry.Factory(name)
	}}
	return plugins
}}
"""


def run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, text=True, capture_output=True, check=False, **kwargs)  # type: ignore[call-overload]


def kplugin(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "CI": "true"}
    return run([sys.executable, "-m", "kplugin", *args], env=env)


def scheduler_config(project: Project) -> str:
    """render-config's configuration, its profile renamed default-scheduler (scheduler_perf's
    pods name no schedulerName)."""
    done = kplugin("render-config", str(project.root))
    if done.returncode:
        raise SystemExit(f"kplugin render-config failed: {done.stderr}")
    document = yamlio.parse(done.stdout, "render-config")
    document.pop("leaderElection", None)
    document["profiles"][0]["schedulerName"] = "default-scheduler"
    return yamlio.dump(document)


def upstream_package(project: Project, work: Path, nodes: int, pods: int) -> Path:
    """A copy of the project with test/kpluginperf: scheduler_perf's runner, the workload
    and the project's registry."""
    copy = work / project.root.name
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(project.root, copy, ignore=shutil.ignore_patterns("bin", ".git"))
    package = copy / "test" / "kpluginperf"
    (package / "config").mkdir(parents=True)
    minor = int(project.version.minor)
    (package / "perf_test.go").write_text(TEST_OLD if minor <= 31 else TEST_NEW)
    imports = "\n".join(f'\t_ "{project.module}/pkg/{p.package}"' for p in project.plugins)
    (package / "registry_test.go").write_text(REGISTRY.format(module=project.module, imports=imports))
    (package / "config" / "performance-config.yaml").write_text(CONFIG.format(nodes=nodes, pods=pods))
    (package / "config" / "pod-default.yaml").write_text(POD)
    (package / "config" / "scheduler-config.yaml").write_text(scheduler_config(project))
    return package


def upstream(package: Path, results: Path, etcd: Path | None) -> dict[str, float]:
    """SchedulingThroughput Average per test case, from scheduler_perf's own JSON."""
    if results.exists():
        shutil.rmtree(results)
    results.mkdir(parents=True)
    path = os.environ["PATH"] if etcd is None else f"{etcd}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, "PATH": path, "KUBE_CACHE_MUTATION_DETECTOR": "false", "GOFLAGS": "-mod=mod"}
    cmd = ["go", "test", "-run", "^$", "-bench", "BenchmarkPerfScheduling/SchedulingBasic(WithPlugin)?/Crosscheck$"]
    cmd += ["-benchtime=1x", "-timeout=2h", ".", "-args", "-perf-scheduling-label-filter="]
    cmd += [f"-data-items-dir={results}"]
    done = run(cmd, cwd=package, env=env)
    (results / "go-test.log").write_text(done.stdout + done.stderr)
    found: dict[str, float] = {}
    for file in sorted(results.glob("*.json")):
        for item in json.loads(file.read_text()).get("dataItems") or []:
            labels = item.get("labels", {})
            if labels.get("Metric") == "SchedulingThroughput" and item.get("data"):
                case = "plugin" if "SchedulingBasicWithPlugin" in labels.get("Name", "") else "baseline"
                found[case] = float(item["data"]["Average"])
    if done.returncode or len(found) != 2:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-40:])
        raise SystemExit(f"upstream scheduler_perf failed (exit {done.returncode}); see {results}/go-test.log:\n{tail}")
    return found


def etcd_for(package: Path, work: Path) -> Path:
    """etcd built from the version the project's k8s.io/kubernetes requires (from 1.34
    scheduler_perf's etcd listens on a unix socket, which Debian's etcd 3.4 refuses)."""
    target = work / "etcd-bin"
    if not (target / "etcd").is_file():
        env = {**os.environ, "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
        done = run(["go", "build", "-o", str(target / "etcd"), "go.etcd.io/etcd/server/v3"], cwd=package, env=env)
        if done.returncode:
            raise SystemExit(f"building etcd failed: {done.stderr[-2000:]}")
    return target


def ours(project: Project, nodes: int, pods: int, results: Path) -> dict[str, float]:
    done = kplugin("bench", str(project.root), "--nodes", str(nodes), "--pods", str(pods), "--json")
    (results / "kplugin-bench.json").write_text(done.stdout)
    (results / "kplugin-bench.log").write_text(done.stderr)
    if done.returncode:
        raise SystemExit(f"kplugin bench failed: {done.stderr[-3000:]}")
    items = json.loads(done.stdout)["dataItems"]
    return {
        "baseline" if i["labels"]["Profile"] == "baseline" else "plugin": float(i["data"]["Average"])
        for i in items
        if i["labels"]["Metric"] == "SchedulingThroughput" and i["labels"]["Profile"] in ("baseline", "project")
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", nargs="?", type=Path, help="a kplugin project (default: a new sample)")
    parser.add_argument("--k8s", default="1.37", help="the sample's Kubernetes version (1.30 or newer)")
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=1000, help="initial and measured pods (each)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of upstream then kplugin bench")
    parser.add_argument("--etcd", type=Path, help="a directory with the etcd upstream should start")
    parser.add_argument("--keep", type=Path, help="work here and keep it (the Go test package, its results)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="kplugin-crosscheck-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if args.project is None:
            args.project = work / "sample" / "gpu"
            if not args.project.exists():
                done = kplugin("new", "gpu", "--k8s", args.k8s, "-o", str(work / "sample"))
                if done.returncode:
                    raise SystemExit(f"kplugin new failed: {done.stderr}")
        project = load(args.project)
        if int(project.version.minor) < 30:
            raise SystemExit(
                f"{project.version}: scheduler_perf exports RunBenchmarkPerfScheduling with an out-of-tree "
                "registry from 1.30 only"
            )
        package = upstream_package(project, work / "upstream", args.nodes, args.pods)
        if args.etcd is None and int(project.version.minor) >= 34:
            args.etcd = etcd_for(package, work)
        rounds: list[tuple[dict[str, float], dict[str, float], float]] = []
        for number in range(1, args.repeat + 1):
            load_before = os.getloadavg()[0]
            print(f"round {number}: upstream scheduler_perf ({project.version})…", file=sys.stderr, flush=True)
            theirs = upstream(package, work / f"results-{number}", args.etcd)
            print(f"round {number}: kplugin bench…", file=sys.stderr, flush=True)
            mine = ours(project, args.nodes, args.pods, work / f"results-{number}")
            rounds.append((theirs, mine, load_before))
            print(f"  upstream {theirs}  kplugin bench {mine}  load {load_before:.1f}", file=sys.stderr)
        median = {
            (side, case): statistics.median(r[i][case] for r in rounds)
            for i, side in enumerate(("upstream", "kplugin"))
            for case in ("baseline", "plugin")
        }
        print(
            f"SchedulingBasic, {args.nodes} nodes, {args.pods} + {args.pods} pods, Kubernetes {project.version}, "
            f"{len(rounds)} round(s), {time.strftime('%Y-%m-%d')}, load at start {[r[2] for r in rounds]}"
        )
        print(f"{'':28} {'baseline':>10} {'plugin':>10} {'plugin/baseline':>16}")
        for side in ("upstream", "kplugin"):
            base, plugin = median[(side, "baseline")], median[(side, "plugin")]
            label = "upstream scheduler_perf" if side == "upstream" else "kplugin bench"
            print(f"{label:28} {base:10.1f} {plugin:10.1f} {plugin / base:16.2f}")
        ratio = median[("kplugin", "baseline")] / median[("upstream", "baseline")]
        print(f"kplugin bench baseline / upstream baseline: {ratio:.2f} (goal >= 0.8)")
        return 0
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
