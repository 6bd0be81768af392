"""The generated projects against the real k8s.io/kubernetes modules and Go toolchain.

Needs Go and the Go module proxy; runs in CI (.ci/run). Module and build caches are Go's
defaults, shared by every test and every run.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from support import REPO, Run, allocations, every_point, tree

from kplugin.maintainer import examples
from kplugin.model.spec import ExtensionPoint

pytestmark = pytest.mark.integration

ALL_POINTS = every_point("1.28.3")  # the version the projects below are made at
LDFLAGS = "-s -w -X k8s.io/component-base/version.gitVersion=v1.28.3"
PROJECTS = {
    "gpu-aware": ["--module", "example.com/gpu-scheduler", "--plugin", "GpuAware"],
    "all-points": ["--extension-points", ALL_POINTS, "--plugin", "Everything"],
}


# What a Permit or gang plugin takes from internal/fw (custom-kind events, waiting pods,
# the first attempt of a queued pod), added to the all-points plugin, which the build and
# vet below compile at the oldest minor (QUEUED_TEST runs the helpers at the newest).
GANG_GO = """package everything

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"example.com/all-points/internal/fw"
)

var podGroups = fw.CustomResource("podgroups", "v1alpha1", "scheduling.x-k8s.io")

func gangEvents() []fw.ClusterEventWithHint {
	return []fw.ClusterEventWithHint{
		{Event: fw.ClusterEvent{Resource: podGroups, ActionType: fw.Add | fw.Update}},
		{Event: fw.ClusterEvent{Resource: fw.Pod, ActionType: fw.All}},
	}
}

func allowGang(h fw.Handle, uids []types.UID, allow bool) (waiting []string) {
	for _, uid := range uids {
		if wp := h.GetWaitingPod(uid); wp != nil && allow {
			wp.Allow(Name)
		} else if wp != nil {
			wp.Reject(Name, "the gang is incomplete")
		}
	}
	h.IterateOverWaitingPods(func(wp fw.WaitingPod) {
		waiting = append(waiting, wp.GetPod().Name+":"+strings.Join(wp.GetPendingPlugins(), ","))
	})
	return waiting
}

func firstAttempt(q fw.QueuedInfo) time.Time {
	if at, ok := fw.InitialAttempt(q); ok {
		return at
	}
	return fw.QueuedSince(q)
}
"""


def go(project: Path, *args: str, env: dict[str, str]) -> str:
    proc = subprocess.run(["go", *args], cwd=project, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"go {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Generated once (with go mod tidy) for every test here."""
    from kplugin.cli import main

    parent = tmp_path_factory.mktemp("projects")
    for name, args in PROJECTS.items():
        with pytest.raises(SystemExit) as exit_:
            main(["new", name, "--k8s", "1.28.3", "-o", str(parent), *args])
        assert exit_.value.code == 0
    (parent / "all-points/pkg/everything/gang.go").write_text(GANG_GO)
    return {name: parent / name for name in PROJECTS}


@pytest.fixture(scope="module")
def binaries(projects: dict[str, Path], go_env: dict[str, str]) -> dict[str, Path]:
    env = {**go_env, "CGO_ENABLED": "0"}
    out = {}
    for name, project in projects.items():
        go(project, "build", "-trimpath", "-ldflags", LDFLAGS, "-o", "bin/kube-scheduler", "./cmd/scheduler", env=env)
        out[name] = project / "bin" / "kube-scheduler"
    return out


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_build_vet_test_gofmt(projects: dict[str, Path], go_env: dict[str, str], name: str) -> None:
    project = projects[name]
    assert (project / "go.sum").is_file()
    go(project, "build", "./...", env=go_env)
    go(project, "vet", "./...", env=go_env)
    output = go(project, "test", "-count=1", "-v", "./...", env=go_env)
    assert "--- FAIL" not in output
    for test in ["TestDecodeArgs", "TestNewRejectsInvalidArgs", "TestFilter", "TestScore"]:
        assert f"--- PASS: {test} " in output, test
    if name == "all-points":
        assert "--- PASS: TestBindingCycle " in output
        assert "--- PASS: TestQueueSort " in output
    fmt = subprocess.run(["gofmt", "-l", "."], cwd=project, capture_output=True, text=True, check=True)
    assert fmt.stdout == ""


@pytest.mark.parametrize("name", ["gpu-aware", "filter-and-score"])
def test_filter_and_score_allocate_nothing_per_node(
    projects: dict[str, Path], go_env: dict[str, str], name: str, tmp_path: Path
) -> None:
    """The generated benchmarks report allocations per Filter and per Score call on one
    node, and the generated plugin's are 0: the pod's demand is worked out once per cycle.
    The sample's PreFilter writes it (test_integration_compat: every point's, at the oldest
    and newest minor); a plugin at Filter and Score only
    (no PreFilter or PreScore) works it out at the cycle's first call, and its generated
    test says that the demand is then read from CycleState."""
    if name in PROJECTS:
        project = projects[name]
    else:
        from kplugin.cli import main

        with pytest.raises(SystemExit) as exit_:
            main(["new", "lean", "--k8s", "1.28.3", "-o", str(tmp_path), "--extension-points", "filter,score"])
        assert exit_.value.code == 0
        project = tmp_path / "lean"
        go(project, "vet", "./...", env=go_env)
        output = go(project, "test", "-count=1", "-v", "-run", "TestDemandIsKeptForTheCycle", "./pkg/...", env=go_env)
        assert "--- PASS: TestDemandIsKeptForTheCycle " in output, output
    bench = ("-run", "^$", "-bench", ".", "-benchtime", "200x", "-benchmem")
    output = go(project, "test", *bench, "./pkg/...", env=go_env)
    assert allocations(output) == {"BenchmarkFilter": 0, "BenchmarkScore": 0}, output


def write_config(binary: Path, config: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(binary),
            "--config",
            str(config),
            "--write-config-to",
            str(out),
            "--secure-port=0",
            "--master=https://127.0.0.1:1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_binary_is_the_pinned_kube_scheduler(binaries: dict[str, Path]) -> None:
    binary = binaries["gpu-aware"]
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == "Kubernetes v1.28.3"
    helped = subprocess.run([str(binary), "--help"], capture_output=True, text=True, check=True)
    assert "--config" in helped.stdout and "--write-config-to" in helped.stdout


@pytest.mark.parametrize(
    ("name", "plugin", "points"),
    [
        ("gpu-aware", "GpuAware", ["filter", "score"]),
        (
            "all-points",
            "Everything",
            [str(p.config_name) for p in ExtensionPoint if p.config_name and p in ALL_POINTS.split(",")],
        ),
    ],
)
def test_real_scheduler_accepts_generated_config(
    binaries: dict[str, Path], projects: dict[str, Path], tmp_path: Path, name: str, plugin: str, points: list[str]
) -> None:
    out = tmp_path / "written.yaml"
    proc = write_config(binaries[name], projects[name] / "deploy/scheduler-config.yaml", out)
    assert proc.returncode == 0, proc.stderr
    written = YAML(typ="safe").load(out)
    (profile,) = written["profiles"]
    assert profile["schedulerName"] == name
    for point in points:
        enabled = [p["name"] for p in profile["plugins"][point]["enabled"]]
        assert plugin in enabled, point
    scores = {p["name"]: p.get("weight") for p in profile["plugins"]["score"]["enabled"]}
    assert scores[plugin] == 1
    args = {c["name"]: c.get("args") for c in profile["pluginConfig"]}
    assert args[plugin] == {"resourceName": "cpu"}
    assert written["leaderElection"]["resourceName"] == name
    if name == "all-points":  # ours replace the defaults where only one can act
        assert profile["plugins"]["queueSort"]["enabled"] == [{"name": plugin, "weight": 0}]
        assert [p["name"] for p in profile["plugins"]["bind"]["enabled"]] == [plugin]


def test_real_scheduler_rejects_unregistered_plugin(
    binaries: dict[str, Path], projects: dict[str, Path], tmp_path: Path
) -> None:
    config = (projects["gpu-aware"] / "deploy/scheduler-config.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(config.replace("name: GpuAware", "name: NotRegistered"))
    proc = write_config(binaries["gpu-aware"], bad, tmp_path / "out.yaml")
    assert proc.returncode != 0
    assert 'NotRegistered\\" does not exist' in proc.stderr


def test_real_scheduler_rejects_bad_args(binaries: dict[str, Path], projects: dict[str, Path], tmp_path: Path) -> None:
    config = (projects["gpu-aware"] / "deploy/scheduler-config.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(config.replace("resourceName: cpu", "resourceNme: cpu"))
    proc = write_config(binaries["gpu-aware"], bad, tmp_path / "out.yaml")
    assert proc.returncode != 0
    assert 'unknown field \\"resourceNme\\"' in proc.stderr


def test_examples_go_files_are_current(tmp_path: Path) -> None:
    """Every example regenerates byte for byte with Go: go.mod and go.sum as tidy makes
    them, and for an example with code of its own every file, its generated
    configuration carrying the defaults its Go code gives."""
    for name, options in examples.EXAMPLES.items():
        examples.generate(name, tmp_path)
        got, want = tree(tmp_path / name), tree(REPO / "examples" / name)
        assert got["go.mod"] == want["go.mod"]
        assert got["go.sum"] == want["go.sum"]
        if options["own_code"]:
            assert sorted(got) == sorted(want)
            for path in want:
                assert got[path] == want[path], f"examples/{name}/{path} is stale: make examples"


def test_patch_that_does_not_exist(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    run = kplugin("new", "gpu", "--k8s", "1.28.99", "-o", str(tmp_path))
    assert run.code == 1
    assert "newer than the catalog knows" in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("kplugin: error:")]
    assert len(lines) == 1
    assert "k8s.io/kubernetes@v1.28.99 does not exist" in lines[0]
    assert "Traceback" not in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_render_config_validated_by_real_scheduler(
    kplugin: Callable[..., Run], binaries: dict[str, Path], projects: dict[str, Path], tmp_path: Path
) -> None:
    project = projects["gpu-aware"]
    args = tmp_path / "args.yaml"
    args.write_text("nodeLabel: example.com/pool\nresourceName: nvidia.com/gpu\n")
    out = tmp_path / "config.yaml"
    run = kplugin(
        "render-config",
        str(project),
        "--k8s",
        "1.28.3",
        "--weight",
        "GpuAware=7",
        "--args",
        str(args),
        "--validate",
        "-o",
        str(out),
    )
    assert run.code == 0, run.stderr
    assert "accepts the configuration" in run.stderr
    written = tmp_path / "written.yaml"
    proc = write_config(binaries["gpu-aware"], out, written)
    assert proc.returncode == 0, proc.stderr
    (profile,) = YAML(typ="safe").load(written)["profiles"]
    assert {"name": "GpuAware", "weight": 7} in profile["plugins"]["score"]["enabled"]
    assert {"name": "GpuAware", "weight": 0} in profile["plugins"]["filter"]["enabled"]
    args_written = {c["name"]: c["args"] for c in profile["pluginConfig"]}
    assert args_written["GpuAware"] == {"nodeLabel": "example.com/pool", "resourceName": "nvidia.com/gpu"}


def test_v1beta3_validated_on_1_28(
    kplugin: Callable[..., Run], binaries: dict[str, Path], projects: dict[str, Path]
) -> None:
    run = kplugin("render-config", str(projects["gpu-aware"]), "--api-version", "v1beta3", "--validate")
    assert run.code == 0, run.stderr
    assert "kubescheduler.config.k8s.io/v1beta3" in run.stdout


def test_unregistered_plugin_rejected_by_binary_and_doctor(
    kplugin: Callable[..., Run], binaries: dict[str, Path], projects: dict[str, Path], tmp_path: Path
) -> None:
    project = projects["gpu-aware"]
    bad = tmp_path / "bad.yaml"
    bad.write_text((project / "deploy/scheduler-config.yaml").read_text().replace("name: GpuAware", "name: Ghost"))
    from kplugin.config import render

    accepted, message = render.validate(binaries["gpu-aware"], bad.read_text())
    assert not accepted
    assert 'Plugin "Ghost" does not exist' in message
    run = kplugin("doctor", str(project), "--config", str(bad), "--binary", str(binaries["gpu-aware"]))
    assert run.code == 1
    assert "'Ghost'" in run.stdout and "is not registered" in run.stdout
    clean = kplugin("doctor", str(project), "--binary", str(binaries["gpu-aware"]))
    assert clean.code == 0, clean.stdout


# fw.QueuedPod and its neighbours on the entries of the newest minor's queue, which may be
# pod groups (the GenericWorkload gate): a QueueSort-only project, built against the real
# framework types
QUEUED_TEST = """\
package fw_test

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"example.com/fifo/internal/fw"
)

func TestQueuedPodOfAPodAndOfAPodGroup(t *testing.T) {
	priority := int32(7)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ml"}, Spec: v1.PodSpec{Priority: &priority}}
	info, err := framework.NewPodInfo(pod)
	if err != nil {
		t.Fatal(err)
	}
	since := time.Unix(1700000000, 0)
	first := since.Add(-time.Minute)
	params := framework.QueueingParams{Timestamp: since, InitialAttemptTimestamp: &first}
	var entry fw.QueuedInfo = &framework.QueuedPodInfo{PodInfo: info, QueueingParams: params}
	if got := fw.QueuedPod(entry); got != pod {
		t.Fatalf("QueuedPod(pod entry) = %v, want the pod", got)
	}
	if at, ok := fw.InitialAttempt(entry); !ok || !at.Equal(first) {
		t.Fatalf("InitialAttempt(pod entry) = %v, %v", at, ok)
	}
	if fw.QueuedPriority(entry) != 7 || !fw.QueuedSince(entry).Equal(since) {
		t.Fatalf("pod entry: priority %d, since %v", fw.QueuedPriority(entry), fw.QueuedSince(entry))
	}

	groupPriority := int32(1000)
	group := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "ml"},
		Spec:       schedulingv1beta1.PodGroupSpec{Priority: &groupPriority},
	}
	var groupEntry fw.QueuedInfo = &framework.QueuedPodGroupInfo{
		PodGroupInfo: &framework.PodGroupInfo{
			Namespace: "ml", Name: "g", Type: fwk.PodGroupKeyType, UnscheduledPods: []*v1.Pod{pod}, PodGroup: group,
		},
		QueueingParams: framework.QueueingParams{Timestamp: since.Add(time.Second)},
	}
	if got := fw.QueuedPod(groupEntry); got != nil {
		t.Fatalf("QueuedPod(pod group entry) = %v, want nil", got)
	}
	if _, ok := fw.InitialAttempt(groupEntry); ok {
		t.Fatal("InitialAttempt(pod group entry never attempted) is set")
	}
	var _ func(fw.WaitingPod) = func(wp fw.WaitingPod) { wp.Reject("Fifo", "gang") }
	if r := fw.CustomResource("podgroups", "v1alpha1", "x.io"); r != "podgroups.v1alpha1.x.io" {
		t.Fatalf("CustomResource: %q", r)
	}
	if fw.QueuedPriority(groupEntry) != 1000 || !fw.QueuedSince(groupEntry).Equal(since.Add(time.Second)) {
		t.Fatalf("pod group entry: priority %d, since %v", fw.QueuedPriority(groupEntry), fw.QueuedSince(groupEntry))
	}
}
"""


def test_queued_pod_on_a_pod_group_at_the_newest_minor(
    kplugin: Callable[..., Run], go_env: dict[str, str], tmp_path: Path
) -> None:
    from kplugin.model.versions import newest_release

    newest = newest_release().key
    run = kplugin("new", "fifo", "--k8s", newest, "--module", "example.com/fifo", "--extension-points", "queuesort",
                  "-o", str(tmp_path))  # fmt: skip
    assert run.code == 0, run.stderr
    project = tmp_path / "fifo"
    (project / "internal/fw/queued_test.go").write_text(QUEUED_TEST)
    go(project, "vet", "./internal/fw/", env=go_env)
    output = go(project, "test", "-count=1", "-v", "-run", "TestQueuedPodOfAPodAndOfAPodGroup", "./internal/fw/",
                env=go_env)  # fmt: skip
    assert "--- PASS: TestQueuedPodOfAPodAndOfAPodGroup " in output, output
