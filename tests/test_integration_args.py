"""The plugin's Go code is the one source of truth for its Args and extension points
(issue 11), proved with real Go, the real deepcopy-gen and the real kube-scheduler:

- a plugin whose Args are rewritten (a field renamed, a list added, a default changed)
  gets a configuration the scheduler accepts, with the new defaults, after nothing but
  make generate; --args is checked by the plugin's own decoder, with its messages;
- a QueueSort-only plugin has no Args and no pluginConfig, and gains extension points
  with kplugin add extension-point: it builds, its tests pass, and the scheduler runs it
  at the new points.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Run
from ruamel.yaml import YAML

from kplugin.model.versions import supported_releases

pytestmark = pytest.mark.integration

Kplugin = Callable[..., Run]
VERSION = "1.28.3"  # the version the other integration tests build: the Go caches are shared
NEWEST = supported_releases()[-1].key  # deepcopy-gen's other flag set (gengo v2, 1.30 on)
# after make generate, the slice is copied, not shared (a package of its own: the
# plugin's own tests still name the old fields, as a user's would until they update them)
DEEPCOPY_TEST = """package deepcopycheck

import (
\t"testing"

\tv1 "k8s.io/api/core/v1"

\t"{module}/pkg/rewrite"
)

func TestDeepCopyCopiesTheSlice(t *testing.T) {{
\tin := &rewrite.RewriteArgs{{ExtraResources: []v1.ResourceName{{"example.com/a"}}}}
\tout := in.DeepCopy()
\tout.ExtraResources[0] = "example.com/b"
\tif in.ExtraResources[0] != "example.com/a" {{
\t\tt.Fatal("DeepCopy shares ExtraResources with the original")
\t}}
}}
"""


def go(project: Path, *args: str, env: dict[str, str]) -> str:
    proc = subprocess.run(["go", *args], cwd=project, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"go {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


def load(path: Path) -> dict[str, object]:
    data: dict[str, object] = YAML(typ="safe").load(path)
    return data


def scheduler_loads(binary: Path, config: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """kube-scheduler --write-config-to: loads, defaults and validates the configuration
    and builds every profile (an unregistered plugin or bad args fail here)."""
    flags = ["--secure-port=0", "--master=https://127.0.0.1:1"]
    return subprocess.run(
        [str(binary), "--config", str(config), "--write-config-to", str(out), *flags],
        capture_output=True,
        text=True,
        check=False,
    )


def rewrite(path: Path, *pairs: tuple[str, str]) -> None:
    text = path.read_text()
    for old, new in pairs:
        assert old in text, (path, old)
        text = text.replace(old, new)
    path.write_text(text)


REWRITTEN_ARGS = (
    # NodeLabel becomes RequiredLabel, a list of extra resources appears, the default resource is memory
    ('\tNodeLabel string `json:"nodeLabel,omitempty"`', '\tRequiredLabel string `json:"requiredLabel,omitempty"`'),
    (
        '\tResourceName v1.ResourceName `json:"resourceName,omitempty"`\n',
        '\tResourceName v1.ResourceName `json:"resourceName,omitempty"`\n'
        "\t// ExtraResources are checked for qualified names.\n"
        '\tExtraResources []v1.ResourceName `json:"extraResources,omitempty"`\n',
    ),
    ("a.ResourceName = v1.ResourceCPU", "a.ResourceName = v1.ResourceMemory"),
    (
        'if a.NodeLabel != "" {',
        "for i, r := range a.ExtraResources {\n"
        "\t\tfor _, msg := range validation.IsQualifiedName(string(r)) {\n"
        '\t\t\terrs = append(errs, field.Invalid(field.NewPath("extraResources").Index(i), r, msg))\n'
        '\t\t}\n\t}\n\tif a.RequiredLabel != "" {',
    ),
    ("validation.IsQualifiedName(a.NodeLabel)", "validation.IsQualifiedName(a.RequiredLabel)"),
    ('field.NewPath("nodeLabel"), a.NodeLabel', 'field.NewPath("requiredLabel"), a.RequiredLabel'),
)


@pytest.mark.parametrize("version", [VERSION, NEWEST])
def test_rewritten_args_are_learned_from_the_code(
    kplugin: Kplugin, tmp_path: Path, go_env: dict[str, str], version: str
) -> None:
    run = kplugin("new", "rewrite", "--k8s", version, "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    project = tmp_path / "rewrite"
    package = project / "pkg/rewrite"
    rewrite(package / "args.go", *REWRITTEN_ARGS)
    rewrite(package / "plugin.go", ("pl.args.NodeLabel", "pl.args.RequiredLabel"))
    # the only manual step: deepcopy-gen, through the generated Makefile
    proc = subprocess.run(["make", "generate"], cwd=project, env=go_env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    deepcopy = (package / "zz_generated.deepcopy.go").read_text()
    assert "in, out := &in.ExtraResources, &out.ExtraResources" in deepcopy  # a real copy of the slice
    assert deepcopy.startswith("//go:build !ignore_autogenerated\n// +build !ignore_autogenerated\n")
    go(project, "build", "./cmd/...", "./pkg/...", env=go_env)
    check = project / "internal/deepcopycheck"
    check.mkdir()
    module = (project / "go.mod").read_text().splitlines()[0].removeprefix("module ").strip()
    (check / "deepcopy_test.go").write_text(DEEPCOPY_TEST.format(module=module))
    assert "ok" in go(project, "test", "./internal/deepcopycheck/", "-count=1", env=go_env)

    out = tmp_path / "config.yaml"
    run = kplugin("render-config", str(project), "-o", str(out), "--validate")
    assert run.code == 0, run.stderr
    assert "accepts the configuration" in run.stderr
    profile = load(out)["profiles"][0]  # type: ignore[index]
    assert profile["pluginConfig"] == [{"name": "Rewrite", "args": {"resourceName": "memory"}}]  # the new default

    given = tmp_path / "args.yaml"
    given.write_text("requiredLabel: example.com/pool\nextraResources: [nvidia.com/gpu]\n")
    run = kplugin("render-config", str(project), "--args", str(given), "--validate")
    assert run.code == 0, run.stderr
    assert load_text(run.stdout)["profiles"][0]["pluginConfig"][0]["args"] == {
        "requiredLabel": "example.com/pool",
        "resourceName": "memory",
        "extraResources": ["nvidia.com/gpu"],
    }

    binary = project / "bin/kube-scheduler"
    for content, message in [
        ("nodeLabel: example.com/pool\n", 'unknown field "nodeLabel"'),
        ("extraResources: nvidia.com/gpu\n", "extraResources"),
        ("extraResources: ['not a name!']\n", "extraResources[0]"),
    ]:
        given.write_text(content)
        run = kplugin("render-config", str(project), "--args", str(given))
        assert run.code == 2, run.stderr
        (line,) = run.stderr.strip().splitlines()
        assert message in line and str(given) in line, line
        # the scheduler's own answer names the same field
        bad = tmp_path / "bad.yaml"
        config = out.read_text().replace("      resourceName: memory\n", "      " + content.replace("\n", "") + "\n")
        bad.write_text(config)
        proc = scheduler_loads(binary, bad, tmp_path / "written.yaml")
        assert proc.returncode != 0
        assert message.replace('"', '\\"') in proc.stderr

    # doctor decodes pluginConfig with the plugin's decoder too: the finding names the line
    (project / "config/args/rewrite.yaml").write_text("resourceName: [cpu]\n")
    run = kplugin("doctor", str(project), "--json")
    assert run.code == 1
    assert "config/args/rewrite.yaml" in run.stdout and "resourceName" in run.stdout


def load_text(text: str) -> dict[str, object]:
    data: dict[str, object] = YAML(typ="safe").load(text)
    return data


def test_queue_sort_only_plugin_gains_extension_points(
    kplugin: Kplugin, tmp_path: Path, go_env: dict[str, str]
) -> None:
    run = kplugin("new", "sorter", "--k8s", VERSION, "--extension-points", "queuesort", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    project = tmp_path / "sorter"
    before = tmp_path / "before.yaml"
    before.write_bytes((project / "deploy/scheduler-config.yaml").read_bytes())
    assert "pluginConfig" not in load(before)["profiles"][0]  # type: ignore[index]

    run = kplugin("add", "extension-point", "Sorter", "reserve,permit", "-p", str(project))
    assert run.code == 0, run.stderr
    go(project, "vet", "./...", env=go_env)
    output = go(project, "test", "-count=1", "-v", "./...", env=go_env)
    for test in ["TestQueueSort", "TestReserveStub", "TestPermitStub"]:
        assert f"--- PASS: {test} " in output, test
    run = kplugin("build", str(project), "--builder", "local")
    assert run.code == 0, run.stderr
    binary = project / "bin/kube-scheduler"
    # the QueueSort-only configuration (no pluginConfig) and the new one both load
    proc = scheduler_loads(binary, before, tmp_path / "written-before.yaml")
    assert proc.returncode == 0, proc.stderr
    written = tmp_path / "written.yaml"
    proc = scheduler_loads(binary, project / "deploy/scheduler-config.yaml", written)
    assert proc.returncode == 0, proc.stderr
    plugins = load(written)["profiles"][0]["plugins"]  # type: ignore[index]
    for point in ("queueSort", "reserve", "permit"):
        assert {"name": "Sorter"} in [{"name": e["name"]} for e in plugins[point]["enabled"]], point
    run = kplugin("doctor", str(project), "--json")
    assert run.code == 0, run.stdout
