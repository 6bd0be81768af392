"""kplugin bench without a cluster: the workload format and its limits, the figures as
scheduler_perf computes them, the DataItems JSON, the report, the kubeconfig reader
and the command line's checks (each bad input is exit 2 and one line, before anything
is built or started). The runs against a real control plane and a real scheduler are
in test_integration_bench."""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from support import Kplugin

from kplugin.bench import decode, metrics, plan, report, results, workload
from kplugin.bench.loadgen import CreationStats
from kplugin.bench.ops import CreateNodes, CreatePods
from kplugin.bench.outcome import BenchOutcome, QueueFacts, RunResult
from kplugin.bench.plan import BASELINE, PROJECT, Settings
from kplugin.bench.shaped import ArgsShape, plugin_workload, shape_of
from kplugin.bench.templates import TemplateFiles
from kplugin.core.errors import UsageError
from kplugin.kube.apiclient import query

BASIC = """\
- name: SchedulingBasic
  defaultPodTemplatePath: pod.yaml
  workloadTemplate:
  - opcode: createNodes
    countParam: $initNodes
  - opcode: createPods
    countParam: $initPods
  - opcode: createPods
    countParam: $measurePods
    collectMetrics: true
  workloads:
  - name: 500Nodes
    params: {initNodes: 500, initPods: 500, measurePods: 1000}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
spec:
  containers:
  - image: registry.k8s.io/pause:3.9
    name: pause
"""


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "perf.yaml").write_text(BASIC)
    (tmp_path / "pod.yaml").write_text(POD)
    return tmp_path


@pytest.fixture
def project(kplugin: Kplugin, tmp_path: Path) -> Path:
    run = kplugin("new", "gpu", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path / "p"))
    assert run.code == 0, run.stderr
    return tmp_path / "p" / "gpu"


# --- the workload format ----------------------------------------------------------------


def test_basic_is_scheduler_perfs_scheduling_basic() -> None:
    basic = workload.built_in("basic")
    assert basic.title == "SchedulingBasic/5000Nodes"
    assert [op.opcode for op in basic.ops] == ["createNodes", "createPods", "createPods"]
    assert (basic.nodes, basic.pods, basic.measured_pods) == (5000, 2000, 1000)
    nodes = basic.ops[0]
    assert isinstance(nodes, CreateNodes)
    assert nodes.template["status"]["capacity"] == {"pods": "110", "cpu": "4", "memory": "32Gi"}
    init, measured = basic.ops[1], basic.ops[2]
    assert isinstance(init, CreatePods) and isinstance(measured, CreatePods)
    # createPods' default namespace is namespace-<op index>, as scheduler_perf names it
    assert (init.namespace, measured.namespace, measured.collect_metrics) == ("namespace-1", "namespace-2", True)
    resources = measured.template["spec"]["containers"][0]["resources"]
    assert resources["requests"] == {"cpu": "100m", "memory": "500Mi"}


def test_mixed_and_gang_use_every_supported_op() -> None:
    mixed = workload.built_in("mixed")
    gang = workload.built_in("gang")
    assert {op.opcode for op in (*mixed.ops, *gang.ops)} == set(workload.SUPPORTED)
    measured = mixed.measured[0]
    assert measured.template["spec"]["topologySpreadConstraints"][0]["topologyKey"] == "topology.kubernetes.io/zone"
    assert "podAffinity" in measured.template["spec"]["affinity"]
    nodes = mixed.ops[0]
    assert isinstance(nodes, CreateNodes) and nodes.strategy is not None
    assert nodes.strategy.label_values == ("zone-a", "zone-b", "zone-c")


def test_counts_scale_keeping_the_workloads_proportions() -> None:
    small = workload.built_in("basic").scaled(200, 300)
    assert small.title == "SchedulingBasic/200Nodes_300Pods"
    assert [getattr(op, "count", None) for op in small.ops] == [200, 300, 300]
    shaped = plugin_workload({"Gpu": {"nodeLabel": "", "resourceName": "cpu"}}, ("Gpu",)).scaled(101, None)
    assert [op.count for op in shaped.cluster_nodes] == [51, 25, 25]  # 2:1:1, adding up to 101


def test_a_file_with_templates_next_to_it(files: Path) -> None:
    loaded = workload.load(files / "perf.yaml")
    assert loaded.title == "SchedulingBasic/500Nodes" and loaded.measured_pods == 1000
    assert loaded.measured[0].template["metadata"]["generateName"] == "pod-"


def test_keys_match_without_regard_to_case_as_in_scheduler_perf(files: Path) -> None:
    (files / "perf.yaml").write_text(BASIC.replace("countParam", "CountParam").replace("opcode:", "Opcode:"))
    assert workload.load(files / "perf.yaml").nodes == 500


def test_the_plugin_workload_is_shaped_by_the_args() -> None:
    args = {"Gpu": {"nodeLabel": "example.com/accelerator", "resourceName": "example.com/gpu"}}
    shaped = plugin_workload(args, ("Gpu",))
    large, small, plain = shaped.cluster_nodes
    assert large.template["metadata"]["labels"]["example.com/accelerator"] == "true"
    assert large.template["status"]["capacity"]["example.com/gpu"] == "16"
    assert small.template["status"]["capacity"]["example.com/gpu"] == "4"
    assert "example.com/accelerator" not in plain.template["metadata"]["labels"]
    assert "example.com/gpu" not in plain.template["status"]["capacity"]
    container = shaped.measured[0].template["spec"]["containers"][0]
    assert container["resources"]["requests"]["example.com/gpu"] == "1"
    assert container["resources"]["limits"]["example.com/gpu"] == "1"
    assert "label example.com/accelerator, resource example.com/gpu" in shaped.notices[0]
    # a list of resources (WeightedFit's args): the nodes' cpu and memory differ by group
    weighted = shape_of({"WeightedFit": {"mode": "Least", "resources": [{"name": "cpu"}, {"name": "memory"}]}})
    assert weighted == ArgsShape(labels=(), resources=("cpu", "memory"))
    assert "name no label or resource" in plugin_workload({}, ("Sort",)).notices[0]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("opcode: barrier", "opcode: createAny"),
            "workloadTemplate[3]: opcode createAny is not supported by kplugin bench (supported: createNodes, "
            "createNamespaces, createPods, createPodGroups, barrier, churn, sleep)",
        ),
        (
            ("opcode: barrier", "opcode: teleportPods"),
            "workloadTemplate[3]: opcode 'teleportPods' is not a scheduler_perf op",
        ),
        (
            ("initNodes: 500", "initNodes: -5"),
            "workloadTemplate[0] (createNodes).countParam ($initNodes): -5 is negative",
        ),
        (
            ("initNodes: 500", "initNodes: 1000000000"),
            "workloadTemplate[0] (createNodes).countParam ($initNodes): 1000000000 nodes is more than 50000, "
            "the most kplugin bench creates",
        ),
        (("initNodes: 500", "initNodes: lots"), "countParam ($initNodes): must be a whole number, not a string 'lots'"),
        (("$measurePods", "$missing"), "$missing is not a param of workload SchedulingBasic/500Nodes"),
        (("defaultPodTemplatePath: pod.yaml", "defaultPodTemplatePath: gone.yaml"), "template 'gone.yaml' not found"),
        (("collectMetrics: true", "collectMetrics: true\n    steadyState: true"), "steadyState: is not supported"),
        (("collectMetrics: true", "collectMetrics: false"), "no pods are measured"),
        (("collectMetrics: true", "colectMetrics: true"), "unknown key 'colectMetrics'"),
        (("workloads:", "workloads: [unclosed"), "is not valid YAML"),
    ],
)
def test_bad_workloads_are_one_line_naming_the_problem(files: Path, change: tuple[str, str], message: str) -> None:
    text = BASIC.replace("  workloads:", "  - opcode: barrier\n  workloads:").replace(*change)
    (files / "perf.yaml").write_text(text)
    with pytest.raises(UsageError) as failure:
        workload.load(files / "perf.yaml")
    assert message in str(failure.value)
    assert str(files / "perf.yaml") in str(failure.value)
    assert "\n" not in str(failure.value)


def test_templates_must_be_plain_objects_of_their_kind(files: Path) -> None:
    (files / "pod.yaml").write_text(POD.replace("kind: Pod", "kind: Service"))
    with pytest.raises(UsageError, match=r"template pod\.yaml is a Service; expected Pod"):
        workload.load(files / "perf.yaml")
    (files / "pod.yaml").write_text(POD.replace("generateName: pod-", "generateName: pod-{{.Index}}-"))
    with pytest.raises(UsageError, match="Go template syntax"):
        workload.load(files / "perf.yaml")
    (files / "pod.yaml").write_text(POD + "  nodeName: node-1\n")
    with pytest.raises(UsageError, match=r"sets spec\.nodeName"):
        workload.load(files / "perf.yaml")
    (files / "pod.yaml").write_text("a: &x [1]\nb: *x\n")
    with pytest.raises(UsageError, match="anchors and aliases"):
        workload.load(files / "perf.yaml")


@pytest.mark.parametrize("secret", ["token-4f9a-secret", "- token-4f9a-secret"])
@pytest.mark.parametrize("reach", ["symlink", "dotdot"])
def test_a_template_that_is_no_object_is_refused_without_its_content(
    files: Path, tmp_path_factory: pytest.TempPathFactory, secret: str, reach: str
) -> None:
    """A workload may name any file (scheduler_perf's own reach their templates through
    '..'): a file that is no Kubernetes object is refused by its kind, and nothing of
    what it holds reaches the message (a CI log)."""
    outside = tmp_path_factory.mktemp("elsewhere") / "credentials"
    outside.write_text(secret + "\n")
    if reach == "symlink":
        (files / "pod.yaml").unlink()
        (files / "pod.yaml").symlink_to(outside)
        named = "pod.yaml"
    else:
        named = os.path.relpath(outside, files)
        (files / "perf.yaml").write_text(BASIC.replace("TemplatePath: pod.yaml", f"TemplatePath: {named}"))
    kind = "a list" if secret.startswith("- ") else "a string"
    with pytest.raises(UsageError) as failure:
        workload.load(files / "perf.yaml")
    assert f"template {named} must be one Kubernetes object, not {kind}" in str(failure.value)
    assert "4f9a" not in str(failure.value)
    # the Go-template reader of pod groups' pods checks alike
    templates = TemplateFiles(files, lambda where, problem: UsageError(f"{where}: {problem}"))
    with pytest.raises(UsageError) as failure:
        templates.read_object(named, "createPods", "Pod", frozenset())
    assert f"not {kind}" in str(failure.value) and "4f9a" not in str(failure.value)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("kind: token-4f9a-secret\n", "template pod.yaml is a document without a Kubernetes kind; expected Pod"),
        ("kind: Service\n", "template pod.yaml is a Service; expected Pod"),
        ("kind: Pod\napiVersion: token-4f9a\n", "template pod.yaml: apiVersion that is no API version; expected v1"),
        ("kind: Pod\napiVersion: apps/v1\n", "template pod.yaml: apiVersion 'apps/v1'; expected v1"),
    ],
)
def test_a_templates_kind_and_api_version_are_quoted_only_when_they_look_like_one(
    files: Path, document: str, message: str
) -> None:
    (files / "pod.yaml").write_text(document)
    with pytest.raises(UsageError) as failure:
        workload.load(files / "perf.yaml")
    assert message in str(failure.value)
    assert "4f9a" not in str(failure.value)


def test_a_file_of_several_workloads_needs_case(files: Path) -> None:
    (files / "perf.yaml").write_text(
        BASIC + "  - name: 5000Nodes\n    params: {initNodes: 5000, initPods: 1, measurePods: 2}\n"
    )
    with pytest.raises(UsageError, match=r"has 2 workloads; choose one with workload case: SchedulingBasic/500Nodes, "):
        workload.load(files / "perf.yaml")
    assert workload.load(files / "perf.yaml", "SchedulingBasic/5000Nodes").nodes == 5000
    with pytest.raises(UsageError, match="workload case 'Nope/x': no such workload"):
        workload.load(files / "perf.yaml", "Nope/x")


def test_durations_are_go_durations() -> None:
    fail = decode.Fail("f")
    assert decode.parse_duration("1m30s", "d", fail) == 90
    assert decode.parse_duration("250ms", "d", fail) == 0.25
    with pytest.raises(UsageError, match="is not a duration"):
        decode.parse_duration("soon", "d", fail)
    with pytest.raises(UsageError, match="longer than 3600s"):
        decode.parse_duration("2h", "d", fail)


# --- the figures -----------------------------------------------------------------------------


def test_throughput_is_sampled_as_scheduler_perf_samples_it() -> None:
    sampler = metrics.ThroughputSampler()
    sampler.tick(1.0, 0)  # nothing bound yet: ignored
    sampler.tick(2.0, 50)  # the first tick with pods: only the start
    sampler.tick(3.0, 150)  # 100 in 1 s
    sampler.tick(4.0, 150)  # nothing: merged into the next
    sampler.tick(5.0, 350)  # 200 over 2 s: 100/s, recorded twice
    sampler.tick(6.1, 360)  # 10 over 1.1 s
    assert sampler.samples == [100.0, 100.0, 100.0, pytest.approx(10 / 1.1)]
    summary = metrics.throughput_summary(sampler.samples)
    assert summary.average == pytest.approx((300 + 10 / 1.1) / 4)
    # nearest rank: ceil(n * p / 100) - 1 of the ascending samples
    assert (summary.perc50, summary.perc90, summary.perc99) == (100.0, 100.0, 100.0)
    assert metrics.throughput_summary([5.0, 1.0, 3.0, 2.0, 4.0]).perc50 == 3.0


def test_histogram_quantiles_are_prometheus_bucket_quantiles() -> None:
    # 10 in (0, 1], 10 in (1, 2], 0 in (2, 4], 5 beyond
    h = metrics.Histogram((1.0, 2.0, 4.0, math.inf), (10.0, 20.0, 20.0, 25.0), total=40.0, count=25.0)
    assert h.quantile(0.2) == pytest.approx(0.5)  # the first bucket interpolates from 0
    assert h.quantile(0.6) == pytest.approx(1.5)
    assert h.quantile(0.99) == 4.0  # in the +Inf bucket: the last finite bound
    assert metrics.latency_summary(h).average == pytest.approx(1600.0)  # ms
    earlier = metrics.Histogram((1.0, 2.0, 4.0, math.inf), (10.0, 10.0, 10.0, 10.0), total=5.0, count=10.0)
    later = h - earlier
    assert later.counts == (0.0, 10.0, 10.0, 15.0) and later.count == 15.0


def test_metrics_text_is_parsed_and_summed_over_other_labels() -> None:
    text = """\
# HELP scheduler_plugin_execution_duration_seconds [ALPHA] Duration
# TYPE scheduler_plugin_execution_duration_seconds histogram
scheduler_plugin_execution_duration_seconds_bucket{extension_point="Filter",plugin="Gpu",status="Success",le="1e-05"} 3
scheduler_plugin_execution_duration_seconds_bucket{extension_point="Filter",plugin="Gpu",status="Success",le="+Inf"} 4
scheduler_plugin_execution_duration_seconds_bucket{extension_point="Filter",plugin="Gpu",status="Unsched",le="1e-05"} 1
scheduler_plugin_execution_duration_seconds_bucket{extension_point="Filter",plugin="Gpu",status="Unsched",le="+Inf"} 1
scheduler_plugin_execution_duration_seconds_sum{extension_point="Filter",plugin="Gpu",status="Success"} 0.5
scheduler_plugin_execution_duration_seconds_count{extension_point="Filter",plugin="Gpu",status="Success"} 4
scheduler_plugin_execution_duration_seconds_sum{extension_point="Filter",plugin="Gpu",status="Unsched"} 0.25
scheduler_plugin_execution_duration_seconds_count{extension_point="Filter",plugin="Gpu",status="Unsched"} 1
scheduler_pending_pods{queue="active"} 7
scheduler_pending_pods{queue="backoff"} 2
go_goroutines 12
"""
    samples = metrics.parse(text)
    assert all(s.name.startswith("scheduler_") for s in samples)
    found = metrics.histograms(
        samples, "scheduler_plugin_execution_duration_seconds", ("plugin", "extension_point"), {}
    )
    (key, h) = next(iter(found.items()))
    assert dict(key) == {"plugin": "Gpu", "extension_point": "Filter"}
    assert (h.counts, h.count, h.total) == ((4.0, 5.0), 5.0, 0.75)
    assert metrics.value(samples, "scheduler_pending_pods", {"queue": "active"}) == 7
    escaped = metrics.parse('scheduler_x{a="say \\"hi\\"",b="c"} 1\n')
    assert dict(escaped[0].labels) == {"a": 'say "hi"', "b": "c"}


# --- results, DataItems and the report ------------------------------------------------------

BOUNDS = (0.001, 0.002, 0.004, 0.008, math.inf)


def _hist(counts: tuple[float, ...], total: float) -> metrics.Histogram:
    return metrics.Histogram(BOUNDS, counts, total, counts[-1])


def _run(profile: str, repeat: int, rate: float, plugin: bool = False) -> RunResult:
    return RunResult(
        profile=profile,
        scheduler_name="gpu" if profile == PROJECT else "gpu-baseline",
        repeat=repeat,
        measured_pods=1000,
        samples=(rate, rate * 1.1, rate * 0.9),
        points=((1.0, rate), (2.0, rate * 1.1), (3.0, rate * 0.9)),
        sampled=True,
        seconds=4.0,
        creation=CreationStats(objects=1000, created=1000, seconds=2.0),
        queue=QueueFacts(ticks=2, dry_ticks=0, min_active=12.0, min_backlog=40),
        attempts=_hist((100.0, 600.0, 900.0, 1000.0, 1000.0), 2.5),
        e2e=_hist((0.0, 100.0, 500.0, 1000.0, 1000.0), 5.0),
        e2e_metric="scheduler_pod_scheduling_sli_duration_seconds",
        extension_points={"Filter": _hist((500.0, 900.0, 1000.0, 1000.0, 1000.0), 1.2)},
        plugins={("Gpu", "Filter"): _hist((90.0, 100.0, 100.0, 100.0, 100.0), 0.05)} if plugin else {},
        attempts_total={"scheduled": 1000.0, "unschedulable": 0.0, "error": 0.0},
        cpu_seconds=2.0 if profile == BASELINE else 3.0,
        peak_rss=100 * 2**20,
        apiserver_cpu=4.0,
        loadgen_cpu=0.8,
        load_average=(1.0, 1.2),
    )


def outcome(baseline_rate: float = 200.0, project_rate: float = 150.0) -> BenchOutcome:
    return BenchOutcome(
        kubernetes="1.28.3",
        project="gpu",
        plugins=("Gpu",),
        workload=workload.built_in("basic").scaled(200, 1000),
        mode="local control plane",
        settings=Settings(repeat=2),
        runs=(
            _run(BASELINE, 1, baseline_rate),
            _run(PROJECT, 1, project_rate, plugin=True),
            _run(PROJECT, 2, project_rate, plugin=True),
            _run(BASELINE, 2, baseline_rate),
        ),
        nodes=CreationStats(objects=200, created=200, seconds=0.5),
        scheduler_names={BASELINE: "gpu-baseline", PROJECT: "gpu"},
        seconds=30.0,
    )


def test_data_items_have_scheduler_perfs_shape() -> None:
    document = results.as_json(outcome(), results.Thresholds(throughput=0.9))
    assert document["version"] == "v1"
    items = document["dataItems"]
    for item in items:
        assert set(item) == {"data", "unit", "labels"}
        assert all(isinstance(v, float | int) for v in item["data"].values())
    # every item carries the union of the labels; those that do not apply say so
    keys = {tuple(sorted(item["labels"])) for item in items}
    assert keys == {("Metric", "Name", "Profile", "extension_point", "plugin", "result")}
    throughput = {i["labels"]["Profile"]: i for i in items if i["labels"]["Metric"] == "SchedulingThroughput"}
    assert throughput["baseline"]["unit"] == "pods/s"
    assert throughput["baseline"]["labels"]["Name"] == "SchedulingBasic/200Nodes_1000Pods/namespace-2"
    assert set(throughput["project"]["data"]) == {"Average", "Perc50", "Perc90", "Perc95", "Perc99"}
    assert throughput["ratio"]["data"]["Average"] == pytest.approx(0.75)
    plugin = [i for i in items if i["labels"]["Metric"] == "scheduler_plugin_execution_duration_seconds"]
    assert [(i["labels"]["plugin"], i["labels"]["extension_point"], i["unit"]) for i in plugin] == [
        ("Gpu", "Filter", "ms")
    ]
    cpu = {i["labels"]["Profile"]: i["data"] for i in items if i["labels"]["Metric"] == "SchedulerCPUSeconds"}
    assert cpu["ratio"]["Total"] == pytest.approx(1.5)
    facts = document["kplugin"]
    assert facts["settings"]["order"] == ["baseline", "project", "project", "baseline"]
    assert facts["settings"]["schedulerQPS"] == 5000.0 and facts["settings"]["loadGeneratorWorkers"] == 30
    assert facts["throughputRatio"] == pytest.approx(0.75) and facts["threshold"] == 0.9
    assert facts["runs"][0]["queue"] == {
        "ranDry": False,
        "ticksWhileCreating": 2,
        "ticksEmpty": 0,
        "minActiveQueue": 12.0,
        "minBacklog": 40,
    }
    json.dumps(document, allow_nan=False)  # no NaN reaches the JSON


def test_repeats_are_pooled() -> None:
    figures = results.figures(outcome(), PROJECT)
    assert figures.runs == 2 and figures.throughput.count == 6
    assert figures.attempts.count == 2000  # both runs' histograms summed
    assert figures.cpu_per_pod_ms == pytest.approx(3.0)


def test_report_draws_both_profiles_and_the_plugins_points() -> None:
    result = outcome()
    svg = report.render(result, ".svg")
    assert svg.startswith("<svg") and svg.count("<polyline") == 4  # one line per run
    assert svg.count('stroke="#4c78a8"') == 2 and svg.count('stroke="#e45756"') == 2
    assert "Gpu Filter" in svg and "µs per call" in svg
    assert svg == report.render(outcome(), ".svg")  # the same results, the same bytes
    html = report.render(result, ".html")
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and "throughput average (pods/s)" in html
    assert "the scheduler&#x27;s queue never ran dry" in html


def test_cpu_profiles_are_tabled_in_json_and_drawn_in_the_report() -> None:
    from kplugin.bench.cpuprofile import CpuProfile, shares

    fw = "k8s.io/kubernetes/pkg/scheduler/framework/runtime.(*frameworkImpl)"
    own = "example.com/gpu/pkg/gpu.(*Gpu)"
    base_stacks = {
        (f"{fw}.RunFilterPlugins", "runtime.mallocgc"): 3_000_000_000,
        ("runtime.gcBgMarkWorker", "runtime.scanobject"): 1_000_000_000,
    }
    proj_stacks = {
        (f"{fw}.RunFilterPlugins", f"{own}.Filter"): 1_000_000_000,
        (f"{fw}.RunFilterPlugins", f"{own}.Filter", "runtime.mallocgc"): 3_000_000_000,
        (f"{fw}.RunScorePlugins", f"{own}.Score"): 2_000_000_000,
        (f"{fw}.RunScorePlugins", "runtime.memmove"): 2_000_000_000,
    }
    profiles = tuple(
        CpuProfile(kind, Path(f"/p/{kind}.pb.gz"), (), stacks, shares(stacks, "example.com/gpu"))
        for kind, stacks in ((BASELINE, base_stacks), (PROJECT, proj_stacks))
    )
    done = replace(outcome(), cpu_profiles=profiles, module="example.com/gpu")
    rows = results.profile_rows(done)
    assert rows[:5] == [
        ("CPU sampled (s)", "4.00", "8.00"),
        ("CPU sampled per measured pod (ms)", "2.00", "4.00"),  # 2 runs of 1000 measured pods each
        ("Go garbage collector, background (s)", "1.00", "0.00"),
        ("the project's packages, cumulative", "0.0%", "75.0%"),
        ("the project's packages, flat", "0.0%", "37.5%"),
    ]
    assert rows[5:] == [
        ("  called at Filter", "0.0%", "50.0%"),
        ("  called at Score", "0.0%", "25.0%"),
        ("  flat: gpu.(*Gpu).Score", "-", "25.0%"),
        ("  flat: gpu.(*Gpu).Filter", "-", "12.5%"),
    ]
    facts = results.as_json(done)["kplugin"]["cpuProfiles"]
    assert facts[PROJECT]["projectByExtensionPoint"] == {"Filter": 4.0, "Score": 2.0}
    assert (facts[PROJECT]["projectCumulativeShare"], facts[BASELINE]["projectCumulativeShare"]) == (0.75, 0.0)
    assert facts[PROJECT]["file"] == "/p/project.pb.gz"
    page = report.render(done, ".html")
    assert page.count('<figure class="flame"><svg') == 2
    assert "Where the scheduler's CPU went" in page and "called at Filter" in page
    assert "Where the scheduler's CPU went" not in report.render(outcome(), ".html")


def test_the_machines_load_is_told() -> None:
    lines = results.harness_lines(replace(outcome(), cpus=2))
    project = [line for line in lines if line.startswith("project: pods created")]
    assert len(project) == 1
    assert project[0].endswith("; machine load (1-minute average, 2 CPUs) 1.0 to 1.2, 1.0 to 1.2"), project[0]
    assert results.as_json(outcome())["kplugin"]["runs"][0]["machineLoadAverage"] == [1.0, 1.2]


def test_pods_placed_by_batching_are_told() -> None:
    """From 1.35 pods that sign alike may take their node from an earlier pod's cycle:
    told (their Filter and Score did not run) when any did, and carried in the JSON."""
    result = outcome()
    runs = [replace(r, batch={"hint_used": 0.0, "hint_not_used": 0.0, "no_hint": 1000.0}) for r in result.runs]
    assert not [line for line in results.harness_lines(replace(result, runs=tuple(runs))) if "earlier pod" in line]
    runs[1] = replace(runs[1], batch={"hint_used": 900.0, "hint_not_used": 10.0, "no_hint": 90.0})
    lines = results.harness_lines(replace(result, runs=tuple(runs)))
    assert [line for line in lines if "earlier pod" in line] == [
        "project: 900 of 2000 pods took their node from an earlier pod's cycle (batching of pods that sign "
        "alike): Filter and Score ran in the other cycles only, and the plugins' durations are sampled from those"
    ]
    facts = results.as_json(replace(result, runs=tuple(runs)))["kplugin"]["runs"]
    assert facts[1]["batchAttempts"] == {"hint_not_used": 10.0, "hint_used": 900.0, "no_hint": 90.0}


def test_a_dry_queue_is_told() -> None:
    result = outcome()
    runs = list(result.runs)
    runs[1] = replace(runs[1], queue=QueueFacts(ticks=3, dry_ticks=2, min_active=0.0, min_backlog=0))
    lines = results.harness_lines(replace(result, runs=tuple(runs)))
    assert any(
        "project: " in line and "ran dry in 1 of 2 run(s): the load generator limited it" in line for line in lines
    )


# --- the kubeconfig ----------------------------------------------------------------------------


KUBECONFIG = """\
apiVersion: v1
kind: Config
current-context: kwok
contexts:
- {name: kwok, context: {cluster: c, user: u}}
- {name: other, context: {cluster: c, user: t}}
clusters:
- {name: c, cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: "Y2E="}}
users:
- {name: u, user: {client-certificate-data: "Y2VydA==", client-key-data: "a2V5"}}
- {name: t, user: {token: secret}}
"""


def test_kubeconfig_inline_certificates_and_contexts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """kplugin bench reads --kubeconfig as kplugin e2e and snapshot do (one reader):
    inline certificates and keys pass through files only their owner can read, --context
    picks a context, and the scheduler is given that context alone."""
    import ssl

    from kplugin.kube import apiclient, kubeconfig

    seen: dict[str, tuple[bytes, int]] = {}

    def capture(endpoint: apiclient.Endpoint) -> ssl.SSLContext:  # the files exist while TLS loads them
        for name in ("cert_file", "key_file"):
            path = getattr(endpoint, name)
            if path is not None:
                seen[name] = (Path(path).read_bytes(), stat.S_IMODE(os.stat(path).st_mode))
        return ssl.create_default_context()

    monkeypatch.setattr(apiclient.Endpoint, "ssl_context", capture)
    config = tmp_path / "config"
    config.write_text(KUBECONFIG)
    endpoint = kubeconfig.endpoint(kubeconfig.load(config))
    assert endpoint.server == "https://127.0.0.1:6443" and endpoint.token is None and endpoint.ca_data == b"ca"
    assert seen == {"cert_file": (b"cert", 0o600), "key_file": (b"key", 0o600)}
    other = kubeconfig.load(config, "other")
    assert kubeconfig.endpoint(other).token == "secret"
    narrowed = other.write_narrowed(tmp_path / "scheduler.kubeconfig")
    assert stat.S_IMODE(os.stat(narrowed).st_mode) == 0o600
    assert "current-context: other" in narrowed.read_text() and "Y2VydA==" not in narrowed.read_text()
    config.write_text(KUBECONFIG.replace("{token: secret}", "{auth-provider: {name: gcp}}"))
    with pytest.raises(UsageError, match="authenticates with auth-provider, which kplugin does not support"):
        kubeconfig.load(config, "other")
    config.write_text("apiVersion: v1\nkind: Config\n")
    with pytest.raises(UsageError, match="no current-context; choose one with kubeconfig context"):
        kubeconfig.load(config)


def test_query_parameters_are_the_apis_camel_case() -> None:
    assert query("/api/v1/pods", label_selector="a=b", grace_period_seconds=0) == (
        "/api/v1/pods?labelSelector=a%3Db&gracePeriodSeconds=0"
    )
    assert query("/api/v1/pods?watch=1", limit=1) == "/api/v1/pods?watch=1&limit=1"


# --- the command line ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--nodes", "1000000000"], "--nodes 1000000000: more than 50000 nodes, the most kplugin bench creates"),
        (["--nodes", "-3"], "--nodes -3: must be at least 1"),
        (["--pods", "0"], "--pods 0: must be at least 1"),
        (["--repeat", "0"], "--repeat 0: must be from 1 to 20"),
        (["--threshold", "-1"], "--threshold -1: give a ratio above 0"),
        (["--threshold", "cpu=0"], "--threshold cpu=0: give a ratio above 0"),
        (["--threshold", "memory=2"], "--threshold memory=2: give RATIO, throughput=RATIO or cpu=RATIO"),
        (["--threshold", "cpu=fast"], "--threshold cpu=fast: 'fast' is not a number"),
        (["--threshold", "0.9", "--threshold", "throughput=0.8"], "the throughput threshold is given twice"),
        (["--workload", "nonesuch"], "--workload 'nonesuch': no such built-in workload (basic, plugin, mixed, gang)"),
        # pod groups at 1.28: refused before the plugins' args are read (a build), in one line
        (["--workload", "gang"], "pod groups are from Kubernetes 1.36 (scheduling.k8s.io), and this is 1.28.3"),
        (["--workload", "gang", "--pods", "10"], "--pods: workload GangScheduling/500Nodes_200Gangs_600Pods creates"),
        (["--workload", "missing.yaml"], "--workload missing.yaml: no such file"),
        (["--report", "out.png"], "--report out.png: write .html (the pictures and the tables) or .svg"),
        (["--workload", "basic", "--case", "A/b"], "--case is for a workload file"),
        (["--context", "kwok"], "--context picks a context of --kubeconfig; give --kubeconfig too"),
        (["--cpu-profile", "."], "--cpu-profile . is not empty; give a new or empty directory"),
        (["--cpu-profile", "gpu/kplugin.yaml"], "--cpu-profile gpu/kplugin.yaml is a file; give a new or empty"),
        (["--cpu-profile", "none/profiles"], "--cpu-profile none/profiles: directory "),
    ],
)
def test_bad_input_is_exit_2_and_one_line(
    kplugin: Kplugin, project: Path, args: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project.parent)
    run = kplugin("bench", str(project), *args)
    assert run.code == 2, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert message in line, line


def test_bad_workload_files_are_exit_2_before_anything_is_built(
    kplugin: Kplugin, project: Path, files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kplugin.builder import ready

    def no_build(*_: Any, **__: Any) -> Any:
        raise AssertionError("built")

    def no_copy(*_: Any, **__: Any) -> Any:
        raise AssertionError("copied for --k8s")

    monkeypatch.setattr(ready, "build", no_build)
    monkeypatch.setattr(ready, "_retargeted", no_copy)
    for text, message in (
        (BASIC.replace("countParam: $initPods", "countParam: $initPods\n  - opcode: createAny"), "opcode createAny"),
        (
            BASIC.replace("defaultPodTemplatePath: pod.yaml", "defaultPodTemplatePath: none.yaml"),
            "'none.yaml' not found",
        ),
        (BASIC.replace("initNodes: 500,", "initNodes: 1000000000,"), "1000000000 nodes is more than 50000"),
        (BASIC.replace("initNodes: 500,", "initNodes: -1,"), "-1 is negative"),
        ("- name: [unclosed\n", "is not valid YAML"),
    ):
        (files / "perf.yaml").write_text(text)
        for other in ([], ["--k8s", "1.37"]):  # another version: refused before its copy is made
            run = kplugin("bench", str(project), "--workload", str(files / "perf.yaml"), *other)
            assert run.code == 2, run.stderr
            (line,) = run.stderr.strip().splitlines()
            assert message in line, line


def test_threshold_json_and_report_from_a_run(
    kplugin: Kplugin, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command's wiring, with the run itself replaced (the integration tests run it
    for real): --json prints DataItems, --report writes the file, --threshold decides the
    exit code."""
    from kplugin.bench import job
    from kplugin.builder import ready
    from kplugin.kube import controlplane

    built = SimpleNamespace(binaries=[SimpleNamespace(path=str(tmp_path / "kube-scheduler"))])
    monkeypatch.setattr(ready, "build", lambda *_, **__: built)
    monkeypatch.setattr(job, "check_config", lambda *_: None)
    monkeypatch.setattr(controlplane, "apiserver_binary", lambda *_: tmp_path / "kube-apiserver")
    monkeypatch.setattr(controlplane, "etcd_binary", lambda: "/usr/bin/etcd")
    monkeypatch.setattr(job, "prepare", lambda project, *_, **__: _inputs(project.root))
    monkeypatch.setattr(job, "run_pairs", lambda *_: outcome(200.0, 150.0))
    html = tmp_path / "bench.html"
    run = kplugin("bench", str(project), "--json", "--report", str(html), "--threshold", "0.7")
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout)["kplugin"]["throughputRatio"] == pytest.approx(0.75)
    assert html.read_text().startswith("<!DOCTYPE html>")
    run = kplugin("bench", str(project), "--threshold", "0.9")
    assert run.code == 1
    assert run.stderr.strip().splitlines()[-1] == (
        "kplugin: error: --threshold: throughput ratio 0.750 is below the threshold 0.9: the project's plugins cost "
        "25% of the baseline's throughput"
    )
    assert "throughput average (pods/s)" in run.stdout
    # CPU per pod: 3.0 ms against 2.0 ms, a ratio of 1.5
    run = kplugin("bench", str(project), "--json", "--threshold", "throughput=0.7", "--threshold", "cpu=1.6")
    assert run.code == 0, run.stderr
    facts = json.loads(run.stdout)["kplugin"]
    assert (facts["cpuRatio"], facts["threshold"], facts["cpuThreshold"]) == (1.5, 0.7, 1.6)
    run = kplugin("bench", str(project), "--threshold", "cpu=1.2")
    assert run.code == 1
    assert run.stderr.strip().splitlines()[-1] == (
        "kplugin: error: --threshold: scheduler CPU per pod ratio 1.500 is above the cpu threshold 1.2: the "
        "project's scheduler spent 1.50x the baseline's CPU per pod"
    )


def _inputs(project_dir: Path) -> Any:
    from kplugin.model import project as projects
    from kplugin.model.schedconfig import SchedulerConfig

    project = projects.load(project_dir)
    config = SchedulerConfig(scheduler_names=("gpu",), plugins=project.plugins, leader_elect=False)
    return plan.BenchInputs(
        project=project,
        workload=workload.built_in("basic").scaled(200, 1000),
        profiles=plan.profiles(config, project),
        plugins=("Gpu",),
    )


def test_the_baseline_profile_leaves_the_projects_plugins_out(project: Path) -> None:
    inputs = _inputs(project)
    baseline, mine = inputs.profiles
    settings = Settings()
    document = plan.scheduler_document(baseline, Path("/k"), settings)
    assert document["profiles"] == [{"schedulerName": "gpu-baseline", "plugins": {}}]
    assert document["clientConnection"] == {"kubeconfig": "/k", "qps": 5000.0, "burst": 5000}
    assert document["leaderElection"] == {"leaderElect": False}
    assert "percentageOfNodesToScore" not in document  # adaptive, as scheduler_perf runs it
    ours = plan.scheduler_document(mine, Path("/k"), settings)["profiles"][0]
    assert ours["schedulerName"] == "gpu" and ours["plugins"]["filter"]["enabled"] == [{"name": "Gpu"}]
