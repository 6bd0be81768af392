"""kplugin e2e against a real control plane: etcd (Debian's etcd-server, installed by
.ci/run), kube-apiserver built from the project's own pin, and the project's scheduler,
at the oldest and the newest supported minor. The scenario (examples/e2e-*.yaml) is
decided by the generated plugin's own logic (a node label and a free extended resource, from its args): its
Filter message and its Score must show in what the real scheduler did."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from support import REPO, Kplugin, every_point, example_at

from kplugin.model.versions import newest_release

pytestmark = pytest.mark.integration

OLDEST = "1.28.3"  # shared with the other integration tests, so the Go caches are too
NEWEST = newest_release().key

EXAMPLES = REPO / "examples"
ARGS = (EXAMPLES / "e2e-args.yaml").read_text()
SCENARIO = (EXAMPLES / "e2e-scenario.yaml").read_text()


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    scenario, args = tmp_path / "scenario.yaml", tmp_path / "args.yaml"
    scenario.write_text(SCENARIO)
    args.write_text(ARGS)
    return scenario, args


def new(kplugin: Kplugin, tmp_path: Path, version: str, *options: str) -> Path:
    run = kplugin("new", "gpu", "--k8s", version, "-o", str(tmp_path / "p"), *options)
    assert run.code == 0, run.stderr
    return tmp_path / "p" / "gpu"


@pytest.mark.parametrize(
    ("version", "points", "api"),
    [(OLDEST, "filter,score", "native"), (NEWEST, every_point(NEWEST), "layer")],
    ids=[f"{OLDEST}-filter,score-native", f"{NEWEST}-every-point"],
)
def test_the_plugin_decides_in_a_real_scheduler(
    kplugin: Kplugin,
    tmp_path: Path,
    inputs: tuple[Path, Path],
    version: str,
    points: str,
    api: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At the newest minor with every extension point (QueueSort replacing PrioritySort,
    Bind replacing DefaultBinder, PostFilter, Permit, ...) the same scenario comes out
    the same: each generated point works inside the real scheduler. At the oldest, the
    plugin is written natively (--api native)."""
    project = new(kplugin, tmp_path, version, "--extension-points", points, "--api", api)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where e2e makes its working directory
    go_mod = (project / "go.mod").read_bytes()
    scenario, args = inputs
    options = ["--scenario", str(scenario), "--args", str(args), "--json"]
    if "preenqueue" in points:  # a held pod never gets an attempt: e2e reads the queue's line instead
        held = '- {name: held-1, annotations: {example.com/hold: "true"}}\nexpect:\n  held-1: pending\n'
        scenario.write_text(SCENARIO.replace("expect:\n", held))
    run = kplugin("e2e", str(project), *options)
    assert run.code == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["ok"] and result["kubernetes"].startswith(version), result
    # the scheduler ran as deploy/rbac.yaml's ServiceAccount, and RBAC refused it nothing
    assert (result["identity"], result["denied"]) == ("system:serviceaccount:kube-system:gpu", [])
    pods = {p["pod"]: p for p in result["pods"]}
    held = {"held-1": None} if "preenqueue" in points else {}
    assert {name: p["node"] for name, p in pods.items()} == {
        "train-1": "gpu-big",
        "train-2": "gpu-big",
        "train-3": "gpu-big",
        "train-4": "gpu-small",
        "train-5": None,
        "web-1": None,
        **held,
    }
    # Score: with cpu and memory alike, only the plugin's free-GPU score tells the nodes apart
    scores = {s["node"]: s for s in pods["train-1"]["scores"]}
    assert scores["gpu-big"]["plugins"]["Gpu"] == 100 and scores["gpu-small"]["plugins"]["Gpu"] == 0
    assert scores["gpu-big"]["total"] > scores["gpu-small"]["total"]
    if version == OLDEST:  # the defaults score too (from 1.33 BalancedAllocation skips a pod without cpu/memory)
        assert "NodeResourcesBalancedAllocation" in scores["gpu-big"]["plugins"], scores
    assert "cpu-only" not in scores  # filtered out by the plugin (no accelerator label)
    # Filter: the one node the selector allows is refused by the plugin, in its own words
    assert "node cpu-only does not have label example.com/accelerator" in pods["web-1"]["reason"]
    assert "Insufficient example.com/gpu" in pods["train-5"]["reason"]
    # the kube-apiserver build went through a copy of go.mod: the project is as it was
    assert (project / "go.mod").read_bytes() == go_mod
    assert result["work"] is None and list(scratch.iterdir()) == [], "the working directory is removed"
    if held:  # the plugin's PreEnqueue kept it from the queue: no attempt, no condition, no wait for one
        assert pods["held-1"]["reason"] == (
            "held out of the scheduling queue by PreEnqueue plugin Gpu: "
            "pod default/held-1 is held by annotation example.com/hold"
        ), pods["held-1"]
        assert pods["held-1"]["attempts"] == 0
    # each node's rejection, the in-tree plugins' and the project's (kplugin's reporting
    # plugin, first at PostFilter: 1.28's NodeToStatusMap, the newest's NodeToStatusReader)
    assert [(r["node"], r["plugin"], r["code"]) for r in pods["web-1"]["nodeRejections"]] == [
        ("cpu-only", "Gpu", "UnschedulableAndUnresolvable"),
        ("gpu-big", "NodeAffinity", "UnschedulableAndUnresolvable"),
        ("gpu-small", "NodeAffinity", "UnschedulableAndUnresolvable"),
    ], pods["web-1"]
    assert {(r["plugin"], r["reason"]) for r in pods["train-5"]["nodeRejections"]} == {
        ("NodeResourcesFit", "Insufficient example.com/gpu")
    }, pods["train-5"]
    if "postfilter" in points:  # the plugin's PostFilter ran for the pods nothing fits, after the reporter
        assert "3 of 3 nodes rejected pod default/web-1" in pods["web-1"]["reason"]


def test_weight_and_disable_default_reach_the_real_scheduler(
    kplugin: Kplugin, tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    """e2e's --weight and --disable-default change the profile the real scheduler runs,
    as its own per-plugin scores show (they are weighted): the plugin's score is three
    times what it is at weight 1 (100, above), and the disabled default plugin scores no
    node (it does without the option, above). The placements do not change."""
    project = new(kplugin, tmp_path, OLDEST)
    scenario, args = inputs
    run = kplugin(
        "e2e", str(project), "--scenario", str(scenario), "--args", str(args), "--json",
        "--weight", "Gpu=3", "--disable-default", "NodeResourcesBalancedAllocation",
    )  # fmt: skip
    assert run.code == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["ok"], result
    pods = {p["pod"]: p for p in result["pods"]}
    assert pods["train-1"]["node"] == "gpu-big" and pods["train-4"]["node"] == "gpu-small"
    scores = {s["node"]: s["plugins"] for s in pods["train-1"]["scores"]}
    assert scores["gpu-big"]["Gpu"] == 300 and scores["gpu-small"]["Gpu"] == 0
    assert all("NodeResourcesBalancedAllocation" not in plugins for plugins in scores.values()), scores
    assert all("NodeResourcesFit" in plugins for plugins in scores.values()), scores  # the other defaults stay


def test_a_wrong_expectation_fails_and_says_where_the_pod_went(
    kplugin: Kplugin, tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    """The failed expectation is the exit code, the error, the text report's mark, and
    the one failure of the JUnit report (--junit: a test case per expectation)."""
    import junitparser

    project = new(kplugin, tmp_path, OLDEST)
    scenario, args = inputs
    scenario.write_text(SCENARIO.replace("train-4: gpu-small", "train-4: gpu-big"))
    report = tmp_path / "e2e.xml"
    run = kplugin(
        "e2e", str(project), "--scenario", str(scenario), "--args", str(args), "--keep", "--junit", str(report)
    )  # fmt: skip
    assert run.code == 1, run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("kplugin: error:")]
    assert errors == ["kplugin: error: 1 pod(s) not where the scenario expects: train-4 is gpu-small, expected gpu-big"]
    assert "train-4                  gpu-small                EXPECTED gpu-big" in run.stdout
    # each pod's scores: a header, then a line per node, best total first
    table = run.stdout.split("train-1 ", 1)[1].splitlines()[1:3]
    assert table[0].split()[:2] == ["node", "total"] and "Gpu" in table[0].split(), table
    assert table[1].split()[0] == "gpu-big", table
    (suite,) = list(junitparser.JUnitXml.fromfile(str(report)))
    assert (suite.tests, suite.failures, suite.errors) == (6, 1, 0)
    cases = {case.name: case.result for case in suite}
    expected = ["train-1: gpu-big", "train-2: gpu-big", "train-3: gpu-big", "train-4: gpu-big", "train-5: pending"]
    assert sorted(cases) == [*expected, "web-1: pending"]
    (failure,) = cases.pop("train-4: gpu-big")
    assert isinstance(failure, junitparser.Failure) and failure.message == "train-4 is gpu-small, expected gpu-big"
    assert failure.text.startswith("where: gpu-small\nexpected: gpu-big\n"), failure.text
    assert all(result == [] for result in cases.values()), cases
    # --keep: the logs of every component stay, named in the summary
    kept = Path(run.stderr.split("logs kept in ")[1].split()[0])
    try:
        assert {"etcd.log", "kube-apiserver.log", "kube-scheduler.log", "scheduler-config.yaml"} <= {
            p.name for p in kept.iterdir()
        }
        assert "Plugin scored node for pod" in (kept / "kube-scheduler.log").read_text()
    finally:
        import shutil

        shutil.rmtree(kept, ignore_errors=True)


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in cmdline:
                found.append(cmdline)
    return found


def test_a_scheduler_rbac_refuses_is_reported_as_such(
    kplugin: Kplugin, tmp_path: Path, inputs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """deploy/rbac.yaml without the nodes rule: the scheduler's informers never sync, so
    it never decides a pod. e2e says what RBAC refused it, and stops waiting as soon as
    the scheduler's log shows it. (It had waited out the 120 s start-up probe, and then
    reported the API server's close of the idle connection: "cannot reach … EOF".)"""
    project = new(kplugin, tmp_path, OLDEST)
    rbac = project / "deploy/rbac.yaml"
    text = rbac.read_text()
    assert text.count("  - nodes\n") == 1
    rbac.write_text(text.replace("  - nodes\n", "  - nodez\n"))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    scenario, args = inputs
    run = kplugin("e2e", str(project), "--scenario", str(scenario), "--args", str(args))
    assert run.code == 1, run.stdout
    assert run.stderr.strip().splitlines()[-1] == (
        "kplugin: error: deploy/rbac.yaml does not let the scheduler (system:serviceaccount:kube-system:gpu) "
        "list nodes: add the rules to config/rbac/rules.yaml and run kplugin refresh, or run with --admin"
    )
    assert "cannot reach" not in run.stderr and "Traceback" not in run.stderr
    assert list(scratch.iterdir()) == []
    assert _processes_mentioning(str(scratch)) == []


def test_a_scheduler_that_dies_is_reported_and_everything_stops(
    kplugin: Kplugin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scheduler that exits at start (here one that rejects its flags) is an operation
    failure with the end of its log; etcd and kube-apiserver are stopped and the working
    directory removed. The job kplugin e2e runs, with its build giving that scheduler
    (whose configuration check would fail first)."""
    from types import SimpleNamespace

    from kplugin.builder import ready
    from kplugin.core.errors import OperationError
    from kplugin.core.progress import Quiet
    from kplugin.e2e import job
    from kplugin.e2e.run import Options
    from kplugin.model.project import load

    project = load(new(kplugin, tmp_path, OLDEST))
    dying = tmp_path / "kube-scheduler"
    dying.write_text("#!/bin/sh\necho 'unknown flag: --config' >&2\nexit 3\n")
    dying.chmod(0o755)
    built = SimpleNamespace(binaries=[SimpleNamespace(path=str(dying))])
    monkeypatch.setattr(ready, "build", lambda *_, **__: built)
    monkeypatch.setattr(job, "check_config", lambda *_: None)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with pytest.raises(OperationError) as failure:
        job.run(job.Request(project, project.target, options=Options(timeout=60)), Quiet())
    assert str(failure.value) == "kube-scheduler exited (code 3); the end of its log:"
    assert failure.value.details == ["unknown flag: --config"]
    assert list(scratch.iterdir()) == []
    assert _processes_mentioning(str(scratch)) == []


# --- the objects the scheduler's own plugins read: volumes, DRA -----------------------

DATA = REPO / "tests" / "data"


@pytest.mark.parametrize(
    ("version", "scenario", "pod", "without"),
    [
        (OLDEST, "volume-scenario.yaml", "db", "  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]\n"),
        (NEWEST, "dra-scenario.yaml", "train", "  resourceClaims: [{name: gpu, resourceClaimName: train-gpu}]\n"),
    ],
    ids=["volume-1.28", "dra-newest"],
)
def test_volumes_and_dra_objects_decide_in_a_real_scheduler(
    kplugin: Kplugin, tmp_path: Path, version: str, scenario: str, pod: str, without: str
) -> None:
    """A StorageClass, a PersistentVolume with node affinity and the claim bound to it (at
    the oldest minor); a DeviceClass, a node's ResourceSlice and a ResourceClaim (at the
    newest): replayed into the real API server, the scheduler's VolumeBinding and
    DynamicResources plugins keep the pod on node a, where the sample plugin alone would
    not put it. The same scenario without the pod's volume or claim is the control."""
    project = new(kplugin, tmp_path, OLDEST)
    args = tmp_path / "args.yaml"
    args.write_text(ARGS)
    text = (DATA / scenario).read_text()
    options = ["--args", str(args), "--k8s", version, "--json"]
    run = kplugin("e2e", str(project), "--scenario", str(DATA / scenario), *options)
    assert run.code == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["ok"] and result["kubernetes"].startswith(version), result
    assert {p["pod"]: p["node"] for p in result["pods"]} == {pod: "a", "web": "b"}
    assert result["denied"] == [], "deploy/rbac.yaml lets the scheduler read and write what the plugins need"
    control = tmp_path / "control.yaml"
    assert text.count(without) == 1
    control.write_text(text.replace(without, "").replace(f"  {pod}: a\n", f"  {pod}: b\n"))
    run = kplugin("e2e", str(project), "--scenario", str(control), *options)
    assert run.code == 0, run.stderr
    assert {p["pod"]: p["node"] for p in json.loads(run.stdout)["pods"]} == {pod: "b", "web": "b"}


# --- examples/weighted-fit: a real plugin with non-trivial Args -------------------------

WEIGHTED_SCENARIO = EXAMPLES / "weighted-fit-scenario.yaml"


def weighted_fit(kplugin: Kplugin, tmp_path: Path, version: str) -> Path:
    return example_at(kplugin, "weighted-fit", tmp_path, version)


@pytest.mark.parametrize("version", [OLDEST, NEWEST])
def test_weighted_fit_example_places_by_its_args(kplugin: Kplugin, tmp_path: Path, version: str) -> None:
    """The example's own scenario at the oldest and the newest minor: its args file (mode
    Least) packs pods onto the smallest node that fits, against the default scheduler's
    preference for free room; the plugin's share of the score is in the log."""
    project = weighted_fit(kplugin, tmp_path, version)
    run = kplugin("e2e", str(project), "--scenario", str(WEIGHTED_SCENARIO), "--json")
    assert run.code == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["ok"] and result["kubernetes"].startswith(version)
    pods = {p["pod"]: p for p in result["pods"]}
    assert {name: p["node"] for name, p in pods.items()} == {"web-1": "small", "web-2": "small", "batch-1": "medium"}
    plugin_scores = {s["node"]: s["plugins"]["WeightedFit"] for s in pods["web-1"]["scores"]}
    assert plugin_scores == {"small": 100, "medium": 66, "large": 0}
    if version == OLDEST:
        # the other mode, through --args (decoded by the plugin's own Go code first)
        most = tmp_path / "most.yaml"
        most.write_text(WEIGHTED_SCENARIO.read_text().split("expect:")[0] + "expect: {web-1: large}\n")
        run = kplugin("e2e", str(project), "--scenario", str(most), "--args", str(EXAMPLES / "weighted-fit-most.yaml"))
        assert run.code == 0, run.stderr
        # args the plugin's decoder refuses stop e2e before anything is built or started
        bad = tmp_path / "bad.yaml"
        bad.write_text("mode: Sideways\n")
        run = kplugin("e2e", str(project), "--scenario", str(most), "--args", str(bad))
        assert run.code == 2, run.stderr
        # one line: the args decoder built for the run before is found again, not rebuilt
        # (a parallel run's pruning of the cache once made it print its build's progress)
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1, run.stderr
        assert 'mode: Unsupported value: "Sideways"' in lines[0] and str(bad) in lines[0]
