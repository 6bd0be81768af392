"""Issue 10, class 5: values of the wrong type or shape are a message, never an internal error.

Wrong-typed fields in a --merge target are exit 2 naming the field; in doctor's inputs
(RBAC rules, the sample pod, leaderElection, profiles) an error finding with file:line;
a scenario's expect values that are lists or mappings are exit 2. Numbers of thousands
of digits and non-ASCII digits are refused by length and by alphabet; plugin names whose
package the go tool treats specially, or that are Go keywords, are refused; an empty
option value is an error, never the default; --disable-default takes only '*' and
in-tree plugins.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from ruamel.yaml import YAML
from support import hostile
from support.hostile import K8S, World

from kplugin.core import yamlio
from kplugin.core.errors import OperationError
from kplugin.kube import controlplane

pytestmark = pytest.mark.hostile

HUGE = "9" * 5000


@pytest.fixture
def run(kplugin: hostile.KplugIn, monkeypatch: pytest.MonkeyPatch) -> hostile.KplugIn:
    def no_etcd() -> str:
        raise OperationError("etcd not found (hostile-input tests stop e2e here)")

    monkeypatch.setattr(controlplane, "etcd_binary", no_etcd)
    return hostile.timed(kplugin)


def config(world: World) -> dict[str, Any]:
    doc: dict[str, Any] = YAML(typ="safe").load((world.project / "deploy/scheduler-config.yaml").read_text())
    return doc


# --- --merge targets --------------------------------------------------------------------------


def profile(**fields: Any) -> dict[str, Any]:
    return {"schedulerName": "p", **fields}


MERGE_CASES: dict[str, tuple[Any, str]] = {
    "profiles-int": (5, "profiles must be a list, not an integer 5"),
    "profiles-null": (None, "profiles is null"),
    "profiles-mapping": ({"a": 1}, "profiles must be a list, not a mapping"),
    "profiles-item-int": ([1], "profiles[0] must be a mapping, not an integer 1"),
    "profiles-item-string": (["p"], "profiles[0] must be a mapping, not a string"),
    "scheduler-name-list": ([{"schedulerName": [1]}], "profiles[0].schedulerName must be a string"),
    "plugins-list": ([profile(plugins=[1])], "profiles[0].plugins must be a mapping"),
    "point-list": ([profile(plugins={"filter": [1]})], "profiles[0].plugins.filter must be a mapping"),
    "enabled-int": ([profile(plugins={"filter": {"enabled": 5}})], "plugins.filter.enabled must be a list"),
    "enabled-item-int": ([profile(plugins={"filter": {"enabled": [1]}})], "plugins.filter.enabled[0] must be"),
    "enabled-name-list": (
        [profile(plugins={"score": {"enabled": [{"name": [1]}]}})],
        "plugins.score.enabled[0] must be a mapping with a string name",
    ),
    "plugin-config-int": ([profile(pluginConfig=5)], "profiles[0].pluginConfig must be a list"),
    "plugin-config-item-list": ([profile(pluginConfig=[[1]])], "profiles[0].pluginConfig[0] must be"),
    "plugin-config-name-int": ([profile(pluginConfig=[{"name": 5}])], "profiles[0].pluginConfig[0] must be"),
}


@pytest.mark.parametrize("case", sorted(MERGE_CASES))
def test_merge_target_of_the_wrong_type(run: hostile.KplugIn, world: World, case: str) -> None:
    profiles, needle = MERGE_CASES[case]
    target = world.work / "cluster.yaml"
    target.write_text(yamlio.dump({**config(world), "profiles": profiles}))
    before = world.snapshot()
    hostile.refused(run("render-config", str(world.project), "--merge", str(target)), 2, str(target), needle)
    assert world.snapshot() == before


@pytest.mark.parametrize("document", ["", "profiles:\n- schedulerName: other\n  plugins: null\n"])
def test_merge_target_without_profiles(run: hostile.KplugIn, world: World, document: str) -> None:
    """A missing list is an empty one: the project's profile is added, the rest (a null
    in a profile merge does not touch) is kept."""
    target = world.work / "cluster.yaml"
    target.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + document)
    hostile.succeeded(run("render-config", str(world.project), "--merge", str(target)))
    merged = YAML(typ="safe").load(target.read_text())
    assert [p["schedulerName"] for p in merged["profiles"]][-1] == "p"


@pytest.mark.parametrize(
    ("document", "needle"),
    [
        ("[1, 2]\n", "is not a KubeSchedulerConfiguration"),
        ("kind: Pod\n", "is not a KubeSchedulerConfiguration"),
        ("kind: [1]\n", "is not a KubeSchedulerConfiguration"),
        ("'just a string'\n", "is not a KubeSchedulerConfiguration"),
    ],
)
def test_merge_target_that_is_no_configuration(run: hostile.KplugIn, world: World, document: str, needle: str) -> None:
    target = world.work / "cluster.yaml"
    target.write_text(document)
    before = world.snapshot()
    hostile.refused(run("render-config", str(world.project), "--merge", str(target)), 2, needle)
    assert world.snapshot() == before


# --- doctor's inputs ----------------------------------------------------------------------------

RBAC = "deploy/rbac.yaml"
POD = "deploy/sample-pod.yaml"
CONFIG = "deploy/scheduler-config.yaml"


def rbac_rule(**fields: Any) -> str:
    rule = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], **fields}
    return yamlio.dump({"kind": "ClusterRole", "metadata": {"name": "x"}, "rules": [rule]})


def edit_config(change: Callable[[dict[str, Any]], None]) -> Callable[[World], str]:
    def make(world: World) -> str:
        doc = config(world)
        change(doc)
        return yamlio.dump(doc)

    return make


def election(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc["leaderElection"].update(fields)


def first_profile(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc["profiles"][0].update(fields)


# (file, its new content or a function of the world making it, a text of the finding, has a line)
DOCTOR_CASES: dict[str, tuple[str, str | Callable[[World], str], str, bool]] = {
    "rbac-kind-list": (RBAC, "kind: [1]\nrules: []\n", "document 1 kind must be a string", True),
    "rbac-rules-int": (RBAC, "kind: ClusterRole\nrules: 5\n", "document 1 rules must be a list", True),
    "rbac-rule-list": (RBAC, "kind: ClusterRole\nrules:\n- [1]\n", "rules[0] must be a mapping", True),
    "rbac-verbs-nested": (RBAC, rbac_rule(verbs=[[1]]), "rules[0].verbs[0] must be a string", True),
    "rbac-verbs-int": (RBAC, rbac_rule(verbs=[7]), "rules[0].verbs[0] must be a string", True),
    "rbac-resources-mapping": (RBAC, rbac_rule(resources={"a": 1}), "rules[0].resources must be a list", True),
    "rbac-groups-int": (RBAC, rbac_rule(apiGroups=5), "rules[0].apiGroups must be a list", True),
    "rbac-names-int": (RBAC, rbac_rule(resourceNames=5), "rules[0].resourceNames must be a list", True),
    "rbac-document-list": (RBAC, "- 1\n- 2\n", "document 1 must be a mapping", False),
    "pod-list": (POD, "- 1\n", "the sample pod must be a mapping", False),
    "pod-scalar": (POD, "a pod\n", "the sample pod must be a mapping", False),
    "pod-spec-int": (POD, "kind: Pod\nspec: 5\n", "spec must be a mapping", True),
    "pod-scheduler-list": (POD, "spec:\n  schedulerName: [1]\n", "spec.schedulerName must be a string", True),
    "election-int": (CONFIG, edit_config(lambda d: d.update(leaderElection=5)), "leaderElection must be a", True),
    "election-elect-list": (CONFIG, edit_config(election(leaderElect=[1])), "leaderElect must be true or false", True),
    "election-elect-string": (CONFIG, edit_config(election(leaderElect="yes")), "leaderElect must be true", True),
    "election-name-list": (CONFIG, edit_config(election(resourceName=[1])), "resourceName must be a string", True),
    "election-name-int": (CONFIG, edit_config(election(resourceName=5)), "resourceName must be a string", True),
    "election-namespace-list": (
        CONFIG, edit_config(election(resourceNamespace={"a": 1})), "resourceNamespace must be a string", True
    ),
    "profiles-int": (CONFIG, edit_config(lambda d: d.update(profiles=5)), "profiles must be a list", True),
    "profile-int": (CONFIG, edit_config(lambda d: d.update(profiles=[5])), "profiles[0] must be a mapping", True),
    "profile-scheduler-list": (
        CONFIG, edit_config(first_profile(schedulerName=[1])), "profiles[0].schedulerName must be a string", True
    ),
    "profile-plugins-list": (CONFIG, edit_config(first_profile(plugins=[1])), "plugins must be a mapping", True),
    "profile-point-list": (
        CONFIG, edit_config(first_profile(plugins={"filter": [1]})), "plugins.filter must be a mapping", True
    ),
    "profile-enabled-int": (
        CONFIG, edit_config(first_profile(plugins={"filter": {"enabled": 5}})), "enabled must be a list", True
    ),
    "profile-enabled-item": (
        CONFIG, edit_config(first_profile(plugins={"filter": {"enabled": [1]}})), "enabled[0] must be a mapping", True
    ),
    "profile-config-int": (CONFIG, edit_config(first_profile(pluginConfig=5)), "pluginConfig must be a list", True),
    "profile-args-int": (
        CONFIG, edit_config(first_profile(pluginConfig=[{"name": "P", "args": 5}])), "must be a mapping", True
    ),
    "profile-weight-string": (
        CONFIG,
        edit_config(first_profile(plugins={"score": {"enabled": [{"name": "P", "weight": "3"}]}})),
        "weight '3' is not a whole number",
        True,
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(DOCTOR_CASES))
def test_doctor_finds_wrong_types(run: hostile.KplugIn, world: World, case: str) -> None:
    relative, content, needle, has_line = DOCTOR_CASES[case]
    text = content(world) if callable(content) else content
    (world.project / relative).write_text(text)
    before = world.snapshot()
    result = run("doctor", str(world.project), "--json")
    hostile.no_crash(result)
    assert result.code == 1, result.stderr
    findings = json.loads(result.stdout)["findings"]
    found = [f for f in findings if f["severity"] == "error" and needle in f["what"] and f["file"] == relative]
    assert found, findings
    if has_line:
        assert all(isinstance(f["line"], int) and f["line"] >= 1 for f in found), found
    plain = run("doctor", str(world.project))  # the table/text form shows file:line
    assert f"{relative}:{found[0]['line']}" in plain.stdout if has_line else relative in plain.stdout
    assert world.snapshot() == before


# --- scenarios -------------------------------------------------------------------------------------

GOOD_NODES = "nodes:\n- name: a\npods:\n- name: b\n"
SCENARIO_CASES = {
    "expect-list-value": (GOOD_NODES + "expect:\n  b: [[a]]\n", "expect.b[0]: ['a'] must be a node name"),
    "expect-list-unknown": (GOOD_NODES + "expect:\n  b: [a, z]\n", "expect.b[1]: 'z' is neither a node"),
    "expect-list-pending": (GOOD_NODES + "expect:\n  b: [a, pending]\n", "'pending' cannot be one of several"),
    "expect-mapping-value": (GOOD_NODES + "expect:\n  b: {a: 1}\n", "expect.b: {'a': 1} must be a node name"),
    "expect-int-value": (GOOD_NODES + "expect:\n  b: 5\n", "expect.b: 5 must be a node name"),
    "expect-null-value": (GOOD_NODES + "expect:\n  b:\n", "expect.b: None must be a node name"),
    "expect-list": (GOOD_NODES + "expect: [a]\n", "expect: must be a mapping"),
    "expect-list-key": (GOOD_NODES + "expect:\n  ? [b]\n  : a\n", "is not a pod of this scenario"),
    "expect-unknown-node": (GOOD_NODES + "expect:\n  b: z\n", "'z' is neither a node"),
    "nodes-int": ("nodes: 5\npods:\n- name: b\n", "nodes: must be a list"),
    "pods-item-list": ("nodes:\n- name: a\npods:\n- [1]\n", "pods[0]: must be a mapping"),
    "node-name-list": ("nodes:\n- name: [1]\npods:\n- name: b\n", "nodes[0].name: [1] is not a DNS-1123 name"),
    "node-name-date": ("nodes:\n- name: 2024-01-01\npods:\n- name: b\n", "is not a DNS-1123 name"),
    "label-value-list": ("nodes:\n- name: a\n  labels: {x: [1]}\npods:\n- name: b\n", "labels.x: [1] is not a label"),
    "label-value-bool": ("nodes:\n- name: a\n  labels: {x: true}\npods:\n- name: b\n", 'quote it: "true"'),
    "label-key-list": ("nodes:\n- name: a\n  labels: {? [1] : x}\npods:\n- name: b\n", "is not a label key"),
    "capacity-mapping": (
        "nodes:\n- name: a\n  capacity: {cpu: {a: 1}}\npods:\n- name: b\n", "capacity.cpu: {'a': 1} is not a quantity"
    ),
    "capacity-huge": (f"nodes:\n- name: a\n  capacity: {{cpu: 1{'0' * 3000}}}\npods:\n- name: b\n", "capacity.cpu"),
    "capacity-inf": ("nodes:\n- name: a\n  capacity: {cpu: .inf}\npods:\n- name: b\n", "is not a quantity"),
    "request-bool": ("nodes:\n- name: a\npods:\n- name: b\n  requests: {cpu: true}\n", "is not a quantity"),
    "annotation-int": ("nodes:\n- name: a\npods:\n- name: b\n  annotations: {x: 1}\n", "annotations.x: 1 is not"),
    "unknown-key": ("nodes:\n- name: a\n  evil: 1\npods:\n- name: b\n", "unknown key 'evil'"),
    "document-list": ("- 1\n", "the document: must be a mapping"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(SCENARIO_CASES))
def test_scenario_values(run: hostile.KplugIn, world: World, case: str) -> None:
    text, needle = SCENARIO_CASES[case]
    scenario = world.work / "scenario.yaml"
    scenario.write_text(text)
    before = world.snapshot()
    line = hostile.refused(run("e2e", str(world.project), "--scenario", str(scenario)), 2, str(scenario), needle)
    assert len(line) < 400, line
    assert world.snapshot() == before


# --- numbers ----------------------------------------------------------------------------------------


def render(*args: str) -> Callable[[World], tuple[str, ...]]:
    return lambda w: ("render-config", str(w.project), *args)


NUMBER_CASES: dict[str, tuple[Callable[[World], tuple[str, ...]], str]] = {
    "weight-huge": (render("--weight", f"P={HUGE}"), "too long"),
    "weight-arabic-digit": (render("--weight", "P=\u0663"), "whole number"),
    "weight-fullwidth": (render("--weight", "P=\uff13"), "whole number"),
    "weight-superscript": (render("--weight", "P=\u00b3"), "whole number"),
    "weight-hex": (render("--weight", "P=0x10"), "whole number"),
    "weight-underscore": (render("--weight", "P=1_0"), "whole number"),
    "weight-zero": (render("--weight", "P=0"), "whole number"),
    "weight-too-big": (render("--weight", "P=2147483648"), "whole number"),
    "weight-space": (render("--weight", "P= 3"), "whole number"),
    "k8s-huge-minor": (render("--k8s", f"1.{HUGE}"), "is not a Kubernetes version"),
    "k8s-huge-patch": (render("--k8s", f"1.28.{HUGE}"), "is not a Kubernetes version"),
    "k8s-huge-major": (render("--k8s", HUGE), "is not a Kubernetes version"),
    "k8s-arabic-digit": (render("--k8s", "1.2\u0668"), "is not a Kubernetes version"),
    "k8s-fullwidth": (render("--k8s", "\uff11.\uff12\uff18"), "is not a Kubernetes version"),
    "k8s-devanagari": (render("--k8s", "1.28.\u0967"), "is not a Kubernetes version"),
    "k8s-leading-zero": (render("--k8s", "1.028"), "is not a Kubernetes version"),
    "percentage-huge": (render("--percentage-of-nodes-to-score", HUGE), "is not a valid integer"),
    "percentage-negative": (render("--percentage-of-nodes-to-score", "-1"), "from 0 to 100"),
    "new-k8s-huge": (lambda w: ("new", "q", "--k8s", f"1.28.{HUGE}", "--no-tidy", "-o", str(w.work)), "version"),
    "new-k8s-arabic": (lambda w: ("new", "q", "--k8s", "1.2\u0668", "--no-tidy", "-o", str(w.work)), "version"),
    "doctor-k8s-arabic": (lambda w: ("doctor", str(w.project), "--k8s", "1.2\u0668"), "is not a Kubernetes version"),
    "upgrade-k8s-huge": (lambda w: ("upgrade", str(w.project), "--k8s", f"{HUGE}.1"), "is not a Kubernetes version"),
    "e2e-verbosity-huge": (lambda w: ("e2e", str(w.project), "--scheduler-v", HUGE), "is not a valid integer"),
    "e2e-timeout-inf": (lambda w: ("e2e", str(w.project), "--timeout", "1e999"), "from 1 to 3600"),
    "e2e-timeout-nan": (lambda w: ("e2e", str(w.project), "--timeout", "nan"), "from 1 to 3600"),
}


@pytest.mark.parametrize("case", sorted(NUMBER_CASES))
def test_numbers(run: hostile.KplugIn, world: World, case: str) -> None:
    args, needle = NUMBER_CASES[case]
    before = world.snapshot()
    line = hostile.refused(run(*args(world)), 2, needle)
    assert len(line) < 400, line  # a value of 5,000 digits is shown by its start
    assert world.snapshot() == before


# --- plugin names -------------------------------------------------------------------------------------

NAMES = {
    "internal": "a name the go tool treats specially",
    "main": "a name the go tool treats specially",
    "testdata": "a name the go tool treats specially",
    "vendor": "a name the go tool treats specially",
    "func": "a Go keyword",
    "type": "a Go keyword",
    "go": "a Go keyword",
    "map": "a Go keyword",
    "range": "a Go keyword",
}


@pytest.mark.parametrize("how", ["new-plugin", "new-name", "add-plugin"])
@pytest.mark.parametrize("package", sorted(NAMES))
def test_plugin_name_whose_package_cannot_build(run: hostile.KplugIn, world: World, package: str, how: str) -> None:
    plugin = package.capitalize()
    args = {
        "new-plugin": ("new", "q", "--plugin", plugin, "--k8s", K8S, "--no-tidy", "-o", str(world.work)),
        "new-name": ("new", package, "--k8s", K8S, "--no-tidy", "-o", str(world.work)),  # plugin from the name
        "add-plugin": ("add", "plugin", plugin, "-p", str(world.project), "--no-tidy"),
    }[how]
    before = world.snapshot()
    hostile.refused(run(*args), 2, f"plugin name '{plugin}'", f"'{package}'", NAMES[package])
    assert world.snapshot() == before


# --- empty values -------------------------------------------------------------------------------------

EMPTY: dict[str, tuple[str, ...]] = {
    "new-module": ("new", "q", "--module", ""),
    "new-plugin": ("new", "q", "--plugin", ""),
    "new-api": ("new", "q", "--api", ""),
    "new-k8s": ("new", "q", "--k8s", ""),
    "new-scheduler-name": ("new", "q", "--scheduler-name", ""),
    "new-image": ("new", "q", "--image", ""),
    "new-extension-points": ("new", "q", "--extension-points", ""),
    "new-name": ("new", ""),
    "new-output-dir": ("new", "q", "-o", ""),
    "render-path": ("render-config", ""),
    "render-k8s": ("render-config", ".", "--k8s", ""),
    "render-api-version": ("render-config", ".", "--api-version", ""),
    "render-scheduler-name": ("render-config", ".", "--scheduler-name", ""),
    "render-weight": ("render-config", ".", "--weight", ""),
    "render-args": ("render-config", ".", "--args", ""),
    "render-merge": ("render-config", ".", "--merge", ""),
    "render-output": ("render-config", ".", "-o", ""),
    "render-binary": ("render-config", ".", "--validate", "--binary", ""),
    "render-kubeconfig": ("render-config", ".", "--kubeconfig", ""),
    "render-disable-default": ("render-config", ".", "--disable-default", ""),
    "render-format": ("render-config", ".", "--format", ""),
    "render-leader-elect": ("render-config", ".", "--leader-elect", ""),
    "doctor-path": ("doctor", ""),
    "doctor-k8s": ("doctor", ".", "--k8s", ""),
    "doctor-config": ("doctor", ".", "--config", ""),
    "doctor-binary": ("doctor", ".", "--binary", ""),
    "upgrade-path": ("upgrade", "", "--k8s", "1.29", "--no-tidy"),
    "upgrade-k8s": ("upgrade", ".", "--k8s", "", "--no-tidy"),
    "add-name": ("add", "plugin", "", "--no-tidy"),
    "add-project": ("add", "plugin", "Xx", "-p", "", "--no-tidy"),
    "add-extension-points": ("add", "plugin", "Xx", "--extension-points", "", "--no-tidy"),
    "build-path": ("build", "", "--builder", "local"),
    "build-k8s": ("build", ".", "--k8s", "", "--builder", "local"),
    "build-builder": ("build", ".", "--builder", ""),
    "build-tag": ("build", ".", "--tag", "", "--builder", "local"),
    "build-go-image": ("build", ".", "--go-image", "", "--builder", "local"),
    "build-base-image": ("build", ".", "--base-image", "", "--builder", "local"),
    "build-platform": ("build", ".", "--platform", "", "--builder", "local"),
    "build-network": ("build", ".", "--network", "", "--builder", "local"),
    "build-output": ("build", ".", "--output", "", "--builder", "local"),
    "build-log-file": ("build", ".", "--log-file", "", "--builder", "local"),
    "e2e-path": ("e2e", ""),
    "e2e-scenario": ("e2e", ".", "--scenario", ""),
    "e2e-args": ("e2e", ".", "--args", ""),
}


@pytest.mark.parametrize("case", sorted(EMPTY))
def test_empty_value_is_no_default(
    run: hostile.KplugIn, world: World, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """Run in the project directory itself: taking '' for '.' (or for the default) would
    change or render the project there instead of failing."""
    monkeypatch.chdir(world.project)
    args = EMPTY[case]
    before = world.snapshot()
    result = run(*args)
    hostile.refused(result, 2)
    assert result.stdout == ""
    assert world.snapshot() == before


# --- --disable-default ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("P", "this project's own plugin"),
        ("Nope", "not a default plugin"),
        ("nodeResourcesFit", "not a default plugin"),
        ("", "not a default plugin"),
        ("**", "not a default plugin"),
        ("x" * 5000, "not a default plugin"),
    ],
)
def test_disable_default_checked(run: hostile.KplugIn, world: World, name: str, needle: str) -> None:
    line = hostile.refused(run("render-config", str(world.project), "--disable-default", name), 2, needle)
    assert len(line) < 1000


@pytest.mark.parametrize("name", ["*", "NodeResourcesFit", "PrioritySort"])
def test_disable_default_accepted(run: hostile.KplugIn, world: World, name: str) -> None:
    result = run("render-config", str(world.project), "--disable-default", name)
    hostile.succeeded(result)
    assert f"name: {name}" in result.stdout.replace("'*'", "*")
