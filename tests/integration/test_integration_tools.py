"""The real tools check what kplugin generates: golangci-lint with the generated
.golangci.yml through the generated Makefile (every extension point, both API modes,
the oldest and the newest minor); helm lint and helm template on the generated chart;
actionlint on the generated CI workflow; and deploy/ and the rendered chart created with
a server-side dry run on a real kube-apiserver (the one kplugin e2e starts) at the oldest
and the newest minor. The tools are the versions kplugin.model.tools pins, installed by
scripts/setup-test-env, or here when they are missing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from support import every_point

from kplugin.model.tools import GOLANGCI_LINT, TOOLS
from kplugin.model.versions import newest_release, resolve

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
OLDEST = "1.28.3"  # shared with the other integration tests, so the Go caches are too
NEWEST = str(resolve(newest_release().key).version)
Tool = Callable[[str], Path]


@pytest.fixture(scope="session")
def tool() -> Tool:
    """The path of a pinned tool, installed first if missing (once per run)."""
    from kplugin.maintainer import tools

    found: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in found:
            found[name] = tools.ensure(TOOLS[name], lambda line: print(line, file=sys.stderr))
        return found[name]

    return get


# Go builds as the rest of the suite and the tools' set-up do (kplugin.maintainer.tools):
# golangci-lint type-checks the project's dependencies from Go's build cache, which then
# holds them already (tests/integration/conftest.py), and make lint's go install of
# golangci-lint finds the set-up's packages; with other flags both compile again (minutes
# on a cold cache)
GO_FLAGS = {"CGO_ENABLED": "0", "GOFLAGS": "-trimpath"}


def run(cmd: list[str], cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=cwd, env={**os.environ, **GO_FLAGS, **env}, capture_output=True, text=True, timeout=1800, check=False
    )


def new(parent: Path, name: str, version: str, *options: str) -> Path:
    """``kplugin new`` as a user runs it (a subprocess: these projects outlive one test)."""
    done = run(
        [sys.executable, "-m", "kplugin", "new", name, "--k8s", version, "-o", str(parent), *options],
        PYTHONPATH=str(REPO),
        CI="true",
    )
    assert done.returncode == 0, done.stderr
    return parent / name


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str, str], Path]]:
    """A tidied project with every extension point per (version, API mode), made once.

    All have one name (in folders of their own): golangci-lint's cache of the
    dependencies' analysis served a second project of the same version only when its
    module path was the same (measured at 1.37.2 on a cold cache: 27 CPU-seconds for the
    native project after the layer one, 95 under another name)."""
    parent = tmp_path_factory.mktemp("lint")
    made: dict[tuple[str, str], Path] = {}

    def get(version: str, api: str) -> Path:
        if (version, api) not in made:
            where = parent / f"{api}-{version.replace('.', '-')}"
            where.mkdir()
            made[version, api] = new(where, "every", version, "--api", api, "--extension-points", every_point(version))
        return made[version, api]

    yield get


# --- golangci-lint ---------------------------------------------------------------------

# golangci-lint type-checks through `go list -export`, which compiles the packages it
# reads: with kplugin build's flags they are the build cache's entries of the builds
# (tests/conftest.py's go_env), not a second compile of Kubernetes per version
AS_BUILT = {"CGO_ENABLED": "0", "GOFLAGS": "-mod=mod -trimpath"}


@pytest.mark.parametrize("api", ["layer", "native"])
@pytest.mark.parametrize("version", [OLDEST, NEWEST])
def test_golangci_lint_passes_on_every_extension_point(
    tool: Tool, projects: Callable[[str, str], Path], version: str, api: str, tmp_path: Path
) -> None:
    """make lint (the pinned golangci-lint, found in Go's bin directory, with the generated
    .golangci.yml) finds nothing; nor does the same configuration with the generated
    zz_generated.* files included, which users' runs leave out."""
    binary = tool("golangci-lint")
    project = projects(version, api)
    done = run(["make", "lint"], cwd=project, GOLANGCI_LINT=str(binary), **AS_BUILT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "installing golangci-lint" not in done.stdout
    assert "0 issues." in done.stdout
    config = YAML(typ="safe").load(project / ".golangci.yml")
    exclusions = config["linters"]["exclusions"]
    exclusions["generated"] = "disable"
    # The adapter calls the plugin's methods as a.Plugin.Method on purpose: it has
    # methods of the same names, and at some minors one of them would be its own.
    exclusions["rules"] = [{"path": r"zz_generated\.adapter\.go", "linters": ["staticcheck"], "text": "QF1008"}]
    strict = tmp_path / "golangci-generated.yml"
    YAML().dump(config, strict)
    done = run([str(binary), "run", "-c", str(strict), "./..."], cwd=project, **AS_BUILT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 issues." in done.stdout


def test_make_lint_installs_the_pinned_golangci_lint_when_missing(
    tool: Tool, projects: Callable[[str, str], Path], tmp_path: Path
) -> None:
    tool("golangci-lint")  # its packages are in Go's build cache: here it is only linked
    project = projects(OLDEST, "layer")
    binary = tmp_path / "bin" / "golangci-lint"
    done = run(["make", "lint", f"GOLANGCI_LINT={binary}"], cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"installing golangci-lint {GOLANGCI_LINT.version} into {binary.parent}/" in done.stdout
    assert "0 issues." in done.stdout
    built = run(["go", "version", "-m", str(binary)]).stdout
    assert f"\tmod\t{GOLANGCI_LINT.module}\t{GOLANGCI_LINT.version}\t" in built
    again = run(["make", "lint", f"GOLANGCI_LINT={binary}"], cwd=project)
    assert again.returncode == 0 and "installing" not in again.stdout


# --- actionlint --------------------------------------------------------------------------


@pytest.mark.parametrize("api", ["layer", "native"])
def test_actionlint_passes_on_the_workflow(tool: Tool, tmp_path: Path, api: str) -> None:
    project = new(tmp_path, "gpu", OLDEST, "--api", api, "--no-tidy")
    workflow = project / ".github/workflows/ci.yml"
    done = run([str(tool("actionlint")), "-no-color", str(workflow)], cwd=project)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    # and it would say so: a matrix value the job does not define is an error
    workflow.write_text(workflow.read_text().replace("run: go vet ./...", "run: echo ${{ matrix.kubernetes }}"))
    done = run([str(tool("actionlint")), "-no-color", str(workflow)], cwd=project)
    assert done.returncode == 1 and 'property "kubernetes" is not defined' in done.stdout, done.stdout


# --- helm --------------------------------------------------------------------------------

CHART_ONLY_LABEL = "app.kubernetes.io/instance"


def without_release(document: dict[str, Any]) -> dict[str, Any]:
    """A rendered object less what only a chart release adds: the instance label and
    the configuration's checksum on the pod template."""
    document["metadata"]["labels"].pop(CHART_ONLY_LABEL)
    if document["kind"] == "Deployment":
        template = document["spec"]["template"]["metadata"]
        template["labels"].pop(CHART_ONLY_LABEL)
        assert len(template.pop("annotations")["checksum/config"]) == 64
    if document["kind"] == "ConfigMap":
        document["data"] = {k: YAML(typ="safe").load(v) for k, v in document["data"].items()}
    return document


@pytest.mark.parametrize("version", [OLDEST, NEWEST])
def test_helm_lints_and_renders_the_chart_as_deploy(tool: Tool, tmp_path: Path, version: str) -> None:
    """helm lint --strict passes (its one remark: no icon); helm template into the
    namespace deploy/ uses renders deploy/'s objects, field for field."""
    helm = str(tool("helm"))
    project = new(tmp_path, "gpu", version, "--no-tidy")
    chart = project / "charts/gpu"
    done = run([helm, "lint", "--strict", str(chart)])
    assert done.returncode == 0, done.stdout + done.stderr
    remarks = [line for line in done.stdout.splitlines() if line.startswith("[")]
    assert remarks == ["[INFO] Chart.yaml: icon is recommended"]
    assert_renders_as(helm, chart, project / "deploy")


def assert_renders_as(helm: str, chart: Path, deploy: Path) -> None:
    """helm template of ``chart`` into the namespace ``deploy``'s manifests use renders
    their objects, field for field (less what only a release adds)."""
    done = run([helm, "template", "rel", str(chart), "--namespace", "kube-system"])
    assert done.returncode == 0, done.stderr
    yaml = YAML(typ="safe")
    rendered = [without_release(d) for d in yaml.load_all(done.stdout) if d]
    files = ("rbac.yaml", "configmap.yaml", "deployment.yaml")
    deployed = [d for name in files for d in yaml.load_all(deploy / name)]
    for document in deployed:
        if document["kind"] == "ConfigMap":
            document["data"] = {k: yaml.load(v) for k, v in document["data"].items()}

    def key(d: dict[str, Any]) -> tuple[str, str]:
        return d["kind"], d["metadata"]["name"]

    assert sorted(rendered, key=key) == sorted(deployed, key=key)


@pytest.mark.parametrize("shape", ["crdshape", "forkshape"])
def test_an_adopted_repository_s_chart_lints_and_renders_as_its_deploy(tool: Tool, tmp_path: Path, shape: str) -> None:
    """kplugin adopt --with chart,deploy: helm lint --strict passes on the chart, and helm
    template renders what deploy/kplugin/ holds, on two repository shapes (an own CRD and
    its RBAC; scheduler-plugins' layout with several plugins)."""
    import shutil

    helm = str(tool("helm"))
    repository = Path(shutil.copytree(REPO / "tests/fixtures/adopt" / shape, tmp_path / shape))
    done = run([sys.executable, "-m", "kplugin", "adopt", str(repository), "--with", "chart,deploy"])
    assert done.returncode == 0, done.stderr
    chart = repository / "charts" / shape
    done = run([helm, "lint", "--strict", str(chart)])
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line for line in done.stdout.splitlines() if line.startswith("[")] == [
        "[INFO] Chart.yaml: icon is recommended"
    ]
    assert_renders_as(helm, chart, repository / "deploy/kplugin")


def test_helm_values_reach_the_objects(tool: Tool, tmp_path: Path) -> None:
    project = new(tmp_path, "gpu", OLDEST, "--no-tidy")
    values = "replicas=2,image.tag=v9,resources.limits.memory=1Gi,schedulerName=other"
    chart = project / "charts/gpu"
    done = run([str(tool("helm")), "template", "rel", str(chart), "--namespace", "sched", "--set", values])
    assert done.returncode == 0, done.stderr
    objects = {(d["kind"], d["metadata"]["name"]): d for d in YAML(typ="safe").load_all(done.stdout) if d}
    deployment = objects["Deployment", "gpu"]
    assert deployment["metadata"]["namespace"] == "sched"
    assert deployment["spec"]["replicas"] == 2
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "gpu:v9"
    assert container["resources"]["limits"] == {"memory": "1Gi"}
    lease = objects["Role", "gpu-leader-election"]
    assert lease["metadata"]["namespace"] == "kube-system"  # where the configuration puts the lease
    assert lease["rules"][1]["resourceNames"] == ["other"]
    assert objects["ClusterRoleBinding", "gpu"]["subjects"][0]["namespace"] == "sched"


# --- a server-side dry run on a real kube-apiserver -------------------------------------


DRY_RUN = "dryRun=All&fieldValidation=Strict"


class Resources:
    """Where to create an object, from the API server's own discovery."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self.found: dict[str, dict[str, tuple[str, bool]]] = {}

    def path(self, document: dict[str, Any], namespace: str | None) -> str:
        group_version = document["apiVersion"]
        base = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
        if group_version not in self.found:
            listed = self.api.get(base)["resources"]
            self.found[group_version] = {
                r["kind"]: (r["name"], r["namespaced"]) for r in listed if "/" not in r["name"]
            }
        plural, namespaced = self.found[group_version][document["kind"]]
        if namespaced:
            return f"{base}/namespaces/{document['metadata'].get('namespace', namespace)}/{plural}"
        return f"{base}/{plural}"


@pytest.mark.parametrize("version", [OLDEST, NEWEST])
def test_deploy_and_the_chart_pass_a_server_side_dry_run(tool: Tool, tmp_path: Path, version: str) -> None:
    """Every object of deploy/ and of the chart rendered into a namespace of its own is
    accepted by the real API server, admission and strict field validation included
    (?dryRun=All&fieldValidation=Strict), and none is stored."""
    from kplugin.core.errors import OperationError
    from kplugin.kube.controlplane import ControlPlane, apiserver_binary
    from kplugin.model.project import load

    # tidied as a user's: an untidied go.mod requires the staging modules at v0.0.0, and
    # -trimpath keys each compiled package by its module's version, so kube-apiserver
    # would be compiled again instead of found in the Go cache the run shares
    project = new(tmp_path, "gpu", version)
    rendered = run([str(tool("helm")), "template", "rel", str(project / "charts/gpu"), "--namespace", "scheduling"])
    assert rendered.returncode == 0, rendered.stderr
    yaml = YAML(typ="safe")
    chart = [d for d in yaml.load_all(rendered.stdout) if d]
    deploy = [d for p in sorted((project / "deploy").glob("*.yaml")) for d in yaml.load_all(p) if "kind" in d]
    deploy = [d for d in deploy if d["kind"] != "KubeSchedulerConfiguration"]
    assert len(chart) == 9 and len(deploy) == 10, (len(chart), len(deploy))
    apiserver = apiserver_binary(load(project), lambda _: None)
    work = tmp_path / "control-plane"
    work.mkdir()
    with ControlPlane(work, apiserver, lambda _: None) as plane:
        api = plane.api
        assert api is not None
        api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "scheduling"}})
        resources = Resources(api)
        for namespace, documents in (("kube-system", deploy), ("scheduling", chart)):
            for document in documents:
                path = resources.path(document, namespace)
                created = api.create(f"{path}?{DRY_RUN}", document)
                name = document["metadata"]["name"]
                assert (created["kind"], created["metadata"]["name"]) == (document["kind"], name)
                with pytest.raises(OperationError, match=": 404 "):
                    api.get(f"{path}/{name}")
        # a project's own kinds: deploy/crds.yaml and the chart's crds/ (examples/team-quota)
        example = REPO / "examples" / "team-quota"
        included = run([str(tool("helm")), "template", "rel", str(example / "charts/team-quota"), "--include-crds"])
        assert included.returncode == 0, included.stderr
        chart_crds = [d for d in yaml.load_all(included.stdout) if d and d["kind"] == "CustomResourceDefinition"]
        deploy_crds = list(yaml.load_all((example / "deploy/crds.yaml").read_text()))
        assert chart_crds == deploy_crds and len(deploy_crds) == 1
        for document in deploy_crds:
            path = resources.path(document, None)
            created = api.create(f"{path}?{DRY_RUN}", document)
            assert created["metadata"]["name"] == "quotas.quota.example.com"
            with pytest.raises(OperationError, match=": 404 "):
                api.get(f"{path}/quotas.quota.example.com")
        # and it would say so: a field the API does not have is refused
        deployment = next(d for d in deploy if d["kind"] == "Deployment")
        deployment["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
        unknown = 'unknown field "spec.template.spec.containers[0].imagePullPolicyy"'
        with pytest.raises(OperationError, match=re.escape(unknown)):
            api.create(f"{resources.path(deployment, 'kube-system')}?{DRY_RUN}", deployment)
