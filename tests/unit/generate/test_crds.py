"""The project's CustomResourceDefinitions (config/crd/, issue 21): `kplugin refresh`
writes them into deploy/crds.yaml and the chart's crds/ (and removes both when none are
left), doctor finds a kind the rules do not let the scheduler read and a deploy/ that
installs other CRDs, and a bad file is refused by name before anything is written. The
same objects pass a server-side dry run: tests/integration/test_integration_tools.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from support import Kplugin, tree

from kplugin.model import rbacrules

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: podgroups.scheduling.x-k8s.io}
spec:
  group: scheduling.x-k8s.io
  scope: Namespaced
  names: {kind: PodGroup, plural: podgroups}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"""
PODGROUPS = "- apiGroups: [scheduling.x-k8s.io]\n  resources: [podgroups]\n  verbs: [get, list, watch]\n"


def findings(kplugin: Kplugin, shaped: Path) -> dict[str, str]:
    run = kplugin("doctor", str(shaped), "--json")
    return {f["rule"]: f["what"] for f in json.loads(run.stdout)["findings"]}


def test_refresh_ships_the_crds_with_deploy_and_the_chart(kplugin: Kplugin, shaped: Path) -> None:
    assert not (shaped / "deploy/crds.yaml").exists(), "no CRDs, no file"
    assert not {"rbac-crd-unread", "rbac-crd-stale", "rbac-crd-file"} & set(findings(kplugin, shaped))
    (shaped / "config/crd").mkdir()
    (shaped / "config/crd/podgroups.yaml").write_text(CRD)
    found = findings(kplugin, shaped)
    assert found["rbac-crd-unread"] == (
        "podgroups.scheduling.x-k8s.io (PodGroup): config/rbac/rules.yaml grants no list and watch on it"
    )
    assert found["rbac-crd-stale"] == "deploy/crds.yaml is missing"
    rules = shaped / rbacrules.RULES_FILE
    rules.write_text(rules.read_text().replace("[]\n", PODGROUPS))
    run = kplugin("refresh", str(shaped), "--json")
    assert run.code == 0, run.stderr
    chart_crds = f"charts/{shaped.name}/crds/crds.yaml"
    assert set(json.loads(run.stdout)["changed"]) >= {"deploy/crds.yaml", chart_crds, "deploy/rbac.yaml"}
    (deployed,) = YAML(typ="safe").load_all((shaped / "deploy/crds.yaml").read_text())
    assert deployed == YAML(typ="safe").load(CRD)
    assert (shaped / chart_crds).read_bytes() == (shaped / "deploy/crds.yaml").read_bytes()
    assert not {"rbac-crd-unread", "rbac-crd-stale"} & set(findings(kplugin, shaped))
    meta = YAML(typ="safe").load((shaped / "kplugin.yaml").read_text())
    assert "deploy/crds.yaml" in meta["generated"] and "config/crd/podgroups.yaml" not in meta["generated"]
    again = kplugin("refresh", str(shaped))
    assert again.code == 0 and "0 file(s) changed" in again.stderr, again.stderr

    (shaped / "config/crd/podgroups.yaml").unlink()
    assert findings(kplugin, shaped)["rbac-crd-stale"] == "deploy/crds.yaml installs CRDs config/crd/ does not hold"
    run = kplugin("refresh", str(shaped))
    assert run.code == 0, run.stderr
    assert not (shaped / "deploy/crds.yaml").exists() and not (shaped / chart_crds).exists()


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "document 1 is not an apiextensions.k8s.io/v1"),
        ("a: [\n", "is not valid YAML"),
    ],
)
def test_a_bad_crd_file_is_refused_by_name(kplugin: Kplugin, shaped: Path, content: str, needle: str) -> None:
    (shaped / "config/crd").mkdir()
    (shaped / "config/crd/bad.yaml").write_text(content)
    assert needle in findings(kplugin, shaped)["rbac-crd-file"]
    before = tree(shaped)
    run = kplugin("refresh", str(shaped))
    assert run.code == 2, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert "config/crd/bad.yaml" in line and needle in line, line
    assert tree(shaped) == before, "nothing written"


def test_doctor_finds_a_resource_the_code_reads_without_a_rule(kplugin: Kplugin, shaped: Path) -> None:
    """The plugins' own Go code names a custom resource (fw.CustomResource, an
    EventResource of "plural.version.group", a GroupVersionResource literal): the rules
    file must let the scheduler list and watch it."""
    plugin = next((shaped / "pkg").glob("*/plugin.go"))
    line_count = plugin.read_text().count("\n")
    plugin.write_text(
        plugin.read_text()
        + '\nvar podGroups = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1",'
        + ' Resource: "podgroups"}\n'
        + '// CustomResource("commented", "v1", "example.com") is not code\n'
    )
    run = kplugin("doctor", str(shaped), "--json")
    (found,) = [f for f in json.loads(run.stdout)["findings"] if f["rule"] == "rbac-informer-unread"]
    assert found["line"] == line_count + 2 and found["file"].endswith("plugin.go"), found
    assert "reads podgroups.scheduling.x-k8s.io" in found["what"] and "[scheduling.x-k8s.io]" in found["fix"]
    assert run.code == 1, "an error: the scheduler would never become ready"
    rules = shaped / rbacrules.RULES_FILE
    rules.write_text(rules.read_text().replace("[]\n", PODGROUPS))
    assert "rbac-informer-unread" not in findings(kplugin, shaped)


def test_doctor_reads_a_resource_named_with_constants(kplugin: Kplugin, shaped: Path) -> None:
    """The spelling add api's register.go invites: fw.CustomResource("podgroups",
    "v1alpha1", v1alpha1.GroupName), or the GroupVersion's fields; the constants are read
    from the project's own Go code (apis/, pkg/)."""
    api = shaped / "apis/gang/v1alpha1"
    api.mkdir(parents=True)
    (api / "register.go").write_text(
        'package v1alpha1\n\n// GroupName is the API group.\nconst GroupName = "scheduling.x-k8s.io"\n\n'
        'var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}\n'
    )
    plugin = next((shaped / "pkg").glob("*/plugin.go"))
    text = plugin.read_text()
    for spelled in (
        'fw.CustomResource("podgroups", "v1alpha1", v1alpha1.GroupName)',
        "fw.CustomResource(plural, v1alpha1.SchemeGroupVersion.Version, v1alpha1.SchemeGroupVersion.Group)",
    ):
        plugin.write_text(text + f'\nconst plural = "podgroups"\n\nvar podGroups = {spelled}\n')
        run = kplugin("doctor", str(shaped), "--json")
        found = [f for f in json.loads(run.stdout)["findings"] if f["rule"] == "rbac-informer-unread"]
        assert len(found) == 1 and found[0]["what"].endswith(
            " reads podgroups.scheduling.x-k8s.io, and config/rbac/rules.yaml grants no list and watch on it"
        ), (spelled, found)
        assert found[0]["line"] == text.count("\n") + 4, found
    # a name no Go file of the project declares is not guessed (an import alias of
    # another package is read where the name has one value in the project)
    plugin.write_text(text + '\nvar unknown = fw.CustomResource("podgroups", "v1alpha1", elsewhere.Group)\n')
    run = kplugin("doctor", str(shaped), "--json")
    assert not [f for f in json.loads(run.stdout)["findings"] if f["rule"] == "rbac-informer-unread"]


def test_the_custom_resources_go_code_names() -> None:
    from kplugin.generate.gosource import custom_resources

    text = (
        "package p\n"
        '// fw.CustomResource("commented", "v1", "example.com")\n'
        'var a = fw.CustomResource("quotas", "v1alpha1", "quota.example.com")\n'
        'var b = fwk.EventResource("podgroups.v1alpha1.scheduling.x-k8s.io")\n'
        'var c = framework.GVK("elasticquotas.v1alpha1.scheduling.x-k8s.io")\n'
        'var d = schema.GroupVersionResource{Resource: "racks", Group: "topology.example.com", Version: "v1"}\n'
        'var e = schema.GroupVersionResource{Version: "v1", Resource: "pods"}\n'
        'var f = fwk.EventResource("Node")\n'
    )
    assert custom_resources(text) == [
        (3, "quota.example.com", "quotas"),
        (4, "scheduling.x-k8s.io", "podgroups"),
        (5, "scheduling.x-k8s.io", "elasticquotas"),
        (6, "topology.example.com", "racks"),
    ]


def test_a_crd_directory_or_file_that_is_no_regular_one_is_refused_unread(kplugin: Kplugin, shaped: Path) -> None:
    """config/crd/ as a symlink out of the project (a tampered checkout), or a FIFO in it
    (a read would hang): refused by name, nothing read or written."""
    import os

    outside = shaped.parent / "elsewhere"
    outside.mkdir()
    (outside / "podgroups.yaml").write_text(CRD)
    (shaped / "config/crd").symlink_to(outside)
    before = tree(shaped)
    run = kplugin("refresh", str(shaped))
    assert run.code == 2 and "config/crd is not a directory" in run.stderr, run.stderr
    assert tree(shaped) == before
    (shaped / "config/crd").unlink()
    (shaped / "config/crd").mkdir()
    os.mkfifo(shaped / "config/crd/pipe.yaml")
    run = kplugin("refresh", str(shaped))
    assert run.code == 2 and "pipe.yaml is a FIFO" in run.stderr, run.stderr
    assert "rbac-crd-file" in findings(kplugin, shaped)
