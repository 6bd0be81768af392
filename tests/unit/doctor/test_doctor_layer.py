"""kplugin doctor on a project written against internal/fw (api: layer): plugin code that
imports the framework itself is found, with file, line and the fw names to use instead."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from support import Run

K = Callable[..., Run]

GANG_GO = """package gpuaware

import (
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// allow lets the gang's pod bind (framework.Status in a comment is no use).
func (pl *GpuAware) allow(uid types.UID) {
	if wp := pl.handle.GetWaitingPod(uid); wp != nil {
		var _ framework.WaitingPod = wp
		_ = framework.GVK("podgroups.v1alpha1.scheduling.x-k8s.io")
		_ = framework.NewCycleState()
	}
}
"""


def new(kplugin: K, tmp_path: Path, *args: str) -> Path:
    run = kplugin("new", "gpu-aware", "--no-tidy", "-o", str(tmp_path), *args)
    assert run.code == 0, run.stderr
    return tmp_path / "gpu-aware"


def imported(kplugin: K, project: Path) -> list[dict[str, object]]:
    run = kplugin("doctor", str(project), "--json")
    assert run.code in {0, 1}, run.stderr
    return [f for f in json.loads(run.stdout)["findings"] if f["rule"] == "framework-imported"]


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_the_sample_plugin_importing_the_framework(kplugin: K, tmp_path: Path) -> None:
    """The sample plugin is clean; a file of its package that imports the framework is
    one warning at the import, whose fix names the fw aliases of what the file uses; the
    same import in a test or a zz_generated file is not the plugin's code."""
    project = new(kplugin, tmp_path, "--k8s", "1.28.3")
    assert imported(kplugin, project) == []
    package = project / "pkg/gpuaware"
    (package / "gang.go").write_text(GANG_GO)
    (package / "gang_test.go").write_text(GANG_GO)
    (package / "zz_generated.gang.go").write_text(GANG_GO)
    (hit,) = imported(kplugin, project)
    import_line = line_of(package / "gang.go", '"k8s.io/kubernetes/pkg/scheduler/framework"')
    assert (hit["file"], hit["line"], hit["severity"], hit["check"]) == (
        "pkg/gpuaware/gang.go", import_line, "warning", "framework"
    )  # fmt: skip
    assert "imports k8s.io/kubernetes/pkg/scheduler/framework directly" in str(hit["what"])
    fix = str(hit["fix"])
    assert "fw.WaitingPod for framework.WaitingPod" in fix
    assert "fw.EventResource for framework.GVK" in fix
    assert "no alias for framework.NewCycleState" in fix
    assert "framework.Status" not in fix  # only in a comment
    assert fix.endswith("or move the project to --api native")
    assert "internal/fw" in str(hit["why"])


GANG_HELPERS_GO = """package util

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// Activate stashes a gang's siblings for the scheduler to move to the active queue.
func Activate(state *framework.CycleState, pods []*v1.Pod) {
	c, err := state.Read(framework.PodsToActivateKey)
	if err != nil {
		return
	}
	if s, ok := c.(*framework.PodsToActivate); ok {
		s.Lock()
		defer s.Unlock()
		for _, pod := range pods {
			s.Map[pod.Namespace+"/"+pod.Name] = pod
		}
	}
	_ = framework.NewResource(nil)
	var _ framework.SharedLister
}
"""


@pytest.mark.parametrize("version", ["1.28.3", "1.35"])
def test_a_helper_package_importing_the_framework_and_what_gang_plugins_use(
    kplugin: K, tmp_path: Path, version: str
) -> None:
    """A gang plugin's helper package beside pkg/ (test/util, internal/...) that imports the
    framework is found too (not its tests); the fix names the layer's PodsToActivate,
    PodsToActivateKey, NewResource and SharedLister, which internal/fw has on every minor."""
    project = new(kplugin, tmp_path, "--k8s", version)
    util = project / "test/util"
    util.mkdir(parents=True)
    (util / "gang.go").write_text(GANG_HELPERS_GO)
    (util / "gang_test.go").write_text(GANG_HELPERS_GO)
    (hit,) = imported(kplugin, project)
    assert (hit["file"], hit["line"]) == ("test/util/gang.go", line_of(util / "gang.go", "pkg/scheduler/framework"))
    fix = str(hit["fix"])
    for name in ("PodsToActivateKey", "PodsToActivate", "NewResource", "SharedLister"):
        assert f"fw.{name} for framework.{name}" in fix, fix
    layer = (project / "internal/fw/zz_generated.fw.go").read_text()
    for name in ("SharedLister = ", "PodsToActivate = framework.PodsToActivate", "Resource = framework.Resource",
                 "var PodsToActivateKey = framework.PodsToActivateKey", "func NewResource("):  # fmt: skip
        assert name in layer, name


def test_a_queuesort_project_importing_fwk(kplugin: K, tmp_path: Path) -> None:
    """k8s.io/kube-scheduler/framework under an alias, in the plugin's package and in a
    package of its own under pkg/ (single-line import): each is found where it is."""
    project = new(kplugin, tmp_path, "--k8s", "1.37", "--extension-points", "queuesort")
    assert imported(kplugin, project) == []
    sort_go = project / "pkg/gpuaware/sort.go"
    sort_go.write_text(
        "package gpuaware\n\n"
        'import (\n\t"time"\n\n\tscheduler "k8s.io/kube-scheduler/framework"\n)\n\n'
        "func since(q scheduler.QueuedEntityInfo) time.Time { return *q.GetInitialAttemptTimestamp() }\n"
    )
    common = project / "pkg/common"
    common.mkdir()
    (common / "util.go").write_text(
        'package common\n\nimport "k8s.io/kube-scheduler/framework"\n\nvar Resource framework.EventResource\n'
    )
    (project / "pkg/gpuaware/testdata").mkdir()
    (project / "pkg/gpuaware/testdata/skipped.go").write_text('package x\n\nimport "k8s.io/kube-scheduler/framework"\n')
    hits = {(str(f["file"]), f["line"]): str(f["fix"]) for f in imported(kplugin, project)}
    sort_line = line_of(sort_go, "scheduler ")
    assert set(hits) == {("pkg/common/util.go", 3), ("pkg/gpuaware/sort.go", sort_line)}
    assert "fw.QueuedInfo for scheduler.QueuedEntityInfo" in hits["pkg/gpuaware/sort.go", sort_line]
    assert "fw.EventResource for framework.EventResource" in hits["pkg/common/util.go", 3]


def test_a_native_project_may_import_the_framework(kplugin: K, tmp_path: Path) -> None:
    project = new(kplugin, tmp_path, "--k8s", "1.28.3", "--api", "native")
    (project / "pkg/gpuaware/gang.go").write_text(GANG_GO)
    assert imported(kplugin, project) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('package p\n\nimport "fmt"\n', [(3, None, "fmt")]),
        (
            'package p\n\nimport fw2 "k8s.io/kube-scheduler/framework"\n',
            [(3, "fw2", "k8s.io/kube-scheduler/framework")],
        ),
        (
            'package p\n\nimport (\n\t"context"\n\n\t_ "a/b"\n\tx "c/d" // why\n)\n\nvar s = "import \\"e\\""\n',
            [(4, None, "context"), (6, "_", "a/b"), (7, "x", "c/d")],
        ),
    ],
)
def test_go_imports(source: str, expected: list[tuple[int, str | None, str]]) -> None:
    from kplugin.doctor.framework import go_imports

    assert list(go_imports(source)) == expected
