"""An adopted repository builds with kplugin build: the main package adopt recorded, with
the local Go toolchain, static, stamped with its pin and verified with the arguments
before the scheduler's flags; the repository's own files stay as they were."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from support import REPO, Run, tree

from kplugin.core import elf
from kplugin.model.versions import resolve

pytestmark = pytest.mark.integration

FIXTURES = REPO / "tests/fixtures/adopt"


@pytest.mark.parametrize(
    ("fixture", "version", "arguments"),
    [("forkshape", "v1.37.2", []), ("cobrashape", "v1.36.5", ["scheduler"])],
)
def test_an_adopted_repository_builds_its_own_main_package(
    kplugin: Callable[..., Run], tmp_path: Path, fixture: str, version: str, arguments: list[str]
) -> None:
    repository = Path(shutil.copytree(FIXTURES / fixture, tmp_path / fixture))
    assert kplugin("adopt", str(repository)).code == 0
    before = tree(repository)
    run = kplugin("build", str(repository), "--builder", "local", "--json")
    assert run.code == 0, run.stderr
    built = json.loads(run.stdout)
    assert built["builder"] == "local" and built["kubernetes"] == version
    binary = repository / ".kplugin/bin/kube-scheduler"
    assert built["binaries"][0]["path"] == str(binary) and elf.inspect(binary).static
    said = subprocess.run([str(binary), *arguments, "--version"], capture_output=True, text=True, check=True)
    assert said.stdout.strip() == f"Kubernetes {version}"
    # the scheduler's own flags are behind the recorded arguments: its help lists them
    help_text = subprocess.run([str(binary), *arguments, "--help"], capture_output=True, text=True, check=True)
    assert "--config" in help_text.stdout
    after = {name: content for name, content in tree(repository).items() if not name.startswith(".kplugin/")}
    assert after == before


def _adopted(kplugin: Callable[..., Run], tmp_path: Path, fixture: str) -> Path:
    repository = Path(shutil.copytree(FIXTURES / fixture, tmp_path / fixture))
    assert kplugin("adopt", str(repository)).code == 0
    return repository


@pytest.mark.parametrize(
    ("fixture", "version", "arguments", "migrated"),
    [
        ("forkshape", "1.38.0-beta.0", [], ["manifests/legacy/scheduler-config.yaml"]),
        ("cobrashape", "1.37.2", ["scheduler"], []),
    ],
)
def test_upgrade_moves_an_adopted_repository_and_it_builds_there(
    kplugin: Callable[..., Run], tmp_path: Path, fixture: str, version: str, arguments: list[str], migrated: list[str]
) -> None:
    repository = _adopted(kplugin, tmp_path, fixture)
    before = tree(repository)
    preview = kplugin("upgrade", str(repository), "--k8s", version, "--dry-run")
    assert preview.code == 0, preview.stderr
    assert f"+\tk8s.io/kubernetes v{version}" in preview.stdout and tree(repository) == before
    run = kplugin("upgrade", str(repository), "--k8s", version, "--json")
    assert run.code == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["migrated"] == migrated and "go.mod" in result["changed"] and "kplugin.yaml" in result["changed"]
    go_mod = (repository / "go.mod").read_text()
    staging = resolve(version).version.staging_tag
    assert f"k8s.io/kubernetes v{version}" in go_mod
    assert all(f"{m} => {m} {staging}" in go_mod for m in resolve(version).release.staging_modules)
    for path in migrated:
        assert "apiVersion: kubescheduler.config.k8s.io/v1\n" in (repository / path).read_text()
    assert f"kubernetes: {version}\n" in (repository / "kplugin.yaml").read_text()
    built = json.loads(kplugin("build", str(repository), "--builder", "local", "--json").stdout)
    assert built["kubernetes"] == f"v{version}"
    binary = repository / ".kplugin/bin/kube-scheduler"
    said = subprocess.run([str(binary), *arguments, "--version"], capture_output=True, text=True, check=True)
    assert said.stdout.strip() == f"Kubernetes v{version}"


def test_an_upgrade_that_leaves_a_compile_error_names_it_and_changes_nothing(
    kplugin: Callable[..., Run], tmp_path: Path
) -> None:
    repository = _adopted(kplugin, tmp_path, "forkshape")
    before = tree(repository)
    # 1.37's QueuedEntityInfo is renamed back to QueuedPodInfo mechanically; GetPriority,
    # which only 1.37's has, is the error left
    run = kplugin("upgrade", str(repository), "--k8s", "1.36.5")
    assert run.code == 1
    lines = run.stderr.strip().splitlines()
    error = next(i for i, line in enumerate(lines) if line.startswith("kplugin: error:"))
    assert "does not compile at Kubernetes 1.36.5 after the mechanical rewrites" in lines[error]
    assert any(line.strip().startswith("pkg/gang/gang.go:") and "GetPriority undefined" in line for line in lines[1:])
    assert any("1.37: QueueSort compares QueuedEntityInfo" in line for line in lines)
    assert tree(repository) == before


def test_code_written_for_1_34_is_rewritten_for_1_37_and_its_tests_pass(
    kplugin: Callable[..., Run], tmp_path: Path, go_env: dict[str, str]
) -> None:
    """oldframework spells the plugin interfaces, Handle and MaxNodeScore from 1.34's
    k8s.io/kubernetes/pkg/scheduler/framework, tests included; 1.35 moved them to
    k8s.io/kube-scheduler/framework and 1.36 renamed MaxNodeScore."""
    repository = _adopted(kplugin, tmp_path, "oldframework")
    run = kplugin("upgrade", str(repository), "--k8s", "1.37.2", "--json")
    assert run.code == 0, run.stderr
    rewritten = json.loads(run.stdout)["rewritten"]
    assert sorted(rewritten) == ["plugins/gang/gang.go", "plugins/spread/spread.go", "plugins/spread/spread_test.go"]
    assert "framework.Handle -> fwk.Handle" in rewritten["plugins/gang/gang.go"]
    assert "framework.MaxNodeScore -> fwk.MaxScore" in rewritten["plugins/spread/spread.go"]
    for path in rewritten:
        assert "k8s.io/kubernetes/pkg/scheduler/framework" not in (repository / path).read_text()
    tested = subprocess.run(["go", "test", "./..."], cwd=repository, env=go_env, capture_output=True, text=True)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "ok  \texample.com/oldframework/plugins/spread" in tested.stdout


def test_a_native_project_moves_across_minors_with_its_code_rewritten(
    kplugin: Callable[..., Run], tmp_path: Path, go_env: dict[str, str]
) -> None:
    points = "prefilter,filter,postfilter,prescore,score,reserve,permit,enqueueextensions"
    made = kplugin(
        "new", "nat", "--k8s", "1.34.12", "--api", "native", "--extension-points", points, "-o", str(tmp_path)
    )
    assert made.code == 0, made.stderr
    project = tmp_path / "nat"
    run = kplugin("upgrade", str(project), "--k8s", "1.37.2", "--json")
    assert run.code == 0, run.stderr
    changed = json.loads(run.stdout)["changed"]
    assert "pkg/nat/plugin.go" in changed and "pkg/nat/plugin_test.go" in changed
    code = (project / "pkg/nat/plugin.go").read_text()
    assert "h fwk.Handle" in code and 'k8s.io/kubernetes/pkg/scheduler/framework"' not in code
    tested = subprocess.run(["go", "test", "./..."], cwd=project, env=go_env, capture_output=True, text=True)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_render_config_validates_the_repository_s_configuration_with_its_own_scheduler(
    kplugin: Callable[..., Run], tmp_path: Path
) -> None:
    accepted = _adopted(kplugin, tmp_path, "cobrashape")  # started as 'platform scheduler --config ...'
    run = kplugin("render-config", str(accepted), "--validate")
    assert run.code == 0, run.stderr
    assert "accepts the configuration" in run.stderr and (accepted / ".kplugin/bin/kube-scheduler").is_file()
    # forkshape's Capacity asserts its Args type, which the repository never registers in the
    # scheduler's scheme: the real kube-scheduler refuses to start the profile
    rejected = _adopted(kplugin, tmp_path, "forkshape")
    run = kplugin("render-config", str(rejected), "--validate")
    assert run.code == 1
    assert (
        'initializing plugin "Capacity": Capacity: want args of type CapacityArgs, got *runtime.Unknown' in run.stderr
    )


def test_a_dependency_that_needs_cgo_is_named_and_builds_with_cgo(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    """cgoshape's GPUFit calls a driver binding whose only file imports "C" (as NVIDIA's
    go-nvml does): without cgo the binding has no Free, and go build's error alone says
    nothing of why."""
    repository = _adopted(kplugin, tmp_path, "cgoshape")
    static = kplugin("build", str(repository), "--builder", "local")
    assert static.code == 1
    error = next(line for line in static.stderr.splitlines() if line.startswith("kplugin: error:"))
    assert "with CGO_ENABLED=0 fails: example.com/gpuinfo needs cgo" in error and "--cgo" in error
    assert "undefined: gpuinfo.Free" in static.stderr
    refused = kplugin("build", str(repository), "--cgo", "--builder", "docker")
    assert refused.code == 2 and "--cgo builds with --builder local" in refused.stderr
    run = kplugin("build", str(repository), "--cgo", "--json")
    assert run.code == 0, run.stderr
    (binary,) = json.loads(run.stdout)["binaries"]
    assert binary["static"] is False and binary["version"] == "Kubernetes v1.37.2"
    assert not elf.inspect(repository / ".kplugin/bin/kube-scheduler").static
    # upgrade's compile check takes the binding with cgo too; the binding's go.mod was
    # written against 1.34's apimachinery, which the move's replace set overrides
    moved = kplugin("upgrade", str(repository), "--k8s", "1.36.5", "--dry-run", "--json")
    assert moved.code == 0, moved.stderr
    assert json.loads(moved.stdout)["notices"] == [
        "example.com/gpuinfo@v0.0.0 requires k8s.io/apimachinery v0.34.12: the replace set makes it v0.36.5 "
        "(Kubernetes 1.36); check that it works there"
    ]


def test_the_workflow_adopt_writes_passes_actionlint(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    from kplugin.maintainer import tools
    from kplugin.model.tools import TOOLS

    repository = Path(shutil.copytree(FIXTURES / "cobrashape", tmp_path / "cobrashape"))
    assert kplugin("adopt", str(repository), "--with", "workflow").code == 0
    actionlint = tools.ensure(TOOLS["actionlint"], lambda line: None)
    linted = subprocess.run(
        [str(actionlint), "-no-color", ".github/workflows/kplugin.yml"], cwd=repository, capture_output=True, text=True
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_e2e_replays_an_adopted_repository_with_its_crd_rbac_and_subcommand(
    kplugin: Callable[..., Run], tmp_path: Path
) -> None:
    """crdshape's scheduler is `fleet schedule`, its plugin reads NodeReservations (its own
    CRD) through an informer it waits for in its factory, and its manifests bind the rule
    to read them to the scheduler's account: the run installs the CRD, runs the binary with
    the word before its flags, as an account with kube-scheduler's role and that rule,
    with the repository's own configuration; the default profile places what the plugin
    keeps off the reserved node."""
    repository = _adopted(kplugin, tmp_path, "crdshape")
    before = tree(repository)
    scenario = repository / "test/e2e/reservation.yaml"
    run = kplugin("e2e", str(repository), "--scenario", str(scenario), "--compare", "default", "--json")
    assert run.code == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["ok"] is True, "the plugin's profile meets the scenario's expectations"
    plugin = result["profiles"]["plugin"]
    assert plugin["schedulerName"] == "fleet-scheduler" and plugin["denied"] == []
    assert plugin["identity"] == "system:serviceaccount:kube-system:kplugin-e2e-crdshape"
    assert [(m["pod"], m["plugin"]["node"], m["default"]["node"]) for m in result["becameUnschedulable"]] == [
        ("batch-2", None, "node-a")
    ]
    assert "the rules of deploy/scheduler/rbac.yaml" in run.stderr
    assert "a plugin's factory waits for one" in run.stderr, "its factory waits for the informer: undecided, said"
    after = {name: content for name, content in tree(repository).items() if not name.startswith(".kplugin/")}
    assert after == before


def test_build_k8s_moves_a_throw_away_copy_and_leaves_the_repository_as_it_is(
    kplugin: Callable[..., Run], tmp_path: Path
) -> None:
    """cobrashape at 1.36.5 built for 1.37.2: its code moved as kplugin upgrade would, in a
    copy that goes after the build; the binary in .kplugin/bin/v1.37.2/."""
    repository = _adopted(kplugin, tmp_path, "cobrashape")
    before = tree(repository)
    run = kplugin("build", str(repository), "--k8s", "1.37.2", "--builder", "local", "--json")
    assert run.code == 0, run.stderr
    (binary,) = json.loads(run.stdout)["binaries"]
    assert binary["path"] == str(repository / ".kplugin/bin/v1.37.2/kube-scheduler")
    said = subprocess.run([binary["path"], "scheduler", "--version"], capture_output=True, text=True, check=True)
    assert said.stdout.strip() == "Kubernetes v1.37.2"
    after = {name: content for name, content in tree(repository).items() if not name.startswith(".kplugin/")}
    assert after == before and "k8s.io/kubernetes v1.36.5" in (repository / "go.mod").read_text()
    assert not [p for p in tmp_path.iterdir() if p.name != "cobrashape"], "the copy is gone"


def test_bench_compares_an_adopted_repository_s_profile_with_it_without_its_plugins(
    kplugin: Callable[..., Run], tmp_path: Path
) -> None:
    """crdshape's `fleet schedule` benchmarked on the local control plane: its CRD created
    first (its plugin's factory waits for the informer), both profiles its own file's."""
    repository = _adopted(kplugin, tmp_path, "crdshape")
    run = kplugin("bench", str(repository), "--workload", "basic", "--nodes", "10", "--pods", "40", "--json")
    assert run.code == 0, run.stderr
    result = json.loads(run.stdout)["kplugin"]
    assert result["plugins"] == ["NodeReservation"] and result["kubernetes"] == "1.37.2"
    assert result["schedulerNames"] == {"baseline": "fleet-scheduler-baseline", "project": "fleet-scheduler"}
    assert result["throughputRatio"] > 0
    assert "creating 1 CustomResourceDefinition(s)" in run.stderr
