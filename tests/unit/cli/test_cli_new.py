"""kplugin new through the CLI: exit codes, exact one-line errors, nothing written."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support import Run, tree
from support.names import BAD_IMAGES, BAD_MODULES, BAD_PLUGIN_NAMES, BAD_PROJECT_NAMES

New = Callable[..., Run]


def assert_usage_error(run: Run, value: str, parent: Path) -> None:
    assert run.code == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("kplugin: error: ")
    assert value in lines[0]
    assert "Traceback" not in run.stderr
    assert list(parent.iterdir()) == [], "nothing may be written on bad input"


@pytest.mark.parametrize("name", BAD_PROJECT_NAMES)
def test_bad_project_name(kplugin: New, tmp_path: Path, name: str) -> None:
    run = kplugin("new", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path), "--", name)
    assert_usage_error(run, repr(name), tmp_path)


@pytest.mark.parametrize("plugin", BAD_PLUGIN_NAMES)
def test_bad_plugin_name(kplugin: New, tmp_path: Path, plugin: str) -> None:
    # an empty --plugin is a mistake (a shell variable that was not set), not "derive it"
    run = kplugin("new", "gpu", "--plugin", plugin, "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path))
    assert_usage_error(run, repr(plugin), tmp_path)


@pytest.mark.parametrize("version", ["1.27.0", "1.99.0", "1.28.x", "1.28.3.4", "latest", ""])
def test_bad_version(kplugin: New, tmp_path: Path, version: str) -> None:
    run = kplugin("new", "gpu", "--k8s", version, "--no-tidy", "-o", str(tmp_path))
    assert_usage_error(run, version, tmp_path)
    assert "supported: 1.28" in run.stderr


@pytest.mark.parametrize("module", BAD_MODULES)
def test_bad_module(kplugin: New, tmp_path: Path, module: str) -> None:
    run = kplugin("new", "gpu", "--module", module, "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path))
    assert_usage_error(run, repr(module), tmp_path)


def test_unknown_extension_point(kplugin: New, tmp_path: Path) -> None:
    run = kplugin("new", "gpu", "--extension-points", "filter,bogus", "--no-tidy", "-o", str(tmp_path))
    assert_usage_error(run, "'bogus'", tmp_path)
    assert "queuesort" in run.stderr


def test_bad_scheduler_name(kplugin: New, tmp_path: Path) -> None:
    run = kplugin("new", "gpu", "--scheduler-name", "kube-scheduler", "--no-tidy", "-o", str(tmp_path))
    assert_usage_error(run, "'kube-scheduler'", tmp_path)


@pytest.mark.parametrize("image", BAD_IMAGES)
def test_bad_image(kplugin: New, tmp_path: Path, image: str) -> None:
    run = kplugin("new", "gpu", "--image", image, "--no-tidy", "-o", str(tmp_path))
    assert_usage_error(run, "is not an image reference with a tag", tmp_path)


def test_custom_image_everywhere(kplugin: New, tmp_path: Path) -> None:
    """One reference for kplugin build (kplugin.yaml), the Deployment and the chart."""
    image = "localhost:5000/team/gpu:1.2.0"
    run = kplugin("new", "gpu", "--k8s", "1.28.3", "--image", image, "--no-tidy", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    project = tmp_path / "gpu"
    assert f"\nimage: {image}\n" in (project / "kplugin.yaml").read_text()
    assert f"        image: {image}\n" in (project / "deploy/deployment.yaml").read_text()
    values = (project / "charts/gpu/values.yaml").read_text()
    assert "image:\n  repository: localhost:5000/team/gpu\n  tag: 1.2.0\n" in values


def test_unknown_option_is_usage_error(kplugin: New, tmp_path: Path) -> None:
    run = kplugin("new", "gpu", "--bogus", "-o", str(tmp_path))
    assert run.code == 2
    assert "--bogus" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_missing_name_without_tty_does_not_prompt(kplugin: New, tmp_path: Path) -> None:
    run = kplugin("new", "-o", str(tmp_path))
    assert_usage_error(run, "NAME", tmp_path)


def test_existing_non_empty_directory_needs_force(kplugin: New, tmp_path: Path) -> None:
    target = tmp_path / "gpu"
    target.mkdir()
    (target / "mine.txt").write_text("keep me")
    run = kplugin("new", "gpu", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path))
    assert run.code == 2
    assert str(target) in run.stderr and "--force" in run.stderr
    assert [p.name for p in target.iterdir()] == ["mine.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["gpu"]

    run = kplugin("new", "gpu", "--k8s", "1.28.3", "--no-tidy", "--force", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    assert (target / "mine.txt").read_text() == "keep me"
    assert (target / "go.mod").is_file()


def test_existing_empty_directory_is_used(kplugin: New, tmp_path: Path) -> None:
    (tmp_path / "gpu").mkdir()
    run = kplugin("new", "gpu", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    assert (tmp_path / "gpu" / "go.mod").is_file()


def test_output_path_inside_a_file(kplugin: New, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    run = kplugin("new", "gpu", "--no-tidy", "-o", str(blocker / "sub"))
    assert run.code == 2
    assert str(blocker) in run.stderr
    assert "inside a file" in run.stderr
    assert blocker.read_text() == "x"
    assert [p.name for p in tmp_path.iterdir()] == ["file"]


def test_dry_run_writes_nothing(kplugin: New, tmp_path: Path) -> None:
    run = kplugin("new", "gpu", "--k8s", "1.28.3", "--dry-run", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    assert "create" in run.stderr and "go.mod" in run.stderr
    assert "nothing written" in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_minor_only_version_is_reported(kplugin: New, tmp_path: Path) -> None:
    run = kplugin("new", "gpu", "--k8s", "1.28", "--no-tidy", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    assert "Kubernetes 1.28 → 1.28." in run.stderr
    assert "newest catalogued patch" in run.stderr


def test_no_tidy_says_so(kplugin: New, tmp_path: Path) -> None:
    run = kplugin("new", "gpu", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path))
    assert "go.sum not written" in run.stderr
    assert not (tmp_path / "gpu" / "go.sum").exists()


def test_missing_go_is_a_clear_notice(kplugin: New, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    run = kplugin("new", "gpu", "--k8s", "1.28.3", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    assert "Go is not on PATH" in run.stderr and "go mod tidy" in run.stderr
    assert (tmp_path / "gpu" / "go.mod").is_file()


def test_version_and_help() -> None:
    out = subprocess.run([sys.executable, "-m", "kplugin", "--version"], capture_output=True, text=True, check=True)
    from kplugin import __version__

    assert out.stdout == f"kplugin {__version__}\n"
    helped = subprocess.run(
        [sys.executable, "-m", "kplugin", "new", "--help"], capture_output=True, text=True, check=True
    )
    assert "--extension-points" in helped.stdout and "kplugin new gpu-aware --k8s 1.28.3" in helped.stdout


def test_real_entry_point_error(tmp_path: Path) -> None:
    """The installed console script: exit 2, one line, no traceback."""
    proc = subprocess.run(
        ["kplugin", "new", "GPU", "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "kplugin: error: project name 'GPU' is not a DNS-1123 label (lowercase letters, digits "
        "and '-', starting and ending with a letter or digit); try e.g. 'gpu-aware'"
    ]


def test_debug_shows_traceback(kplugin: New, tmp_path: Path) -> None:
    run = kplugin("--debug", "new", "GPU", "-o", str(tmp_path))
    assert run.code == 2
    assert "Traceback" in run.stderr


def test_generated_tree_layout(kplugin: New, tmp_path: Path) -> None:
    run = kplugin(
        "new", "gpu-aware", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path), "--module", "example.com/gpu-scheduler"
    )
    assert run.code == 0, run.stderr
    files = tree(tmp_path / "gpu-aware")
    for path in [
        "go.mod",
        "cmd/scheduler/main.go",
        "cmd/scheduler/plugins.go",
        "pkg/registry/registry.go",
        "pkg/gpuaware/plugin.go",
        "pkg/gpuaware/args.go",
        "pkg/gpuaware/zz_generated.deepcopy.go",
        "pkg/gpuaware/register.go",
        "pkg/gpuaware/plugin_test.go",
        "pkg/gpuaware/args_test.go",
        "pkg/gpuaware/benchmark_test.go",
        "Dockerfile",
        ".dockerignore",
        "Makefile",
        ".golangci.yml",
        ".github/workflows/ci.yml",
        "README.md",
        "kplugin.yaml",
        "deploy/scheduler-config.yaml",
        "deploy/rbac.yaml",
        "deploy/deployment.yaml",
        "deploy/configmap.yaml",
        "deploy/sample-pod.yaml",
        "charts/gpu-aware/Chart.yaml",
        "charts/gpu-aware/values.yaml",
        "charts/gpu-aware/templates/deployment.yaml",
    ]:
        assert path in files, path
    assert not [p for p in files if "{{" in p or ".kplugin-" in p]
    gomod = files["go.mod"].decode()
    assert "module example.com/gpu-scheduler\n" in gomod
    assert "require k8s.io/kubernetes v1.28.3\n" in gomod
    assert gomod.count(" => ") == 30
    assert "\tk8s.io/legacy-cloud-providers => k8s.io/legacy-cloud-providers v0.28.3\n" in gomod
    assert "app.NewSchedulerCommand(options()...)" in files["cmd/scheduler/main.go"].decode()
    assert "app.WithPlugin(name, registry.Factory(name))" in files["cmd/scheduler/main.go"].decode()
    assert '_ "example.com/gpu-scheduler/pkg/gpuaware"' in files["cmd/scheduler/plugins.go"].decode()
    assert "registry.Register(Name, New)" in files["pkg/gpuaware/register.go"].decode()
    dockerfile = files["Dockerfile"].decode()
    for needle in [
        "CGO_ENABLED=0",
        "ARG GO_IMAGE=golang:1.22",
        "ARG BASE_IMAGE=gcr.io/distroless/static:nonroot",
        "USER 65532",
        "-trimpath",
        "gitVersion=${K8S_VERSION}",
    ]:
        assert needle in dockerfile, needle
    assert "help:" in files["Makefile"].decode()


def test_top_level_help_summaries_match_commands() -> None:
    """The top-level help lists commands from COMMANDS' summaries without importing them."""
    import importlib

    from kplugin.cli import COMMANDS, app

    for command in COMMANDS.values():
        importlib.import_module(command.module)
    docs = {
        info.name or info.callback.__name__.replace("_", "-"): (info.callback.__doc__ or "").strip().splitlines()[0]
        for info in app.registered_commands
        if info.callback is not None and info.callback.__name__ != "_listed_only"
    }
    for group in app.registered_groups:  # kplugin add: a group of subcommands
        assert group.typer_instance is not None
        docs[str(group.typer_instance.info.name)] = str(group.typer_instance.info.help)
    assert set(docs) == set(COMMANDS)
    for name, command in COMMANDS.items():
        assert docs[name] == command.summary, name


def test_top_level_help_lists_every_command() -> None:
    proc = subprocess.run([sys.executable, "-m", "kplugin", "--help"], capture_output=True, text=True, check=True)
    for name in ["new", "add", "build", "render-config", "doctor", "upgrade", "versions"]:
        assert f"  {name} " in proc.stdout
