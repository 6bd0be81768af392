"""kplugin adopt on the command line: it writes kplugin.yaml and nothing else, never over
an existing one without --force, the same bytes each time; a repository it cannot adopt
exits 2 with one line and nothing written; the commands that do not work on an adopted
repository yet say so in one line."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from support import REPO, Run, tree

from kplugin.model import project as projects

FIXTURES = REPO / "tests/fixtures/adopt"


@pytest.fixture(params=["forkshape", "cobrashape"])
def repository(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES / request.param, tmp_path / request.param))


def test_adopt_writes_kplugin_yaml_and_nothing_else(kplugin: Callable[..., Run], repository: Path) -> None:
    before = tree(repository)
    run = kplugin("adopt", str(repository))
    assert run.code == 0, run.stderr
    after = tree(repository)
    assert set(after) - set(before) == {"kplugin.yaml"}
    assert all(after[name] == content for name, content in before.items())
    project = projects.load(repository, adopted=True)
    assert project.layout is not None and project.plugins
    assert sorted(project.layout.plugins) == sorted(p.name for p in project.plugins)
    assert "Plugins" in run.stdout and "Wrote" in run.stderr


def test_adopt_again_needs_force_and_writes_the_same_bytes(kplugin: Callable[..., Run], repository: Path) -> None:
    assert kplugin("adopt", str(repository)).code == 0
    first = (repository / "kplugin.yaml").read_bytes()
    (repository / "kplugin.yaml").write_text("mine\n")
    again = kplugin("adopt", str(repository))
    assert again.code == 2 and "--force" in again.stderr and len(again.stderr.strip().splitlines()) == 1
    assert (repository / "kplugin.yaml").read_text() == "mine\n"
    assert kplugin("adopt", str(repository), "--force").code == 0
    assert (repository / "kplugin.yaml").read_bytes() == first


def test_a_bad_name_is_refused_naming_the_option(kplugin: Callable[..., Run], repository: Path) -> None:
    before = tree(repository)
    run = kplugin("adopt", str(repository), "--name", "Not A Name")
    assert run.code == 2 and "--name 'Not A Name'" in run.stderr and tree(repository) == before


def test_dry_run_and_json_write_nothing(kplugin: Callable[..., Run], repository: Path) -> None:
    before = tree(repository)
    shown = kplugin("adopt", str(repository), "--dry-run")
    assert shown.code == 0 and "kplugin.yaml (not written: --dry-run)" in shown.stdout
    as_json = kplugin("adopt", str(repository), "--dry-run", "--json")
    assert as_json.code == 0
    found = json.loads(as_json.stdout)
    assert found["written"] is False and found["kpluginYaml"]["adopted"]["plugins"]
    assert tree(repository) == before


@pytest.mark.parametrize("fixture", ["forkedapp", "noplugins", "oldpin"])
def test_a_repository_that_cannot_be_adopted_exits_2_with_nothing_written(
    kplugin: Callable[..., Run], fixture: str, tmp_path: Path
) -> None:
    copy = Path(shutil.copytree(FIXTURES / fixture, tmp_path / fixture))
    before = tree(copy)
    run = kplugin("adopt", str(copy))
    assert run.code == 2 and len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert tree(copy) == before


def test_commands_that_do_not_work_on_an_adopted_repository_say_so(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    copy = Path(shutil.copytree(FIXTURES / "forkshape", tmp_path / "forkshape"))
    assert kplugin("adopt", str(copy)).code == 0
    for command in (
        ["add", "plugin", "Extra", "-p", str(copy)],
        ["add", "api", "Pool", "--group", "pools.example.com", "--version", "v1alpha1", "-p", str(copy)],
    ):
        run = kplugin(*command)
        assert run.code == 2, (command, run.stderr)
        assert "adopted" in run.stderr and len(run.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--args", "args.yaml"], ["--args:", "configuration is its own"]),
        (["--weight", "Capacity=3"], ["--weight:", "configuration is its own"]),
        (["--disable-default", "NodeResourcesFit"], ["--disable-default:", "configuration is its own"]),
    ],
)
def test_e2e_on_an_adopted_repository_refuses_what_shapes_kplugin_s_configuration(
    kplugin: Callable[..., Run], tmp_path: Path, options: list[str], words: list[str]
) -> None:
    copy = Path(shutil.copytree(FIXTURES / "forkshape", tmp_path / "forkshape"))
    assert kplugin("adopt", str(copy)).code == 0
    before = tree(copy)
    run = kplugin("e2e", str(copy), *options)
    assert run.code == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert all(word in run.stderr for word in words), run.stderr
    assert tree(copy) == before, "nothing built"


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda t: t.replace("main: cmd/scheduler", "main: ../elsewhere"), "adopted.main"),
        (lambda t: t.replace("main: cmd/scheduler", 'main: "cmd/scheduler\\nRUN curl x | sh"'), "adopted.main"),
        (lambda t: t.replace("arguments: []", "arguments: ['--kubeconfig=/etc/x']"), "adopted.arguments"),
        (lambda t: t.replace("factory: New", "factory: New()", 1), "factory"),
        (lambda t: t.replace("    Gang:\n", "    Other:\n"), "adopted.plugins"),
        (lambda t: t.replace("- name: Gang", "- name: 'Gang; rm -rf'"), "plugins[1].name"),
    ],
)  # fmt: skip
def test_an_edited_adopted_section_is_refused_naming_the_field(
    kplugin: Callable[..., Run], tmp_path: Path, edit: Callable[[str], str], field: str
) -> None:
    copy = Path(shutil.copytree(FIXTURES / "forkshape", tmp_path / "forkshape"))
    assert kplugin("adopt", str(copy)).code == 0
    meta = copy / "kplugin.yaml"
    meta.write_text(edit(meta.read_text()))
    run = kplugin("build", str(copy), "--builder", "local")
    assert run.code == 2 and field in run.stderr, run.stderr


def test_render_config_shows_the_repository_s_own_configuration(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    copy = Path(shutil.copytree(FIXTURES / "forkshape", tmp_path / "forkshape"))
    assert kplugin("adopt", str(copy)).code == 0
    shown = kplugin("render-config", str(copy))
    assert shown.code == 0, shown.stderr
    assert shown.stdout == (copy / "manifests/capacity/scheduler-config.yaml").read_text()
    # 1.28 still serves v1beta3: both files are candidates, the first is shown and the other named
    older = kplugin("render-config", str(copy), "--k8s", "1.28.3")
    assert (
        older.code == 0
        and "the first of 2 configuration files (manifests/legacy/scheduler-config.yaml)" in older.stderr
    )
    refused = kplugin("render-config", str(copy), "--weight", "Capacity=3")
    assert refused.code == 2 and "--weight: an adopted repository's configuration is its own" in refused.stderr
    meta = copy / "kplugin.yaml"
    meta.write_text(
        meta.read_text().replace(
            "  - path: manifests/capacity/scheduler-config.yaml\n    apiVersion: kubescheduler.config.k8s.io/v1\n", ""
        )
    )
    none = kplugin("render-config", str(copy))
    assert (
        none.code == 2 and "no KubeSchedulerConfiguration file in an apiVersion Kubernetes 1.37.2 serves" in none.stderr
    )
    assert "manifests/legacy/scheduler-config.yaml (kubescheduler.config.k8s.io/v1beta3)" in none.stderr


def test_doctor_reads_what_an_adopted_repository_has(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    fork = Path(shutil.copytree(FIXTURES / "forkshape", tmp_path / "forkshape"))
    assert kplugin("adopt", str(fork)).code == 0
    run = kplugin("doctor", str(fork), "--json")
    assert run.code == 1
    found = {(f["rule"], f"{f['file']}:{f['line']}") for f in json.loads(run.stdout)["findings"]}
    # the legacy file's v1beta3, 1.36's deprecated MaxNodeScore in code kplugin did not write
    assert ("api-version", "manifests/legacy/scheduler-config.yaml:2") in found
    assert any(rule == "api-deprecated" and where.startswith("pkg/spread/spread.go:") for rule, where in found)
    assert not any(rule.startswith(("rbac", "plugin-name", "go-mod")) for rule, _ in found)
    old = Path(shutil.copytree(FIXTURES / "oldframework", tmp_path / "oldframework"))
    assert kplugin("adopt", str(old)).code == 0
    own = kplugin("doctor", str(old), "--json")
    assert own.code == 0, own.stdout
    ahead = kplugin("doctor", str(old), "--k8s", "1.37.2", "--json")
    removed = [f for f in json.loads(ahead.stdout)["findings"] if f["rule"] == "api-removed"]
    assert ahead.code == 1 and removed
    handle = next(f for f in removed if "framework.Handle is gone from 1.35" in f["what"])
    assert handle["file"] == "plugins/gang/gang.go" and "kplugin upgrade --k8s 1.37.2 rewrites it" in handle["fix"]
    refused = kplugin("doctor", str(old), "--config", str(old / "deploy/scheduler-config.yaml"))
    assert refused.code == 2 and "--config" in refused.stderr


def _adopted_copy(kplugin: Callable[..., Run], tmp_path: Path, fixture: str = "forkshape") -> Path:
    copy = Path(shutil.copytree(FIXTURES / fixture, tmp_path / fixture))
    assert kplugin("adopt", str(copy)).code == 0
    return copy


def test_a_recorded_file_that_is_a_link_is_never_read_nor_written(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    copy = _adopted_copy(kplugin, tmp_path)
    outside = tmp_path / "outside.yaml"
    outside.write_text("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\nsecret: x\n")
    legacy = copy / "manifests/legacy/scheduler-config.yaml"
    legacy.unlink()
    legacy.symlink_to(outside)
    shown = kplugin("render-config", str(copy), "--k8s", "1.28.3")  # 1.28 serves both recorded files
    assert shown.code == 0 and "secret" not in shown.stdout  # the first file is the other one
    meta = copy / "kplugin.yaml"
    meta.write_text(
        meta.read_text().replace(
            "  - path: manifests/capacity/scheduler-config.yaml\n    apiVersion: kubescheduler.config.k8s.io/v1\n", ""
        )
    )
    for run in (kplugin("render-config", str(copy), "--k8s", "1.28.3"), kplugin("doctor", str(copy)),
                kplugin("upgrade", str(copy), "--k8s", "1.38.0-beta.0", "--dry-run")):  # fmt: skip
        assert run.code == 2 and "symlink" in run.stderr and "secret" not in run.stdout, run.stderr
    assert outside.read_text().startswith("apiVersion: kubescheduler.config.k8s.io/v1beta3\n")


def test_upgrade_refuses_a_fork_of_kubernetes_and_a_vendored_repository(
    kplugin: Callable[..., Run], tmp_path: Path
) -> None:
    copy = _adopted_copy(kplugin, tmp_path)
    go_mod = copy / "go.mod"
    original = go_mod.read_text()
    go_mod.write_text(original + "\nreplace k8s.io/kubernetes => github.com/acme/kubernetes v1.37.2-acme.1\n")
    before = tree(copy)
    fork = kplugin("upgrade", str(copy), "--k8s", "1.38.0-beta.0")
    assert fork.code == 2 and "with github.com/acme/kubernetes v1.37.2-acme.1 (a fork)" in fork.stderr
    go_mod.write_text(original)
    (copy / "vendor").mkdir()
    (copy / "vendor/modules.txt").write_text("# k8s.io/kubernetes v1.37.2\n")
    vendored = kplugin("upgrade", str(copy), "--k8s", "1.38.0-beta.0")
    assert vendored.code == 2 and "does not move a vendored repository" in vendored.stderr
    assert {k: v for k, v in tree(copy).items() if k != "go.mod" and not k.startswith("vendor/")} == {
        k: v for k, v in before.items() if k != "go.mod"
    }


def test_a_zero_percentage_is_an_option_given(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    copy = _adopted_copy(kplugin, tmp_path)
    run = kplugin("render-config", str(copy), "--percentage-of-nodes-to-score", "0")
    assert run.code == 2 and "--percentage-of-nodes-to-score" in run.stderr


def test_with_workflow_writes_a_workflow_only_where_there_is_none(
    kplugin: Callable[..., Run], repository: Path
) -> None:
    before = tree(repository)
    run = kplugin("adopt", str(repository), "--with", "workflow")
    assert run.code == 0, run.stderr
    added = set(tree(repository)) - set(before)
    assert added == {"kplugin.yaml", ".github/workflows/kplugin.yml"}
    workflow = (repository / ".github/workflows/kplugin.yml").read_text()
    assert "kplugin doctor" in workflow and "kplugin build --builder local" in workflow
    assert "kplugin upgrade --k8s 1.38.0-beta.0 --dry-run" in workflow and "continue-on-error: true" in workflow
    (repository / ".github/workflows/kplugin.yml").write_text("mine\n")
    again = kplugin("adopt", str(repository), "--with", "workflow", "--force")
    assert again.code == 0 and "kplugin.yml exists: not written" in again.stderr
    assert (repository / ".github/workflows/kplugin.yml").read_text() == "mine\n"


@pytest.mark.parametrize(("value", "words"), [("tests", "not for adopted repositories yet"), ("fancy", "choose from")])
def test_with_what_adopt_cannot_write_is_refused_before_anything(
    kplugin: Callable[..., Run], repository: Path, value: str, words: str
) -> None:
    before = tree(repository)
    run = kplugin("adopt", str(repository), "--with", f"workflow,{value}")
    assert run.code == 2 and words in run.stderr and tree(repository) == before


def test_with_deploy_writes_manifests_of_the_repository_s_own_configuration_and_rbac(
    kplugin: Callable[..., Run], tmp_path: Path
) -> None:
    """deploy/kplugin/: kube-scheduler's role plus the rules the repository's manifests bind
    to its scheduler, the repository's configuration in-cluster with the lease the RBAC
    allows, a non-root Deployment of the image kplugin build makes."""
    from ruamel.yaml import YAML

    copy = Path(shutil.copytree(FIXTURES / "crdshape", tmp_path / "crdshape"))
    before = tree(copy)
    run = kplugin("adopt", str(copy), "--with", "deploy")
    assert run.code == 0, run.stderr
    added = set(tree(copy)) - set(before)
    written = ("rbac.yaml", "configmap.yaml", "deployment.yaml")
    assert added == {"kplugin.yaml", *(f"deploy/kplugin/{f}" for f in written)}
    yaml = YAML(typ="safe")
    rbac = list(yaml.load_all((copy / "deploy/kplugin/rbac.yaml").read_text()))
    (role,) = [d for d in rbac if d["kind"] == "ClusterRole"]
    assert any("nodereservations" in r["resources"] for r in role["rules"])
    assert not any("secrets" in r["resources"] for r in role["rules"]), "the agent's role is not the scheduler's"
    (lease,) = [d for d in rbac if d["kind"] == "Role"]
    assert lease["rules"][1]["resourceNames"] == ["fleet-scheduler"]
    config = yaml.load(yaml.load((copy / "deploy/kplugin/configmap.yaml").read_text())["data"]["scheduler-config.yaml"])
    assert "clientConnection" not in config, "in-cluster, not the repository's kubeconfig path"
    assert config["leaderElection"] == {"leaderElect": True, "resourceName": "fleet-scheduler",
                                        "resourceNamespace": lease["metadata"]["namespace"]}  # fmt: skip
    assert config["profiles"][0]["plugins"]["filter"]["enabled"] == [{"name": "NodeReservation"}]
    deployment = yaml.load((copy / "deploy/kplugin/deployment.yaml").read_text())
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["serviceAccountName"] == "crdshape"
    assert pod["containers"][0]["image"] == "crdshape:0.1.0-k8s1.37.2"
    # a repository with no configuration in an apiVersion its pin serves: refused, nothing written
    other = Path(shutil.copytree(FIXTURES / "crdshape", tmp_path / "other"))
    (other / "deploy/scheduler/config.yaml").unlink()
    untouched = tree(other)
    refused = kplugin("adopt", str(other), "--with", "deploy")
    assert refused.code == 2 and "no KubeSchedulerConfiguration file" in refused.stderr and tree(other) == untouched


def test_a_fifo_in_the_repository_is_passed_over_not_read(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    """Reading a FIFO blocks until a writer comes: adopt reads regular files only."""
    import os

    copy = Path(shutil.copytree(FIXTURES / "forkshape", tmp_path / "forkshape"))
    os.mkfifo(copy / "manifests/pipe.yaml")
    os.mkfifo(copy / "pkg/gang/pipe.go")
    run = kplugin("adopt", str(copy), "--dry-run", "--json")
    assert run.code == 0, run.stderr
    found = json.loads(run.stdout)
    assert {"what": "manifests/pipe.yaml", "reason": "not a regular file (a link, FIFO or device), or over 1 MiB"} in (
        found["unused"]
    )
    assert [p["name"] for p in found["kpluginYaml"]["plugins"]] == ["Capacity", "Gang"]


def test_refresh_records_kplugin_yaml_again_from_the_code(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    """An adopted repository has no generated files: refresh reads its code again (a plugin
    registered since adopt), shows the change, writes only kplugin.yaml, and keeps --name."""
    copy = Path(shutil.copytree(FIXTURES / "forkshape", tmp_path / "forkshape"))
    assert kplugin("adopt", str(copy), "--name", "capacity-scheduler").code == 0
    recorded = copy / "kplugin.yaml"
    recorded.write_text(recorded.read_text().replace("image: capacity-scheduler:0.1.0-k8s1.37.2",
                                                     "image: registry.example.com/capacity:2.0"))  # fmt: skip
    fresh = kplugin("refresh", str(copy))
    assert fresh.code == 0 and "nothing to change" in fresh.stderr and fresh.stdout == ""
    main = copy / "cmd/scheduler/main.go"
    text = main.read_text().replace("// app.WithPlugin(spread.Name", "app.WithPlugin(spread.Name")
    gang = '\t"example.com/forkshape/pkg/gang"\n'
    main.write_text(text.replace(gang, gang + '\t"example.com/forkshape/pkg/spread"\n'))
    before = tree(copy)
    preview = kplugin("refresh", str(copy), "--dry-run")
    assert preview.code == 0 and "+    Spread:\n" in preview.stdout and tree(copy) == before
    run = kplugin("refresh", str(copy), "--json")
    assert run.code == 0 and json.loads(run.stdout)["changed"] == ["kplugin.yaml"]
    after = tree(copy)
    assert {n for n in after if after[n] != before.get(n)} == {"kplugin.yaml"}
    project = projects.load(copy, adopted=True)
    assert project.name == "capacity-scheduler" and "Spread" in [p.name for p in project.plugins]
    assert project.image == "registry.example.com/capacity:2.0", "what the file says of the project is kept"


@pytest.mark.parametrize("shape", ["crdshape", "forkshape"])
def test_with_chart_writes_a_chart_of_the_scheduler_deploy_deploys(
    kplugin: Callable[..., Run], tmp_path: Path, shape: str
) -> None:
    """charts/NAME/: values.yaml holds the configuration and rules deploy/kplugin/ has (one
    source); a repository with a charts/NAME/ of its own keeps it whole, nothing written
    into it, and says so. (helm lint and template: tests/integration/test_integration_tools.)"""
    from ruamel.yaml import YAML

    copy = Path(shutil.copytree(FIXTURES / shape, tmp_path / shape))
    before = tree(copy)
    run = kplugin("adopt", str(copy), "--with", "chart,deploy")
    assert run.code == 0, run.stderr
    chart = {f"charts/{shape}/{f}" for f in ("Chart.yaml", "values.yaml", "templates/_helpers.tpl",
             "templates/configmap.yaml", "templates/deployment.yaml", "templates/rbac.yaml")}  # fmt: skip
    assert set(tree(copy)) - set(before) - {"kplugin.yaml"} - chart == {
        f"deploy/kplugin/{f}" for f in ("rbac.yaml", "configmap.yaml", "deployment.yaml")
    }
    yaml = YAML(typ="safe")
    values = yaml.load((copy / f"charts/{shape}/values.yaml").read_text())
    deployed = yaml.load((copy / "deploy/kplugin/configmap.yaml").read_text())["data"]["scheduler-config.yaml"]
    assert values["schedulerConfig"] == yaml.load(deployed)
    (role,) = [d for d in yaml.load_all((copy / "deploy/kplugin/rbac.yaml").read_text()) if d["kind"] == "ClusterRole"]
    assert values["rbac"]["rules"] == role["rules"]
    assert values["image"] == {"repository": shape, "tag": "0.1.0-k8s" + values["image"]["tag"].split("-k8s")[1],
                               "pullPolicy": "IfNotPresent"}  # fmt: skip
    # kplugin.yaml records what --with added: refresh finds nothing to change
    again = kplugin("refresh", str(copy), "--dry-run")
    assert again.code == 0 and "nothing to change" in again.stderr, again.stdout + again.stderr
    # a chart of that name of the repository's own: kept whole
    other = Path(shutil.copytree(FIXTURES / shape, tmp_path / "other"))
    (other / f"charts/{shape}").mkdir(parents=True)
    (other / f"charts/{shape}/README.md").write_text("mine\n")
    untouched = tree(other)
    run = kplugin("adopt", str(other), "--with", "chart")
    assert run.code == 0, run.stderr
    assert f"charts/{shape} exists: not written" in run.stderr
    assert set(tree(other)) - set(untouched) == {"kplugin.yaml"}
