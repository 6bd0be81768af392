"""kplugin e2e on an adopted repository, before anything is built: the run's configuration
is the repository's own file with one profile, and its scheduler's RBAC is kube-scheduler's
own role plus the rules the repository's manifests bind to its scheduler's account."""

from __future__ import annotations

import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import REPO, Run

from kplugin.config import render
from kplugin.core.errors import OperationError, UsageError
from kplugin.e2e import adopted, run
from kplugin.model import ownrbac
from kplugin.model import project as projects

FIXTURES = REPO / "tests/fixtures/adopt"


def manifest_rules(repository: Path) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    layout = projects.load(repository, adopted=True).layout
    assert layout is not None
    return ownrbac.manifest_rules(repository, layout.manifests)


CONFIG = "deploy/scheduler/config.yaml"
RBAC = "deploy/scheduler/rbac.yaml"


@pytest.fixture
def repository(kplugin: Callable[..., Run], tmp_path: Path) -> Path:
    copy = Path(shutil.copytree(FIXTURES / "crdshape", tmp_path / "crdshape"))
    assert kplugin("adopt", str(copy)).code == 0
    return copy


def test_the_run_uses_the_repository_s_file_with_its_scheduler_s_profile_only(repository: Path) -> None:
    text = (repository / CONFIG).read_text()
    second = "  - schedulerName: default-scheduler\n    plugins: {}\n"
    (repository / CONFIG).write_text(second.join(text.split("  - schedulerName: fleet-scheduler\n", 1)).replace(
        "plugins: {}\n", "plugins: {}\n  - schedulerName: fleet-scheduler\n", 1))  # fmt: skip
    project = projects.load(repository, adopted=True)
    config, notes = adopted.own_config(project, project.target)
    assert config.scheduler_name == "fleet-scheduler" and config.api_version == "v1"
    document = config.document()
    assert [p["schedulerName"] for p in document["profiles"]] == ["fleet-scheduler"]
    assert document["profiles"][0]["plugins"]["filter"]["enabled"] == [{"name": "NodeReservation"}]
    assert document["leaderElection"] == {"leaderElect": False}, "no lease for a test scheduler"
    assert "clientConnection" not in document, "the repository's kubeconfig path is not the run's"
    assert notes == (f"{CONFIG}: the run uses profile fleet-scheduler; default-scheduler left out",)
    renamed = run.replace(config, scheduler_names=("run-7-fleet-scheduler",), kubeconfig="/dev/null").document()
    assert renamed["profiles"][0]["schedulerName"] == "run-7-fleet-scheduler"
    assert renamed["clientConnection"] == {"kubeconfig": "/dev/null"}


def test_the_rbac_is_kube_scheduler_s_role_and_what_the_manifests_bind_to_its_account(repository: Path) -> None:
    project = projects.load(repository, adopted=True)
    documents, (note,) = adopted.rbac(project)
    (role,) = [d for d in documents if d["kind"] == "ClusterRole"]
    rules = role["rules"]
    assert {"apiGroups": ["fleet.example.com"], "resources": ["nodereservations"],
            "verbs": ["get", "list", "watch"]} in rules  # fmt: skip
    assert not any("secrets" in r["resources"] for r in rules), "fleet-agent's role is bound to another account"
    assert any("pods" in r["resources"] and "" in r["apiGroups"] for r in rules), "kube-scheduler's own"
    assert note.endswith(f"the rules of {RBAC}")
    # a Deployment of another component (no --config) runs as another account: not the scheduler's
    deployment = repository / "deploy/scheduler/deployment.yaml"
    scheduler = deployment.read_text()
    agent = scheduler.replace("fleet-scheduler", "fleet-agent").replace(
        '"schedule", "--config=/etc/fleet/config.yaml"', '"agent"'
    )
    deployment.write_text(scheduler + "---\n" + agent)
    rules_two, _ = manifest_rules(repository)
    assert not any("secrets" in r["resources"] for r in rules_two)
    # without a scheduler Deployment, every account the manifests bind counts
    deployment.write_text(agent)
    rules_all, _ = manifest_rules(repository)
    assert any("secrets" in r["resources"] for r in rules_all)
    # a recorded manifest that is gone is said, not passed over
    deployment.unlink()
    with pytest.raises(UsageError, match=r"deployment\.yaml is missing"):
        adopted.rbac(projects.load(repository, adopted=True))


def test_wildcards_count_and_non_resource_rules_are_left_out(repository: Path) -> None:
    rbac = repository / RBAC
    rule = '  - apiGroups: ["fleet.example.com"]\n    resources: ["nodereservations"]\n'
    text = rbac.read_text().replace(
        rule + '    verbs: ["get", "list", "watch"]',
        '  - nonResourceURLs: ["/metrics"]\n    verbs: ["get"]\n  - apiGroups: ["*"]\n    resources: ["*"]\n'
        '    verbs: ["*"]',
    )
    assert text != rbac.read_text()
    rbac.write_text(text)
    documents, _ = adopted.rbac(projects.load(repository, adopted=True))
    (role,) = [d for d in documents if d["kind"] == "ClusterRole"]
    assert {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]} in role["rules"]
    assert not any("nonResourceURLs" in r for r in role["rules"])


def test_a_configuration_file_of_several_documents_and_extenders(repository: Path) -> None:
    config = repository / CONFIG
    text = config.read_text() + "extenders:\n- urlPrefix: http://gpu-extender:8888\n  filterVerb: filter\n"
    config.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n---\n" + text)
    project = projects.load(repository, adopted=True)
    own, notes = adopted.own_config(project, project.target)
    assert own.scheduler_name == "fleet-scheduler" and "extenders" not in own.document()
    assert notes == (f"{CONFIG}: its extenders are left out (the run does not start them)",)


def test_a_crd_the_manifests_do_not_let_the_scheduler_watch_stops_the_run(
    kplugin: Callable[..., Run], repository: Path
) -> None:
    rbac = repository / RBAC
    rbac.write_text(rbac.read_text().replace('resources: ["nodereservations"]', 'resources: ["nodepools"]'))
    refused = kplugin("e2e", str(repository))
    assert refused.code == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "deploy/crds/nodereservations.yaml (NodeReservation)" in refused.stderr
    assert "nodereservations.fleet.example.com" in refused.stderr and "--admin" in refused.stderr
    assert not (repository / ".kplugin").exists(), "refused before anything is built"
    project = projects.load(repository, adopted=True)
    with pytest.raises(UsageError, match="no list and watch on nodereservations"):
        run.prepare(project, None, None, admin=False)
    admin = run.prepare(project, None, None, admin=True)
    assert admin.rbac is None and admin.config.scheduler_name == "fleet-scheduler"


def test_the_default_scenario_holds_the_repository_s_crds(repository: Path) -> None:
    project = projects.load(repository, adopted=True)
    inputs = run.prepare(project, None, None, admin=False)
    assert [o.name for o in inputs.scenario.objects][:1] == ["nodereservations.fleet.example.com"]
    assert inputs.rbac is not None and inputs.config.node_rejections is False


def test_a_scheduler_that_waits_for_an_api_server_is_undecided_not_refused(tmp_path: Path) -> None:
    """A plugin's factory that waits for an informer's sync keeps kube-scheduler from ever
    writing its configuration when no API server answers: the verdict is None, said."""
    waits = tmp_path / "kube-scheduler"
    waits.write_text("#!/bin/sh\nexec sleep 30\n")
    waits.chmod(waits.stat().st_mode | stat.S_IXUSR)
    accepted, message = render.validate(waits, "kind: KubeSchedulerConfiguration\n", "the e2e configuration",
                                        patience=1)  # fmt: skip
    assert accepted is None
    assert "did not finish loading the e2e configuration within 1s" in message and "informer" in message


def test_the_run_s_check_goes_on_undecided_for_an_adopted_repository_only(
    repository: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The binary gets the recorded word before its flags; when it does not finish, an
    adopted repository's run goes on with a note, a generated project's stops (its
    plugins wait for nothing: something is wrong)."""
    seen = tmp_path / "argv"
    waits = tmp_path / "kube-scheduler"
    waits.write_text(f'#!/bin/sh\necho "$@" > {seen}\nexec sleep 30\n')
    waits.chmod(waits.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(render, "ADOPTED_PATIENCE", 1.0)
    monkeypatch.setattr(render, "PATIENCE", 1.0)
    inputs = run.prepare(projects.load(repository, adopted=True), None, None, admin=False)
    said = run.check_config(inputs, waits)
    assert said is not None and said.endswith("the run's scheduler loads it against the control plane")
    assert seen.read_text().split()[0] == "schedule", "the recorded word comes before the flags"
    generated = run.Inputs(inputs.project._replace(layout=None), inputs.scenario, inputs.config, None)
    with pytest.raises(OperationError, match="did not finish loading the e2e configuration within 1s"):
        run.check_config(generated, waits)
    # bench's check of its two profiles is the same one
    from kplugin.bench import run as bench

    benched = bench.prepare(inputs.project, "basic", nodes=10, pods=10)
    said = bench.check_config(benched, waits, bench.Settings())
    assert said is not None and said.endswith("each run's scheduler loads it against the cluster")


def test_render_config_validate_on_an_adopted_repository_says_undecided_after_its_patience(
    kplugin: Callable[..., Run], repository: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """render-config --validate must give a verdict: when the repository's scheduler never
    finishes loading (a factory waiting for an API server), it fails after the adopted
    patience (e2e's 10 s, not 120 s) and names the run that can decide."""
    waits = tmp_path / "kube-scheduler"
    waits.write_text("#!/bin/sh\nexec sleep 30\n")
    waits.chmod(waits.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(render, "ADOPTED_PATIENCE", 1.0)
    result = kplugin("render-config", str(repository), "--validate", "--binary", str(waits))
    assert result.code == 1, result.stderr
    assert "within 1s" in result.stderr and "kplugin e2e loads it against a real control plane" in result.stderr


def test_a_retargeted_copy_s_run_reads_the_copy_s_own_files(repository: Path, tmp_path: Path) -> None:
    """e2e --k8s runs the moved copy: its configuration and manifests, not the repository's."""
    inputs = run.prepare(projects.load(repository, adopted=True), None, None, admin=False)
    copy = Path(shutil.copytree(repository, tmp_path / "moved"))
    config = copy / CONFIG
    config.write_text(config.read_text().replace("fleet-scheduler", "moved-scheduler"))
    rbac = copy / RBAC
    watch = 'verbs: ["get", "list", "watch"'
    rbac.write_text(rbac.read_text().replace(watch + "]", watch + ', "patch"]'))
    moved = run.for_copy(inputs, projects.load(copy, adopted=True))
    assert moved.project.root == copy and moved.scenario is inputs.scenario
    assert moved.config.scheduler_name == "moved-scheduler"
    assert moved.rbac is not None
    (role,) = [d for d in moved.rbac if d["kind"] == "ClusterRole"]
    assert any("patch" in r["verbs"] and "nodereservations" in r["resources"] for r in role["rules"])


def test_what_kept_an_adopted_repository_s_scheduler_from_working_names_its_own_files() -> None:
    with pytest.raises(OperationError) as denied:
        run.check_ready(["list nodereservations.fleet.example.com"], [], "system:serviceaccount:x:y", adopted=True)
    assert str(denied.value).startswith("the repository's RBAC manifests do not let the scheduler")
    assert "a ClusterRole they bind to its ServiceAccount" in str(denied.value)
    assert "config/rbac/rules.yaml" not in str(denied.value)
    with pytest.raises(OperationError, match=r"to the repository and run kplugin refresh"):
        run.check_ready([], ["nodereservations.fleet.example.com/v1"], "admin", adopted=True)


def test_kube_apiserver_is_built_with_the_staging_replaces_the_repository_lacks(
    repository: Path, tmp_path: Path
) -> None:
    """A repository may replace only the staging modules its scheduler needs (pfnet's lacks
    k8s.io/externaljwt and k8s.io/endpointslice), or one with its own; kube-apiserver (cached
    by version) is built with a go.mod copy that replaces them all with the release's.
    The repository's go.mod is not changed."""
    from kplugin.kube import controlplane

    go_mod = repository / "go.mod"
    lacking = "".join(
        line for line in go_mod.read_text().splitlines(keepends=True)
        if not line.lstrip().startswith(("k8s.io/externaljwt =>", "k8s.io/endpointslice =>"))
    )  # fmt: skip
    lacking = lacking.replace("k8s.io/client-go => k8s.io/client-go v0.37.2", "k8s.io/client-go => ../client-go")
    go_mod.write_text(lacking)
    copy = tmp_path / "go.mod"
    copy.write_text(lacking)
    controlplane._official_replaces(projects.load(repository, adopted=True), copy)
    moved = copy.read_text()
    assert "k8s.io/externaljwt => k8s.io/externaljwt v0.37.2" in moved
    assert "k8s.io/endpointslice => k8s.io/endpointslice v0.37.2" in moved
    assert moved.count("k8s.io/client-go => k8s.io/client-go v0.37.2") == 1 and "../client-go" not in moved
    assert go_mod.read_text() == lacking


def test_a_crd_two_recorded_files_define_is_taken_once(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    """scheduler-plugins defines podgroups.scheduling.x-k8s.io in two files: created once."""
    copy = Path(shutil.copytree(FIXTURES / "crdshape", tmp_path / "crdshape"))
    shutil.copy(copy / "deploy/crds/nodereservations.yaml", copy / "deploy/crds/again.yaml")
    assert kplugin("adopt", str(copy)).code == 0
    project = projects.load(copy, adopted=True)
    assert project.layout is not None and len(project.layout.crds) == 2
    (only,) = project.crd_definitions()
    assert str(only.file) == "deploy/crds/again.yaml", "the first recorded file, by name"
