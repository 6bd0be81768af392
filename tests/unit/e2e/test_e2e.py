"""kplugin e2e without a control plane: the scenario file, the input checks that run
before anything is built or started, and reading scores from the scheduler's log. The
runs against a real etcd, kube-apiserver and the project's scheduler are in
test_integration_e2e."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import Kplugin

from kplugin import e2e

GOOD = """\
nodes:
- name: gpu-big
  labels: {example.com/accelerator: "true"}
  capacity: {example.com/gpu: 4, cpu: "16"}
- name: cpu-only
pods:
- name: train-1
  requests: {example.com/gpu: "1", cpu: 500m}
- name: web-1
  nodeSelector: {example.com/pool: cpu}
  annotations: {example.com/hold: "false"}
expect:
  train-1: gpu-big
  web-1: pending
"""


@pytest.fixture
def project(kplugin: Kplugin, tmp_path: Path) -> Path:
    run = kplugin("new", "gpu", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    return tmp_path / "gpu"


def test_scenario_read_with_defaults(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(GOOD)
    scenario = e2e.load_scenario(path)
    big, cpu = scenario.nodes
    assert big.capacity == {"cpu": "16", "example.com/gpu": "4", "memory": "32Gi", "pods": "110"}
    assert cpu.capacity == e2e.DEFAULT_CAPACITY and cpu.labels == {}
    assert scenario.expect == {"train-1": ("gpu-big",), "web-1": ("pending",)}
    train = scenario.pods[0].manifest("gpu")
    assert train["spec"]["schedulerName"] == "gpu"
    # an extended resource cannot be overcommitted: the API server wants limits = requests
    assert train["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "500m", "example.com/gpu": "1"},
        "limits": {"example.com/gpu": "1"},
    }
    web = scenario.pods[1].manifest("gpu")
    assert web["spec"]["nodeSelector"] == {"example.com/pool": "cpu"}
    assert web["metadata"]["annotations"] == {"example.com/hold": "false"}
    node = big.manifest()
    assert node["status"]["capacity"] == node["status"]["allocatable"] == big.capacity


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (("pods:", "pod:"), "unknown key 'pod'"),
        (("name: gpu-big", "name: GPU_big"), "nodes[0].name: 'GPU_big' is not a DNS-1123 name"),
        (('{example.com/accelerator: "true"}', "{example.com/accelerator: true}"), "is not a label value"),
        (("example.com/accelerator:", "bad key!:"), "'bad key!' is not a label key"),
        (("gpu: 4,", "gpu: four,"), "nodes[0].capacity.example.com/gpu: 'four' is not a quantity"),
        (("cpu: 500m", "cpu: -1"), "pods[0].requests.cpu: -1 is not a quantity"),
        (("name: web-1", "name: train-1"), "pod 'train-1' is named twice"),
        (("web-1: pending", "web-2: pending"), "'web-2' is not a pod of this scenario"),
        (("web-1: pending", "web-1: gpu-small"), "'gpu-small' is neither a node of this scenario nor 'pending'"),
        (("  requests: {", "  resources: {"), "unknown key 'resources'"),
        (('{example.com/hold: "false"}', "{example.com/hold: false}"), "pods[1].annotations.example.com/hold"),
        (("{example.com/hold:", "{bad key:"), "'bad key' is not an annotation key"),
        (("nodes:\n", "nodes: [\n"), "is not valid YAML"),
    ],
)
def test_bad_scenario(kplugin: Kplugin, project: Path, tmp_path: Path, change: tuple[str, str], needle: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(GOOD.replace(*change, 1))
    run = kplugin("e2e", str(project), "--scenario", str(path))
    assert run.code == 2, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith("kplugin: error: ") and str(path) in line and needle in line, line
    assert not (project / "bin").exists(), "nothing is built on bad input"


def test_empty_scenario(kplugin: Kplugin, project: Path, tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("nodes: []\npods: []\n")
    run = kplugin("e2e", str(project), "--scenario", str(path))
    assert run.code == 2 and "needs at least one node and one pod" in run.stderr


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        (["--timeout", "0"], "--timeout 0: must be from 1 to 3600 seconds"),
        (["--scheduler-v", "11"], "--scheduler-v 11: must be from 0 to 10"),
        (["--args", "missing.yaml"], "no such file"),
    ],
)
def test_bad_options(kplugin: Kplugin, project: Path, options: list[str], needle: str) -> None:
    run = kplugin("e2e", str(project), *options)
    assert run.code == 2 and needle in run.stderr, run.stderr
    assert not (project / "bin").exists()


def test_not_a_project(kplugin: Kplugin, tmp_path: Path) -> None:
    run = kplugin("e2e", str(tmp_path))
    assert run.code == 2 and "is not a kplugin project" in run.stderr


def test_etcd_missing(kplugin: Kplugin, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("KPLUGIN_ETCD", raising=False)
    run = kplugin("e2e", str(project))
    assert run.code == 1, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert "etcd not found on PATH" in line and "apt-get install etcd-server" in line
    assert not (project / "bin").exists()


LOG = """\
I1203 12:08:38.72 1 schedule_one.go:717] "Plugin scored node for pod" pod="default/p" plugin="Gpu" node="a" score=10
I1203 12:08:38.72 1 schedule_one.go:717] "Plugin scored node for pod" pod="default/p" plugin="Gpu" node="b" score=90
I1203 12:08:38.72 1 schedule_one.go:784] "Calculated node's final score for pod" pod="default/p" node="a" score=110
I1203 12:08:38.72 1 schedule_one.go:784] "Calculated node's final score for pod" pod="default/p" node="b" score=190
I1203 12:08:39.00 1 schedule_one.go:717] "Plugin scored node for pod" pod="default/p" plugin="Gpu" node="a" score=70
I1203 12:08:39.00 1 schedule_one.go:717] "Plugin scored node for pod" pod="default/p" plugin="Fit" node="a" score=5
I1203 12:08:39.00 1 schedule_one.go:784] "Calculated node's final score for pod" pod="default/p" node="a" score=75
I1203 12:08:39.00 1 schedule_one.go:717] "Plugin scored node for pod" pod="other/p" plugin="Gpu" node="a" score=1
I1203 12:08:39.00 1 schedule_one.go:784] "Calculated node's final score for pod" pod="other/p" node="a" score=1
"""


def test_scores_from_the_last_attempt_of_each_pod() -> None:
    scores = e2e.scores_from_log(LOG)
    assert scores == {
        "p": (e2e.NodeScore("a", 75, {"Fit": 5, "Gpu": 70}),),
        "other/p": (e2e.NodeScore("a", 1, {"Gpu": 1}),),  # another namespace: NAMESPACE/NAME
    }


def test_scores_best_first() -> None:
    first_attempt = "\n".join(LOG.splitlines()[:4])
    assert [s.node for s in e2e.scores_from_log(first_attempt)["p"]] == ["b", "a"]


def test_free_ports_are_distinct_and_bindable() -> None:
    import socket

    from kplugin.kube.process import free_ports

    ports = free_ports(3)
    assert len(set(ports)) == 3
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", port))


FORBIDDEN_LOG = r"""
E1203 reflector.go:227] "Failed to watch" err="failed to list *v1.DeviceTaintRule: devicetaintrules.resource.k8s.io \
is forbidden: User \"system:serviceaccount:kube-system:gpu\" cannot list resource \"devicetaintrules\" in API group \
\"resource.k8s.io\" at the cluster scope" logger="UnhandledError"
W1203 reflector.go:539] failed to list *v1.Node: nodes is forbidden: User "system:serviceaccount:kube-system:gpu" \
cannot list resource "nodes" in API group "" at the cluster scope
""".replace("\\\n", "")


EVENTS_REFUSED = (
    'E1203 event.go:359] "Server rejected event (will not retry!)" err="events.events.k8s.io is forbidden: User '
    '\\"system:serviceaccount:kube-system:gpu\\" cannot create resource \\"events\\" in API group '
    '\\"events.k8s.io\\" in the namespace \\"default\\""\n'
)


def test_only_an_informer_refused_stops_the_wait(tmp_path: Path) -> None:
    """A refused list or watch means informers that never sync: e2e stops waiting. A
    refused event does not stop the run (it is still reported at its end)."""
    from kplugin.e2e.watch import Refusals

    log = tmp_path / "kube-scheduler.log"
    log.write_text(EVENTS_REFUSED)
    refusals = Refusals(log)
    assert e2e.denied_requests(EVENTS_REFUSED) == ["create events.events.k8s.io"]
    assert not refusals.any()
    with log.open("a") as more:
        more.write(FORBIDDEN_LOG)
    refusals.checked = 0.0  # it reads the log at most every 2 s
    assert refusals.any()


def test_rbac_denials_fail_the_run() -> None:
    from kplugin.core.errors import OperationError

    denied = e2e.denied_requests(FORBIDDEN_LOG)
    assert denied == ["list devicetaintrules.resource.k8s.io", "list nodes"]
    outcome = e2e.Outcome("1.37.2", "gpu", [], 1.0, identity="system:serviceaccount:kube-system:gpu", denied=denied)
    with pytest.raises(OperationError, match=r"deploy/rbac.yaml does not let the scheduler .* list devicetaintrules"):
        e2e.check(outcome)


def test_rbac_file_must_hold_objects(kplugin: Kplugin, project: Path) -> None:
    (project / "deploy/rbac.yaml").write_text("- just\n- a list\n")
    run = kplugin("e2e", str(project))
    assert run.code == 2 and "every document must be a Kubernetes object" in run.stderr, run.stderr


def test_a_configuration_the_scheduler_refuses_is_one_line(tmp_path: Path) -> None:
    """e2e asks the scheduler binary about its configuration (--write-config-to) before
    it starts anything, and reports the scheduler's own error line, not its flag dump."""
    from kplugin import e2e
    from kplugin.core.errors import OperationError
    from kplugin.model import project, schedconfig

    log = tmp_path / "log"
    flags = "".join(f'I1203 10:00:00.000000       1 flags.go:64] FLAG: --flag-{i}="x"\n' for i in range(14))
    log.write_text(
        flags + 'E1203 10:00:00.100000       1 run.go:72] "command failed" err="couldn\'t create scheduler: '
        'filter plugin \\"Nope\\" does not exist"\n'
    )
    fake = tmp_path / "kube-scheduler"
    fake.write_text(f"#!/bin/sh\ncat {log} >&2\nexit 1\n")
    fake.chmod(0o755)
    meta = project.parse(tmp_path, {
        "name": "p", "module": "example.com/p", "kubernetes": "1.28.3", "schedulerName": "p", "image": "p:1",
        "plugins": [{"name": "P", "extensionPoints": ["filter"]}],
    })  # fmt: skip
    config = schedconfig.SchedulerConfig(scheduler_names=("p",), plugins=meta.plugins)
    inputs = e2e.Inputs(project=meta, scenario=e2e.DEFAULT_SCENARIO, config=config, rbac=None)
    with pytest.raises(OperationError) as refused:
        e2e.check_config(inputs, fake)
    message = str(refused.value)
    assert message.startswith("kube-scheduler 1.28.3 rejects the e2e configuration: couldn't create scheduler")
    assert 'filter plugin "Nope" does not exist' in message and "FLAG" not in message


# client-go's reflector when a kind is not served (no CRD): 1.28's plain lines, 1.34's structured one
UNSERVED_LOG = r"""
W1205 reflector.go:535] k8s.io/client-go/informers/factory.go:150: failed to list *v1alpha1.PodGroup: the server \
could not find the requested resource
E1205 reflector.go:147] k8s.io/client-go/informers/factory.go:150: Failed to watch *v1alpha1.PodGroup: failed to \
list *v1alpha1.PodGroup: the server could not find the requested resource
E1205 reflector.go:205] "Failed to watch" err="failed to list *v1beta1.ElasticQuota: the server could not find the \
requested resource" logger="UnhandledError" reflector="pkg/generated/informers/factory.go:160" \
type="*v1beta1.ElasticQuota"
W1205 reflector.go:535] k8s.io/client-go@v0.28.3/tools/cache/reflector.go:229: failed to list \
quota.example.com/v1alpha1, Resource=quotas: the server could not find the requested resource
""".replace("\\\n", "")


def test_an_informer_of_a_kind_not_served_stops_the_wait_and_fails_the_run(tmp_path: Path) -> None:
    """A custom kind without its CRD: the informer never syncs (issue 21). e2e stops
    waiting, fails with the kinds named, and blames no plugin for the pods."""
    from kplugin.core.errors import OperationError
    from kplugin.e2e import logs
    from kplugin.e2e.watch import Refusals

    facts = logs.read_log(UNSERVED_LOG.splitlines())
    # a dynamic informer (the scheduler's for a custom resource plugins register events on) names its resource
    assert facts.unserved == ["*v1alpha1.PodGroup", "*v1beta1.ElasticQuota", "quotas (quota.example.com/v1alpha1)"]
    assert facts.not_ready and not facts.informers_denied and facts.denied == []
    log = tmp_path / "kube-scheduler.log"
    log.write_text(UNSERVED_LOG)
    assert Refusals(log).any()
    outcome = e2e.Outcome("1.37.2", "gpu", [], 1.0, identity="x", unserved=facts.unserved)
    with pytest.raises(OperationError, match=r"never became ready: the API server does not serve \*v1alpha1.PodGroup"):
        e2e.check(outcome)


def test_a_pod_never_attempted_is_not_blamed_on_a_plugin_when_the_log_says_why() -> None:
    from kplugin.e2e import logs, replay
    from kplugin.scenario.format import Node, Pod, Scenario

    scenario = Scenario(nodes=(Node("n"),), pods=(Pod("p"),))
    facts = logs.read_log(UNSERVED_LOG.splitlines())
    (placement,) = replay._placements(scenario, {}, facts, set(), 30, 0.0)
    assert "PreEnqueue" not in placement.reason and "informers could not list" in placement.reason
    (placement,) = replay._placements(scenario, {}, logs.LogFacts(), set(), 30, 0.0)
    assert "PreEnqueue" in placement.reason


def test_the_reporting_plugin_runs_first_at_postfilter_in_e2e_only(project: Path) -> None:
    """Enabled in multiPoint and at postFilter, it is an override, which the framework runs
    before the defaults (preemption) and the project's own PostFilter; the configuration
    kplugin writes for deploy/ never has it."""
    from dataclasses import replace

    from kplugin.model.schedconfig import SchedulerConfig
    from kplugin.model.spec import NODE_REJECTIONS_PLUGIN, ExtensionPoint, PluginSpec

    first = {"name": NODE_REJECTIONS_PLUGIN}
    own = PluginSpec(name="Gpu", extension_points=(ExtensionPoint.FILTER, ExtensionPoint.POST_FILTER))
    config = SchedulerConfig(scheduler_names=("s",), plugins=(own,), node_rejections=True)
    section = config.plugins_section()
    assert section["multiPoint"] == {"enabled": [first]}
    assert section["postFilter"] == {"enabled": [first, {"name": "Gpu"}]}
    multi = replace(config, multipoint=True, disable_default=("DefaultPreemption",)).plugins_section()
    assert multi["multiPoint"] == {"enabled": [first, {"name": "Gpu"}], "disabled": [{"name": "DefaultPreemption"}]}
    assert multi["postFilter"] == {"enabled": [first]}
    assert NODE_REJECTIONS_PLUGIN not in str(replace(config, node_rejections=False).document())
    assert NODE_REJECTIONS_PLUGIN not in (project / "deploy" / "scheduler-config.yaml").read_text()
    assert (project / "internal/rejections/zz_generated.rejections.go").is_file()  # e2e's profiles: test_scenario


def test_a_plugin_cannot_take_the_reporting_plugins_name(kplugin: Kplugin, tmp_path: Path) -> None:
    run = kplugin("new", "gpu", "--plugin", "KpluginNodeRejections", "--no-tidy", "-o", str(tmp_path))
    assert run.code == 2, run.stderr
    assert "KpluginNodeRejections" in run.stderr and not (tmp_path / "gpu").exists()
