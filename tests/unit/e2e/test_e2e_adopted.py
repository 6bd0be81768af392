"""kplugin e2e on an adopted repository, before anything is built: the run's configuration
is the repository's own file with one profile, and its scheduler's RBAC is kube-scheduler's
own role plus the rules the repository's manifests bind to its scheduler's account."""

from __future__ import annotations

import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from support import REPO, Run

from kplugin.config import render
from kplugin.core.errors import UsageError
from kplugin.e2e import adopted, run
from kplugin.model import project as projects

FIXTURES = REPO / "tests/fixtures/adopt"
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
    # without a Deployment naming an account, every account the manifests bind counts
    (repository / "deploy/scheduler/deployment.yaml").unlink()
    rules_all, _ = adopted.manifest_rules(projects.load(repository, adopted=True))
    assert any("secrets" in r["resources"] for r in rules_all)


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
