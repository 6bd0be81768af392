"""Rendering, atomic writes and determinism of kplugin new (no Go needed)."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from support import REPO, Run, every_point, tree

from kplugin.core.errors import OperationError
from kplugin.generate import scaffold, templating
from kplugin.model.spec import ExtensionPoint, ProjectSpec
from kplugin.model.versions import resolve

New = Callable[..., Run]
EXAMPLES = REPO / "examples"


def broken_templates(tmp_path: Path, tree_name: str, file_glob: str) -> Path:
    """A copy of the templates where one file of ``tree_name`` fails to render."""
    root = tmp_path / "templates"
    shutil.copytree(templating.templates_root(), root)
    victim = sorted((root / tree_name).rglob(file_glob))[-1]
    victim.write_text(victim.read_text() + "\n[[ cookiecutter.no_such_variable ]]\n")
    return root


@pytest.mark.parametrize(("tree_name", "glob"), [("project", "Makefile"), ("project", "zz_generated.adapter.go")])
def test_template_error_leaves_nothing(
    kplugin: New, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tree_name: str, glob: str
) -> None:
    root = broken_templates(tmp_path / "t", tree_name, glob)
    monkeypatch.setattr(templating, "templates_root", lambda: root)
    out = tmp_path / "out"
    run = kplugin("new", "gpu", "--k8s", "1.28.3", "--no-tidy", "-o", str(out / "deeper"))
    assert run.code == 1
    assert "failed to render" in run.stderr and "no_such_variable" in run.stderr
    assert "Traceback" not in run.stderr
    assert not out.exists(), "no directory may be left behind"


def test_failure_in_stage_leaves_nothing(tmp_path: Path) -> None:
    """A failing step after the files are staged (go mod tidy) removes the stage."""
    spec = ProjectSpec.create("gpu", resolve("1.28.3"))

    def failing_tidy(stage: Path) -> list[str]:
        assert (stage / "go.mod").is_file()
        raise OperationError("go mod tidy failed")

    with pytest.raises(OperationError):
        scaffold.new_project(spec, tmp_path / "gpu", tidy=failing_tidy)
    assert list(tmp_path.iterdir()) == []


def test_failure_with_force_keeps_existing_files(tmp_path: Path) -> None:
    dest = tmp_path / "gpu"
    dest.mkdir()
    (dest / "go.mod").write_text("mine")

    def failing_tidy(stage: Path) -> list[str]:
        raise OperationError("boom")

    spec = ProjectSpec.create("gpu", resolve("1.28.3"))
    with pytest.raises(OperationError):
        scaffold.new_project(spec, dest, force=True, tidy=failing_tidy)
    assert tree(tmp_path) == {"gpu/go.mod": b"mine"}


def test_same_inputs_give_identical_trees(kplugin: New, tmp_path: Path) -> None:
    args = ["--k8s", "1.28.3", "--no-tidy", "--extension-points", "score,filter,prefilter,reserve"]
    assert kplugin("new", "gpu-aware", "-o", str(tmp_path / "a"), *args).code == 0
    assert kplugin("new", "gpu-aware", "-o", str(tmp_path / "b"), *args).code == 0
    a, b = tree(tmp_path / "a" / "gpu-aware"), tree(tmp_path / "b" / "gpu-aware")
    assert a == b
    assert len(a) > 25


ALL_POINTS = every_point("1.28.3")  # the version the tests below use
INTERFACES = [p.interface for p in ExtensionPoint if str(p) in ALL_POINTS.split(",")]


def test_every_extension_point_renders(kplugin: New, tmp_path: Path) -> None:
    run = kplugin("new", "all", "--k8s", "1.28.3", "--no-tidy", "--extension-points", ALL_POINTS, "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    plugin = (tmp_path / "all/pkg/all/plugin.go").read_text()
    adapter = (tmp_path / "all/pkg/all/zz_generated.adapter.go").read_text()
    for iface in INTERFACES:
        assert f"var _ fw.{iface} = &All{{}}" in plugin  # the stable surface, in the user's file
        assert f"var _ framework.{iface} = (*adapter)(nil)" in adapter  # the real one, generated
    config = (tmp_path / "all/deploy/scheduler-config.yaml").read_text()
    assert "queueSort:\n      enabled:\n      - name: All\n      disabled:\n      - name: PrioritySort" in config
    assert "bind:\n      enabled:\n      - name: All\n      disabled:\n      - name: DefaultBinder" in config
    assert "preEnqueue:\n      enabled:\n      - name: All" in config
    assert "postFilter:\n      enabled:\n      - name: All" in config
    assert "enqueueExtensions" not in config and "enqueueextensions" not in config


def test_only_chosen_extension_points(kplugin: New, tmp_path: Path) -> None:
    run = kplugin("new", "gpu", "--k8s", "1.28.3", "--no-tidy", "--extension-points", "filter", "-o", str(tmp_path))
    assert run.code == 0
    plugin = (tmp_path / "gpu/pkg/gpu/plugin.go").read_text()
    assert "fw.FilterPlugin" in plugin
    assert "ScorePlugin" not in plugin and "func (pl *Gpu) Score(" not in plugin
    adapter = (tmp_path / "gpu/pkg/gpu/zz_generated.adapter.go").read_text()
    assert "framework.FilterPlugin" in adapter and "Score" not in adapter
    assert "score:" not in (tmp_path / "gpu/deploy/scheduler-config.yaml").read_text()


def test_deploy_chart_and_config_agree(kplugin: New, tmp_path: Path) -> None:
    from ruamel.yaml import YAML

    assert kplugin("new", "gpu-aware", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path)).code == 0
    root = tmp_path / "gpu-aware"
    yaml = YAML(typ="safe")
    config = yaml.load(root / "deploy/scheduler-config.yaml")
    configmap = yaml.load(root / "deploy/configmap.yaml")
    values = yaml.load(root / "charts/gpu-aware/values.yaml")
    assert yaml.load(configmap["data"]["scheduler-config.yaml"]) == config
    assert values["schedulerConfig"] == config
    assert config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert config["leaderElection"] == {
        "leaderElect": True,
        "resourceName": "gpu-aware",
        "resourceNamespace": "kube-system",
    }
    assert config["profiles"][0]["schedulerName"] == "gpu-aware"
    pod = yaml.load(root / "deploy/sample-pod.yaml")
    assert pod["spec"]["schedulerName"] == "gpu-aware"
    deployment = yaml.load(root / "deploy/deployment.yaml")
    pod_spec = deployment["spec"]["template"]["spec"]
    assert pod_spec["securityContext"]["runAsUser"] == 65532
    assert pod_spec["securityContext"]["runAsNonRoot"] is True
    container = pod_spec["containers"][0]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}


def test_rbac_is_lease_safe(kplugin: New, tmp_path: Path) -> None:
    from ruamel.yaml import YAML

    assert kplugin("new", "gpu-aware", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path)).code == 0
    docs = list(YAML(typ="safe").load_all(tmp_path / "gpu-aware/deploy/rbac.yaml"))
    kinds = sorted(d["kind"] for d in docs)
    assert kinds == [
        "ClusterRole",
        "ClusterRoleBinding",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "RoleBinding",
        "ServiceAccount",
    ]
    for doc in docs:
        for rule in doc.get("rules", []):
            assert "*" not in rule["verbs"] and "*" not in rule["resources"]
            if "leases" in rule["resources"]:
                assert doc["kind"] == "Role", "lease rights only in the lease namespace"
                assert "kube-scheduler" not in rule.get("resourceNames", [])
                if set(rule["verbs"]) - {"create"}:
                    assert rule["resourceNames"] == ["gpu-aware"]
    bindings = [d["roleRef"]["name"] for d in docs if d["kind"].endswith("Binding")]
    assert "system:kube-scheduler" not in bindings


def test_kplugin_yaml_records_the_project(kplugin: New, tmp_path: Path) -> None:
    from ruamel.yaml import YAML

    from kplugin import __version__

    assert (
        kplugin(
            "new",
            "gpu-aware",
            "--k8s",
            "1.28.3",
            "--no-tidy",
            "-o",
            str(tmp_path),
            "--extension-points",
            "prefilter,filter",
        ).code
        == 0
    )
    meta = YAML(typ="safe").load(tmp_path / "gpu-aware/kplugin.yaml")
    assert meta["kplugin"] == __version__
    assert meta["kubernetes"] == "1.28.3"
    assert meta["module"] == "example.com/gpu-aware"
    assert meta["plugins"] == [
        {
            "name": "GpuAware",
            "package": "gpuaware",
            "extensionPoints": ["prefilter", "filter"],
            "args": True,
            "argsSha256": hashlib.sha256((tmp_path / "gpu-aware/pkg/gpuaware/args.go").read_bytes()).hexdigest(),
        }
    ]


def test_queue_sort_only_plugin_has_no_args(kplugin: New, tmp_path: Path) -> None:
    """A plugin whose extension points read no args gets no Args type, no args file and no
    pluginConfig entry (the scheduler would otherwise refuse unknown args)."""
    from ruamel.yaml import YAML

    run = kplugin("new", "sorter", "--no-tidy", "-o", str(tmp_path), "--extension-points", "queuesort")
    assert run.code == 0, run.stderr
    project = tmp_path / "sorter"
    meta = YAML(typ="safe").load(project / "kplugin.yaml")
    assert meta["plugins"][0]["args"] is False
    files = tree(project)
    assert not [p for p in files if p.startswith("config/args/") or p.endswith(("/args.go", "deepcopy.go"))]
    config = YAML(typ="safe").load(project / "deploy/scheduler-config.yaml")
    assert "pluginConfig" not in config["profiles"][0]
    assert b"RegisterArgs" not in files["pkg/sorter/register.go"]
    assert b"DecodeArgs" not in files["pkg/sorter/zz_generated.adapter.go"]


def test_args_file_is_generated_for_plugins_with_args(kplugin: New, tmp_path: Path) -> None:
    from ruamel.yaml import YAML

    assert kplugin("new", "gpu", "--no-tidy", "-o", str(tmp_path)).code == 0
    args_file = tmp_path / "gpu/config/args/gpu.yaml"
    assert YAML(typ="safe").load(args_file) == {}  # no values: every field takes the plugin's default
    config = YAML(typ="safe").load(tmp_path / "gpu/deploy/scheduler-config.yaml")
    assert config["profiles"][0]["pluginConfig"] == [{"name": "Gpu", "args": {"resourceName": "cpu"}}]


def test_every_example_is_maintained() -> None:
    from kplugin.maintainer import examples

    assert sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()) == sorted(examples.EXAMPLES)


@pytest.mark.parametrize("example", ["gpu-aware", "rack-gang"])
def test_examples_are_current(tmp_path: Path, example: str) -> None:
    """examples/ is what kplugin generates today, byte for byte. go.mod and go.sum are
    what go mod tidy makes of them, and an example with code of its own has its args
    from Go: both compared in the integration tests (test_integration_go)."""
    from kplugin.maintainer import examples

    assert not examples.EXAMPLES[example]["own_code"]

    tidied = {"go.mod", "go.sum"}
    expected = {k: v for k, v in tree(EXAMPLES / example).items() if k not in tidied}
    examples.generate(example, tmp_path, tidy=False)
    got = {k: v for k, v in tree(tmp_path / example).items() if k not in tidied}
    assert sorted(got) == sorted(expected)
    for path in expected:
        assert got[path] == expected[path], f"examples/{example}/{path} is stale: make examples"


def test_yaml_has_no_anchors_and_loads(kplugin: New, tmp_path: Path) -> None:
    from ruamel.yaml import YAML

    assert (
        kplugin(
            "new", "all", "--k8s", "1.28.3", "--no-tidy", "--extension-points", ALL_POINTS, "-o", str(tmp_path)
        ).code
        == 0
    )
    files = [p for p in (tmp_path / "all").rglob("*.yaml") if "templates" not in p.parts]
    assert len(files) >= 8
    for path in files:
        text = path.read_text()
        assert "&id0" not in text and "*id0" not in text, path
        assert list(YAML(typ="safe").load_all(text)), path
