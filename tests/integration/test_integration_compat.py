"""One plugin source for every Kubernetes minor, proved with the real modules from the
Go module proxy and the real Go toolchain: generation at the oldest, a middle (across
the 1.34 split) and the newest minor; the write-once round trip through kplugin upgrade;
kplugin build --k8s for another version; kplugin add plugin; no allocations added by the
layer. Every supported minor: python -m kplugin.maintainer.matrix (results in the notes).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from support import Run, allocations, every_point, tree

from kplugin.model.spec import ExtensionPoint
from kplugin.model.versions import newest_release, resolve

pytestmark = pytest.mark.integration

OLDEST = "1.28.3"  # the 1.28 patch the other integration tests build, so the caches are shared
MIDDLE = "1.34"  # the first minor after the split into k8s.io/kube-scheduler/framework
NEWEST = newest_release().key
# golangci-lint's govet (test_integration_tools.py) vets these projects, every extension
# point in both modes: a second go vet would only analyse every dependency again (about a
# minute a minor on a cold cache)
LINTED = (OLDEST, NEWEST)
TESTS = {
    ExtensionPoint.PRE_ENQUEUE: ["TestPreEnqueue"],
    ExtensionPoint.QUEUE_SORT: ["TestQueueSort"],
    ExtensionPoint.PRE_FILTER: ["TestPreFilterExtensions"],
    ExtensionPoint.FILTER: ["TestFilter"],
    ExtensionPoint.POST_FILTER: ["TestPostFilter"],
    ExtensionPoint.PRE_SCORE: ["TestPreScore"],
    ExtensionPoint.SCORE: ["TestScore", "TestNormalizeScore"],
    ExtensionPoint.PLACEMENT_GENERATE: ["TestGeneratePlacements"],
    ExtensionPoint.PLACEMENT_SCORE: ["TestScorePlacement"],
    ExtensionPoint.ENQUEUE_EXTENSIONS: ["TestEventsToRegister"],
}  # reserve, permit, prebind, bind and postbind run in TestBindingCycle


def go(project: Path, *args: str, env: dict[str, str]) -> str:
    proc = subprocess.run(["go", *args], cwd=project, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"go {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout + proc.stderr


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], Path]:
    """Projects with every extension point, generated once per (version, api) here."""
    from kplugin.cli import main

    parent = tmp_path_factory.mktemp("compat")
    made: dict[tuple[str, str], Path] = {}

    def get(version: str, api: str) -> Path:
        if (version, api) not in made:
            name = f"every-{api}-{version.replace('.', '-')}"
            with pytest.raises(SystemExit) as exit_:
                main(["new", name, "--k8s", version, "--api", api, "--extension-points", every_point(version),
                      "--plugin", "Every", "-o", str(parent)])  # fmt: skip
            assert exit_.value.code == 0
            made[(version, api)] = parent / name
        return made[(version, api)]

    return get


@pytest.mark.parametrize(
    ("version", "api"),
    [(OLDEST, "layer"), (MIDDLE, "layer"), (NEWEST, "layer"), (OLDEST, "native"), (NEWEST, "native")],
)
def test_every_extension_point_builds_vets_and_passes(
    generated: Callable[[str, str], Path], go_env: dict[str, str], version: str, api: str
) -> None:
    project = generated(version, api)
    assert f"k8s.io/kubernetes v{resolve(version).version}" in (project / "go.mod").read_text()
    go(project, "build", "./...", env=go_env)
    if version not in LINTED:
        go(project, "vet", "./...", env=go_env)
    output = go(project, "test", "-count=1", "-v", "./...", env=go_env)
    assert "--- FAIL" not in output
    chosen = every_point(version).split(",")
    for test in [t for point, tests in TESTS.items() if point in chosen for t in tests]:
        assert f"--- PASS: {test} " in output, test
    for test in ["TestBindingCycle", "TestNewRejectsInvalidArgs"]:
        assert f"--- PASS: {test} " in output, test
    assert subprocess.run(["gofmt", "-l", "."], cwd=project, capture_output=True, text=True).stdout == ""


@pytest.mark.parametrize(("version", "api"), [(OLDEST, "layer"), (NEWEST, "layer"), (NEWEST, "native")])
def test_filter_and_score_allocate_nothing(
    generated: Callable[[str, str], Path], go_env: dict[str, str], version: str, api: str
) -> None:
    """Filter and Score, called as the framework calls them (through the layer, or
    natively), allocate nothing per node: the pod's demand is read from CycleState (the
    timing against a hand-written native plugin: benchmarks/layer_overhead.py)."""
    output = go(generated(version, api), "test", "-run", "^$", "-bench", "Filter|Score", "-benchtime", "2000x",
                "-benchmem", "./pkg/...", env=go_env)  # fmt: skip
    assert allocations(output) == {"BenchmarkFilter": 0, "BenchmarkScore": 0}, output


USER_TEST = """package wo

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"example.com/wo/internal/fw"
	"example.com/wo/internal/schedtest"
)

// The user's own test of their own changes: a cordon label and a bonus for fast nodes.
func TestUserChanges(t *testing.T) {
	cpu := func(n string) map[v1.ResourceName]string { return map[v1.ResourceName]string{v1.ResourceCPU: n} }
	nodes := []*v1.Node{
		schedtest.Node("big", cpu("4"), nil),
		schedtest.Node("fast", cpu("1"), map[string]string{"example.com/fast": "true"}),
		schedtest.Node("cordoned", cpu("8"), map[string]string{"example.com/cordoned": "true"}),
	}
	h, err := schedtest.New(context.Background(), nodes, nil,
		schedtest.Plugin{Name: Name, Factory: New, Extensions: extensions})
	if err != nil {
		t.Fatal(err)
	}
	pod := schedtest.Pod("p", "", map[v1.ResourceName]string{v1.ResourceCPU: "100m"})
	state, statuses := h.Filter(context.Background(), pod)
	if statuses["cordoned"].Code() != fw.UnschedulableAndUnresolvable || statuses["big"] != nil {
		t.Fatalf("filter: %v", statuses)
	}
	scores, status := h.Score(context.Background(), state, pod, "big", "fast")
	if !status.IsSuccess() || scores["fast"] != fw.MaxNodeScore || scores["big"] >= scores["fast"] {
		t.Fatalf("scores %v (%v): the fast node should win", scores, status)
	}
}
"""


def edit_user_logic(project: Path) -> None:
    """What a user does: a label condition in Filter, a score term in Score, a test."""
    plugin = project / "pkg/wo/plugin.go"
    text = plugin.read_text()
    text = text.replace(
        "\twant := pl.demand(state, pod)\n",
        '\tif node.Labels["example.com/cordoned"] == "true" {\n'
        '\t\treturn fw.NewStatus(fw.UnschedulableAndUnresolvable, "node "+node.Name+" is cordoned")\n'
        "\t}\n"
        "\twant := pl.demand(state, pod)\n",
        1,
    )
    text = text.replace(
        "\tif left < 0 {\n\t\tleft = 0\n\t}\n",
        "\tif left < 0 {\n\t\tleft = 0\n\t}\n"
        '\tif nodeInfo.Node().Labels["example.com/fast"] == "true" {\n\t\tleft += 100000\n\t}\n',
        1,
    )
    assert '"example.com/cordoned"' in text and '"example.com/fast"' in text, "the edits did not apply"
    plugin.write_text(text)
    (project / "pkg/wo/user_test.go").write_text(USER_TEST)


def test_plugin_code_written_once_moves_between_minors(
    kplugin: Callable[..., Run], tmp_path: Path, go_env: dict[str, str]
) -> None:
    run = kplugin("new", "wo", "--k8s", OLDEST, "--extension-points", "prefilter,filter,score", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    project = tmp_path / "wo"
    edit_user_logic(project)
    mine = {name: sha(project / "pkg/wo" / name) for name in ["plugin.go", "user_test.go", "plugin_test.go"]}
    assert "--- PASS: TestUserChanges" in go(project, "test", "-count=1", "-v", "./pkg/...", env=go_env)
    at_oldest = tree(project)

    for version in [NEWEST, OLDEST]:
        before = tree(project)
        dry = kplugin("upgrade", str(project), "--k8s", version, "--json", "--dry-run")
        assert dry.code == 0, dry.stderr
        assert tree(project) == before, "a dry run changes nothing"
        run = kplugin("upgrade", str(project), "--k8s", version, "--json")
        assert run.code == 0, run.stderr
        changed = json.loads(run.stdout)["changed"]
        assert json.loads(dry.stdout)["changed"] == changed, "the dry run lists exactly what the run changes"
        after = tree(project)
        assert changed == sorted(p for p in {*before, *after} if before.get(p) != after.get(p)), changed
        assert "internal/fw/zz_generated.fw.go" in changed and "pkg/wo/zz_generated.adapter.go" in changed
        assert not [p for p in changed if p.startswith("pkg/wo/") and "zz_generated" not in p], changed
        assert {name: sha(project / "pkg/wo" / name) for name in mine} == mine, f"user files changed at {version}"
        gomod = (project / "go.mod").read_text()
        assert f"k8s.io/kubernetes v{resolve(version).version}\n" in gomod
        assert f"k8s.io/kube-scheduler => k8s.io/kube-scheduler {resolve(version).version.staging_tag}" in gomod
        go(project, "build", "./...", env=go_env)
        go(project, "vet", "./...", env=go_env)
        output = go(project, "test", "-count=1", "-v", "./...", env=go_env)
        assert "--- PASS: TestUserChanges" in output and "--- FAIL" not in output
    # back where it started, byte for byte: go.mod, go.sum and every generated file
    assert tree(project) == at_oldest


def test_build_for_another_version_from_a_retargeted_copy(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    """One CI job builds a plugin for every cluster version: the project stays pinned,
    the binary is the other version's kube-scheduler and loads a rendered config."""
    from kplugin.config import render

    assert kplugin("new", "multi", "--k8s", OLDEST, "-o", str(tmp_path)).code == 0
    project = tmp_path / "multi"
    before = tree(project)
    run = kplugin("build", str(project), "--k8s", NEWEST, "--builder", "local", "--json")
    assert run.code == 0, run.stderr
    (binary,) = json.loads(run.stdout)["binaries"]
    newest = resolve(NEWEST).version
    assert binary["version"] == f"Kubernetes {newest.tag}" and binary["static"]
    assert Path(binary["path"]) == project / "bin" / newest.tag / "kube-scheduler"
    assert {k: v for k, v in tree(project).items() if not k.startswith("bin/")} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["multi"], "the retargeted copy is gone"

    args = tmp_path / "args.yaml"
    args.write_text("nodeLabel: example.com/pool\n")
    out = tmp_path / "config.yaml"
    run = kplugin("render-config", str(project), "--k8s", NEWEST, "--weight", "Multi=4", "--args", str(args),
                  "--validate", "--binary", binary["path"], "-o", str(out))  # fmt: skip
    assert run.code == 0, run.stderr
    written = tmp_path / "written.yaml"
    cmd = [binary["path"], "--config", str(out), "--write-config-to", str(written), "--secure-port=0"]
    proc = subprocess.run([*cmd, "--master=https://127.0.0.1:1"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    (profile,) = YAML(typ="safe").load(written)["profiles"]
    assert {"name": "Multi", "weight": 4} in profile["plugins"]["score"]["enabled"]
    # the given args over the plugin's own defaults, as its decoder returns them
    assert {c["name"]: c["args"] for c in profile["pluginConfig"]}["Multi"] == {
        "nodeLabel": "example.com/pool",
        "resourceName": "cpu",
    }
    accepted, message = render.validate(Path(binary["path"]), out.read_text().replace("name: Multi", "name: Ghost"))
    assert not accepted and '"Ghost" does not exist' in message


def test_added_plugin_builds_and_passes(kplugin: Callable[..., Run], tmp_path: Path, go_env: dict[str, str]) -> None:
    assert kplugin("new", "two", "--k8s", OLDEST, "-o", str(tmp_path)).code == 0
    project = tmp_path / "two"
    run = kplugin("add", "plugin", "Second", "-p", str(project), "--extension-points",
                  "preenqueue,filter,postfilter,bind,enqueueextensions")  # fmt: skip
    assert run.code == 0, run.stderr
    go(project, "vet", "./...", env=go_env)
    output = go(project, "test", "-count=1", "-v", "./...", env=go_env)
    for test in ["TestPreEnqueue", "TestPostFilter", "TestEventsToRegister", "TestBindingCycle", "TestScore"]:
        assert f"--- PASS: {test} " in output, test
    assert "ok  \texample.com/two/pkg/second" in output and "ok  \texample.com/two/pkg/two" in output
