"""What kplugin upgrade does to an adopted repository's code and files, read without Go:
the framework's moved and renamed names rewritten through the file's own import names
(comments and strings left alone, imports added and dropped), the rules derived from the
catalog's facts and the moves table, go.mod's replace lines moved where they stand, old
configuration apiVersions moved to v1, and a compile error explained."""

from __future__ import annotations

from pathlib import Path

from kplugin.adopt import move
from kplugin.generate import gorewrite
from kplugin.generate.gorewrite import rewrite
from kplugin.model.apichanges import MOVED_TO_FWK, PACKAGES, renames
from kplugin.model.layout import ConfigRecord, Layout
from kplugin.model.project import Project
from kplugin.model.versions import resolve

FRAMEWORK, FWK = PACKAGES["framework"], PACKAGES["fwk"]
SOURCE = """package gang

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	sched "k8s.io/kubernetes/pkg/scheduler/framework"
)

// sched.Handle in a comment stays
var _ sched.PreFilterPlugin = &Plugin{}

func New(ctx context.Context, o runtime.Object, h sched.Handle) (sched.Plugin, error) {
	_ = "sched.Plugin in a string stays"
	return &Plugin{h: h}, nil
}

func (p *Plugin) PostFilter(
	_ context.Context, _ fwk.CycleState, _ *corev1.Pod, _ sched.NodeToStatusReader,
) (*sched.PostFilterResult, *fwk.Status) {
	return nil, nil
}
"""


def _rules(old: str, new: str):  # type: ignore[no-untyped-def]
    a, b = resolve(old), resolve(new)
    return renames(a.facts, b.facts, a.release.key, b.release.key)


def test_names_that_moved_in_1_35_are_rewritten_through_the_file_s_own_import_names() -> None:
    text, done = rewrite(SOURCE, _rules("1.34.12", "1.37.2"))
    assert "sched." not in text.replace("// sched.Handle", "").replace('"sched.Plugin', "")
    assert "// sched.Handle in a comment stays" in text and '"sched.Plugin in a string stays"' in text
    assert "h fwk.Handle) (fwk.Plugin, error)" in text and "var _ fwk.PreFilterPlugin" in text
    # a pointer to a struct stays a pointer when the struct moves
    assert "(*fwk.PostFilterResult, *fwk.Status)" in text and "_ fwk.NodeToStatusReader" in text
    # the framework package is no longer used: its import goes
    assert FRAMEWORK not in text and f'fwk "{FWK}"' in text
    assert "sched.Handle -> fwk.Handle" in done


def test_a_move_down_adds_the_import_and_puts_the_pointers_back() -> None:
    moved, _ = rewrite(SOURCE, _rules("1.34.12", "1.37.2"))
    back, _ = rewrite(moved, _rules("1.37.2", "1.34.12"))
    assert f'"{FRAMEWORK}"' in back and "h framework.Handle" in back
    older, done = rewrite(back, _rules("1.34.12", "1.33"))
    # 1.33's CycleState and Status are framework's: the struct by pointer, Status as before
    assert "_ *framework.CycleState" in older and "*framework.Status" in older and FWK not in older
    assert "fwk.CycleState -> *framework.CycleState" in done


def test_a_name_taken_by_another_package_is_left_for_the_compile_report() -> None:
    taken = SOURCE.replace('fwk "k8s.io/kube-scheduler/framework"', 'fwk "example.com/ours/fwk"')
    text, done = rewrite(taken, _rules("1.34.12", "1.37.2"))
    assert text == taken and done == []


def test_the_rules_come_from_the_facts_and_the_moves_table() -> None:
    up = {(r.old_package, r.old_name): (r.new_package, r.new_name) for r in _rules("1.34.12", "1.35.8")}
    for name in MOVED_TO_FWK["1.35"]:
        assert up[(FRAMEWORK, name)] == (FWK, name)
    entity = {(r.old_name, r.new_name) for r in _rules("1.36.5", "1.37.2")}
    assert ("QueuedPodInfo", "QueuedEntityInfo") in entity
    assert _rules("1.37.2", "1.37.2") == ()


def test_replace_lines_move_where_they_stand_and_old_configs_move_to_v1(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text(
        "module example.com/m\n\nreplace (\n\tk8s.io/api => k8s.io/api v0.37.2 // pinned\n"
        "\tk8s.io/kubernetes => k8s.io/kubernetes v1.37.2\n\texample.com/x => example.com/x v1.0.0\n)\n"
    )
    move.bump_replaces(tmp_path, resolve("1.37.2"), resolve("1.36.5"))
    text = (tmp_path / "go.mod").read_text()
    assert "\tk8s.io/api => k8s.io/api v0.36.5 // pinned\n" in text
    assert "k8s.io/kubernetes => k8s.io/kubernetes v1.36.5" in text and "example.com/x v1.0.0" in text
    # the staging modules a minor adds go into the block, after the others
    move.bump_replaces(tmp_path, resolve("1.36.5"), resolve("1.38.0-beta.0"))
    block = (tmp_path / "go.mod").read_text().split("replace (\n")[1].split(")")[0]
    added = [m for m in resolve("1.38.0-beta.0").release.staging_modules if m != "k8s.io/api"]
    assert sorted(block.splitlines()[3:]) == sorted(f"\t{m} => {m} v0.38.0-beta.0" for m in added)
    config = tmp_path / "old.yaml"
    config.write_text("# ours\napiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n")
    layout = Layout(
        main="cmd", arguments=(), plugins={}, configs=(ConfigRecord("old.yaml", "kubescheduler.config.k8s.io/v1beta3"),)
    )
    project = Project(tmp_path, "m", "example.com/m", resolve("1.37.2"), "s", "m:1", (), {}, {}, layout=layout)
    assert [str(p) for p in move.migrate_configs(tmp_path, project, resolve("1.38.0-beta.0"))] == ["old.yaml"]
    assert (
        config.read_text() == "# ours\napiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )


def test_a_compile_error_is_explained_with_the_minor_that_changed_it(tmp_path: Path) -> None:
    (tmp_path / "p.go").write_text("package p\n\nfunc f(m framework.NodeToStatusMap) {}\n")
    output = "# example.com/m\n./p.go:3:10: undefined: framework.NodeToStatusMap\n"
    lines = gorewrite.explain(tmp_path, output, resolve("1.34.12"), resolve("1.37.2"))
    assert lines[0].startswith("p.go:3: undefined: framework.NodeToStatusMap (Kubernetes 1.35: NodeToStatusMap is gone")
    assert lines[-1].startswith("what changed between them: 1.35: plugin interfaces and Handle move")


def test_an_adopted_repository_s_own_k8s_io_replaces_stay(tmp_path: Path) -> None:
    from kplugin.generate import sync

    old, new = resolve("1.37.2"), resolve("1.36.5")
    staging = "".join(f"\t{m} => {m} v0.37.2\n" for m in old.release.staging_modules)
    (tmp_path / "go.mod").write_text(
        "module example.com/m\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes v1.37.2\n\nreplace (\n" + staging
        + "\tk8s.io/utils => k8s.io/utils v0.0.0-20250101000000-aaaaaaaaaaaa\n)\n"
    )  # fmt: skip
    move.bump_replaces(tmp_path, old, new)
    sync.repin(tmp_path, old, new, b"", adopted=True)
    text = (tmp_path / "go.mod").read_text()
    assert "k8s.io/utils => k8s.io/utils v0.0.0-20250101000000-aaaaaaaaaaaa" in text
    assert "k8s.io/api => k8s.io/api v0.36.5" in text and "k8s.io/kubernetes v1.36.5" in text
