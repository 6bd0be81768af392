"""kplugin add api with the real code generators (issue 21, item 1): the project's pinned
k8s.io/code-generator writes deepcopy, a typed clientset, listers and informers,
controller-gen the CRD; the generated source of the kind (informer from a kubeconfig,
lister, events with a QueueingHint) compiles and its tests pass in the real framework
types; make generate runs the same commands and writes the same bytes; deploy/ and the
chart install the CRD; doctor and refresh find nothing left to do. At the oldest pin
(client-gen's gengo v1 flags, layer mode, the sample plugin) and at the newest minor (gengo v2,
native mode, a Score-only plugin without Args, a second group with a cluster-scoped kind)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from support import Kplugin, prereleases, tree

from kplugin.model.versions import newest_release, resolve

pytestmark = pytest.mark.integration

NEWEST = newest_release().key
CASES = [("1.28.3", "layer", "filter,score"), (NEWEST, "native", "score")]


def generated(project: Path) -> dict[str, bytes]:
    """What the generators write."""
    return {
        path: content
        for path, content in tree(project).items()
        if path.startswith(("pkg/generated/", "config/crd/", "apis/")) or path.endswith("zz_generated.deepcopy.go")
    }


@pytest.mark.parametrize(("version", "api", "points"), CASES, ids=[c[1] for c in CASES])
def test_add_api_generates_a_client_and_a_crd_that_build_and_ship(
    kplugin: Kplugin, tmp_path: Path, go_env: dict[str, str], version: str, api: str, points: str
) -> None:
    run = kplugin("new", "team", "--k8s", version, "--api", api, "--extension-points", points, "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    project = tmp_path / "team"
    run = kplugin("add", "api", "Quota", "--group", "quota.example.com", "--version", "v1alpha1",
                  "--project", str(project))  # fmt: skip
    assert run.code == 0, run.stderr
    kinds = ["Quota"]
    if api == "native":  # a second group, and a kind of no namespace
        run = kplugin("add", "api", "Placement", "--group", "topology.example.com", "--version", "v1beta1",
                      "--cluster-scoped", "--project", str(project))  # fmt: skip
        assert run.code == 0, run.stderr
        kinds.append("Placement")
    package = "team"
    for kind in kinds:
        lower = kind.lower()
        assert (project / f"pkg/{package}/{lower}_source.go").is_file()
    assert (project / "pkg/generated/clientset/versioned/typed/quota/v1alpha1/quota.go").is_file()
    assert (project / "pkg/generated/informers/externalversions/factory.go").is_file()

    # the CRDs: controller-gen's, shipped by deploy/ and the chart as they are
    yaml = YAML(typ="safe")
    crd = yaml.load((project / "config/crd/quota.example.com_quotas.yaml").read_text())
    assert crd["spec"]["names"]["plural"] == "quotas" and crd["spec"]["scope"] == "Namespaced"
    (served,) = crd["spec"]["versions"]
    assert served["name"] == "v1alpha1" and served["subresources"] == {"status": {}}
    spec_schema = served["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert "matchLabels" in spec_schema["selector"]["properties"]
    deployed = [d["metadata"]["name"] for d in yaml.load_all((project / "deploy/crds.yaml").read_text())]
    names = {"Quota": "quotas.quota.example.com", "Placement": "placements.topology.example.com"}
    assert sorted(deployed) == sorted(names[k] for k in kinds)
    assert (project / "charts/team/crds/crds.yaml").read_bytes() == (project / "deploy/crds.yaml").read_bytes()
    if api == "native":
        placement = yaml.load((project / "config/crd/topology.example.com_placements.yaml").read_text())
        assert placement["spec"]["scope"] == "Cluster"

    # the generated source of each kind, and the whole project, in the real framework types
    vet = subprocess.run(["go", "vet", "./..."], cwd=project, env=go_env, capture_output=True, text=True, check=False)
    assert vet.returncode == 0, vet.stderr[-3000:]
    test = subprocess.run(["go", "test", "-count=1", f"./pkg/{package}/", "./apis/..."], cwd=project, env=go_env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert test.returncode == 0, test.stdout[-3000:] + test.stderr[-2000:]
    assert f"ok  \texample.com/team/pkg/{package}" in test.stdout

    # nothing left to do: doctor, refresh, and make generate (the same commands, the same bytes)
    doctor = kplugin("doctor", str(project), "--json")
    rules = {f["rule"] for f in json.loads(doctor.stdout)["findings"]}
    assert not {r for r in rules if r.startswith("rbac-")}, doctor.stdout
    refresh = kplugin("refresh", str(project), "--json")
    assert refresh.code == 0 and json.loads(refresh.stdout)["changed"] == [], refresh.stdout + refresh.stderr
    before = generated(project)
    make = subprocess.run(["make", "generate"], cwd=project, env=go_env, capture_output=True, text=True, check=False)
    assert make.returncode == 0, make.stdout[-2000:] + make.stderr[-2000:]
    assert generated(project) == before


PRERELEASE = next(iter(prereleases()), None)


def test_a_project_with_its_own_kind_moves_through_the_minors(
    kplugin: Kplugin, tmp_path: Path, go_env: dict[str, str]
) -> None:
    """Issue 44, item 1: one project with a kind of its own, made at the oldest pin and
    moved by kplugin upgrade to the newest minor and the pre-release (the maintainer's
    matrix --with-api), builds, vets and passes its tests at each: upgrade generates its
    client code again with the target's code-generator, which make generate records. The
    dry run lists what the generators would write; doctor finds client code another
    code-generator made; build --k8s of an older version generates it in its copy."""
    from kplugin.maintainer import matrix

    minors = ["1.28.3", NEWEST, *([PRERELEASE] if PRERELEASE else [])]
    rows = matrix.rows(minors, tmp_path, with_api=True, points_given="filter,score")
    assert [row[3:6] for row in rows] == [("ok", "ok", "ok")] * len(minors), rows
    assert [row[2] for row in rows] == ["layer + api (new)"] + ["layer + api (upgraded)"] * (len(minors) - 1)
    project = tmp_path / "matrix-layer-api"
    stamp = project / "pkg/generated/code-generator.txt"
    last = resolve(minors[-1])
    assert stamp.read_text() == f"{last.version.staging_tag}\n"

    # a dry run back to the newest minor lists the client code it would write again (the
    # stamp at least: the generators' output of two neighbouring releases is often the same
    # bytes, and a dry run lists only files that would change), and changes nothing
    before = tree(project)
    run = kplugin("upgrade", str(project), "--k8s", NEWEST, "--dry-run", "--json")
    assert run.code == 0, run.stderr
    changed = json.loads(run.stdout)["changed"]
    assert "pkg/generated/code-generator.txt" in changed, changed
    assert tree(project) == before

    # client code of another release: doctor says so, and names the fix
    stamp.write_text("v0.36.5\n")
    run = kplugin("doctor", str(project), "--json")
    (found,) = [f for f in json.loads(run.stdout)["findings"] if f["rule"] == "generated-clients-stale"]
    assert "was made by code-generator v0.36.5" in found["what"] and found["fix"].startswith("make generate"), found
    assert run.code == 1

    # a retargeted copy (build --k8s an older version) generates the code for its version
    run = kplugin("build", str(project), "--k8s", "1.28.3", "--builder", "local", "--output", str(tmp_path / "old"))
    assert run.code == 0, run.stderr[-3000:]
    assert (tmp_path / "old" / "kube-scheduler").is_file(), run.stderr
    assert stamp.read_text() == "v0.36.5\n", "the project itself is not touched"
