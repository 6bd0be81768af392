"""Issue 10, class 1: kplugin.yaml is untrusted input.

Every tampered kplugin.yaml is refused by every command that loads it (exit 2, one
line naming the file and the field), and nothing inside or outside the project
changes: no write beside the project for a ``../../evil`` name, no deletion of a file
outside it whose sha256 ``generated:`` names.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from support import hostile
from support.hostile import K8S, NEXT_K8S, World

from kplugin.core import yamlio

pytestmark = pytest.mark.hostile

Edit = Callable[[World], None]
COMMANDS = {
    "render-config": lambda w: ("render-config", str(w.project)),
    "doctor": lambda w: ("doctor", str(w.project)),
    "add-plugin": lambda w: ("add", "plugin", "Xx", "-p", str(w.project), "--no-tidy"),
    "add-extension-point": lambda w: ("add", "extension-point", "P", "reserve", "-p", str(w.project), "--no-tidy"),
    "upgrade": lambda w: ("upgrade", str(w.project), "--k8s", NEXT_K8S, "--no-tidy"),
}
VICTIM_SHA = hashlib.sha256(b"a file no kplugin command may touch\n").hexdigest()


def data(world: World) -> Any:
    return YAML(typ="safe").load((world.project / "kplugin.yaml").read_text())


def rewrite(change: Callable[[Any], Any]) -> Edit:
    """Load kplugin.yaml, let ``change`` edit the data (or return a replacement), write it back."""

    def edit(world: World) -> None:
        doc = data(world)
        replaced = change(doc)
        (world.project / "kplugin.yaml").write_text(yamlio.dump(doc if replaced is None else replaced))

    return edit


def text(old: str, new: str) -> Edit:
    def edit(world: World) -> None:
        meta = world.project / "kplugin.yaml"
        content = meta.read_text()
        assert old in content, old
        meta.write_text(content.replace(old, new, 1))

    return edit


def raw(content: str | bytes) -> Edit:
    def edit(world: World) -> None:
        meta = world.project / "kplugin.yaml"
        if isinstance(content, bytes):
            meta.write_bytes(content)
        else:
            meta.write_text(content)

    return edit


def plugin(**fields: Any) -> Callable[[Any], None]:
    def change(doc: Any) -> None:
        doc["plugins"][0].update(fields)

    return change


def generated(key: Any, digest: Any = VICTIM_SHA) -> Callable[[Any], None]:
    def change(doc: Any) -> None:
        doc["generated"][key] = digest

    return change


def second_plugin(name: str, points: list[str] | None = None, package: str | None = None) -> Callable[[Any], None]:
    def change(doc: Any) -> None:
        entry = {"name": name, "package": package or name.lower(), "extensionPoints": points or ["filter"]}
        doc["plugins"].append(entry)

    return change


def drop(key: str) -> Callable[[Any], None]:
    return lambda doc: doc.pop(key) and None


def put(key: str, value: Any) -> Callable[[Any], None]:
    return lambda doc: doc.__setitem__(key, value)


def symlinked_generated_dir(world: World) -> None:
    """generated: names a file through a symlinked directory in the project that leads
    to outside/, with the sha256 of the file there."""
    (world.project / "link").symlink_to(world.outside)
    rewrite(generated("link/victim.txt"))(world)


def symlinked_generated_file(world: World) -> None:
    (world.project / "victim.txt").symlink_to(world.outside / "victim.txt")
    rewrite(generated("victim.txt"))(world)


def meta_symlink(world: World) -> None:
    meta = world.project / "kplugin.yaml"
    copy = world.outside / "kplugin.yaml"
    copy.write_bytes(meta.read_bytes())
    meta.unlink()
    meta.symlink_to(copy)


def meta_node(kind: str) -> Edit:
    def edit(world: World) -> None:
        meta = world.project / "kplugin.yaml"
        meta.unlink()
        if kind == "dir":
            meta.mkdir()
        else:
            os.mkfifo(meta)

    return edit


def two_sorters(doc: Any) -> None:
    doc["plugins"][0]["extensionPoints"] = ["queuesort"]
    second_plugin("Other", ["queuesort"])(doc)


@dataclass(frozen=True)
class Case:
    edit: Edit
    needle: str
    # exit code per command where it is not 2 (commands that do not use the bad part)
    codes: dict[str, int] = field(default_factory=dict)


CASES: dict[str, Case] = {
    # names that would lead out of the project
    "plugin-name-dotdot": Case(rewrite(plugin(name="../../evil")), "plugins[0].name '../../evil'"),
    "plugin-package-dotdot": Case(rewrite(plugin(package="../../evil")), "plugins[0].package"),
    "plugin-name-absolute": Case(rewrite(plugin(name="/tmp/evil")), "plugins[0].name"),
    "project-name-dotdot": Case(rewrite(put("name", "../../evil")), "name '../../evil'"),
    "project-name-upper": Case(rewrite(put("name", "Evil")), "name 'Evil'"),
    "project-name-64": Case(rewrite(put("name", "a" * 64)), "at most 63"),
    "module-dotdot": Case(rewrite(put("module", "../../evil")), "module '../../evil'"),
    # generated: keys out of the project
    "generated-absolute": Case(lambda w: rewrite(generated(str(w.outside / "victim.txt")))(w), "absolute path"),
    "generated-dotdot": Case(rewrite(generated("../../outside/victim.txt")), "'..'"),
    "generated-dot": Case(rewrite(generated("./Dockerfile")), "'..', '.'"),
    "generated-empty-part": Case(rewrite(generated("deploy//rbac.yaml")), "empty part"),
    "generated-backslash": Case(rewrite(generated("..\\outside\\victim.txt")), "backslash"),
    "generated-nul": Case(rewrite(generated("Dockerfile\x00x")), "NUL"),
    "generated-not-a-string": Case(rewrite(generated(17)), "is not a string"),
    "generated-git": Case(rewrite(generated(".git/config")), ".git"),
    "generated-edited-file": Case(rewrite(generated("go.mod")), "edits in place"),
    "generated-bad-digest": Case(rewrite(generated("Dockerfile", "0" * 63 + "g")), "sha256"),
    "generated-int-digest": Case(rewrite(generated("Dockerfile", 0)), "sha256"),
    "generated-list": Case(rewrite(put("generated", [])), "generated must be a mapping"),
    "generated-through-symlink": Case(
        symlinked_generated_dir, "leads through the symlink", {"render-config": 0, "doctor": 0}
    ),
    "generated-symlink-file": Case(symlinked_generated_file, "is a symlink", {"render-config": 0, "doctor": 0}),
    # plugins
    "plugins-empty": Case(rewrite(put("plugins", [])), "plugins must be a non-empty list"),
    "plugins-missing": Case(rewrite(drop("plugins")), "plugins is missing"),
    "plugins-string": Case(rewrite(put("plugins", "P")), "plugins must be a non-empty list"),
    "plugins-item-int": Case(rewrite(put("plugins", [5])), "plugins[0] must be a mapping"),
    "plugin-no-points": Case(rewrite(lambda d: d["plugins"][0].pop("extensionPoints") and None), "extensionPoints"),
    "plugin-points-string": Case(rewrite(plugin(extensionPoints="filter")), "extensionPoints"),
    "plugin-points-empty": Case(rewrite(plugin(extensionPoints=[])), "extensionPoints"),
    "plugin-points-unknown": Case(rewrite(plugin(extensionPoints=["filter", "evil"])), "unknown extension point"),
    "plugin-duplicate": Case(rewrite(second_plugin("P")), "plugin 'P' twice"),
    "plugin-same-package": Case(rewrite(lambda d: [second_plugin(n)(d) for n in ("Ab", "AB")] and None), "'ab' twice"),
    "plugin-package-mismatch": Case(rewrite(plugin(package="other")), "plugins[0].package 'other'"),
    "plugin-package-list": Case(rewrite(plugin(package=[1])), "plugins[0].package"),
    "plugin-name-int": Case(rewrite(plugin(name=7)), "must be a string"),
    "plugin-go-keyword": Case(rewrite(plugin(name="Func", package="func")), "Go keyword"),
    "plugin-special-package": Case(rewrite(plugin(name="Internal", package="internal")), "treats specially"),
    "plugin-in-tree": Case(rewrite(plugin(name="NodeResourcesFit", package="noderesourcesfit")), "clashes"),
    "plugin-unknown-key": Case(rewrite(plugin(evil=1)), "plugins[0].evil is not a plugin field"),
    "plugin-args-list": Case(rewrite(plugin(args=[1])), "plugins[0].args"),
    "plugin-args-kind": Case(rewrite(plugin(args={"nodeLabel": "evil"})), "plugins[0].args"),
    "plugin-args-field": Case(rewrite(plugin(args={"../x": "string"})), "plugins[0].args"),
    "plugin-args-digest-bad": Case(rewrite(plugin(argsSha256="../" + "0" * 61)), "plugins[0].argsSha256"),
    "plugin-args-digest-int": Case(rewrite(plugin(argsSha256=0)), "plugins[0].argsSha256"),
    "two-queue-sorters": Case(rewrite(two_sorters), "QueueSort"),
    # the other fields
    "kubernetes-float": Case(text(f"kubernetes: {K8S}", "kubernetes: 1.30"), "quote it"),
    "kubernetes-unsupported": Case(rewrite(put("kubernetes", "1.99.0")), "Kubernetes 1.99 is not supported"),
    "kubernetes-missing": Case(rewrite(drop("kubernetes")), "kubernetes is missing"),
    "kubernetes-arabic-digit": Case(rewrite(put("kubernetes", "1.2\u0668")), "is not a Kubernetes version"),
    "kubernetes-huge-int": Case(text(f"kubernetes: {K8S}", "kubernetes: " + "9" * 5000), "kplugin.yaml"),
    "name-int": Case(rewrite(put("name", 5)), "name must be a string"),
    "name-missing": Case(rewrite(drop("name")), "name is missing"),
    "module-missing": Case(rewrite(drop("module")), "module is missing"),
    "scheduler-default": Case(rewrite(put("schedulerName", "default-scheduler")), "schedulerName"),
    "scheduler-bool": Case(rewrite(put("schedulerName", True)), "schedulerName must be a string"),
    "image-bad": Case(rewrite(put("image", "Evil Image")), "image"),
    "image-no-tag": Case(rewrite(put("image", "registry.example.com/p")), "image"),
    "api-bad": Case(rewrite(put("api", "evil")), "api 'evil'"),
    # where a fork is comes from --template, never from the file
    "template-path": Case(
        rewrite(put("template", "../../outside/fork")), "template '../../outside/fork' is not 'fork'"
    ),
    "kplugin-list": Case(rewrite(put("kplugin", [1])), "kplugin"),
    "unknown-key": Case(rewrite(put("evil", 1)), "evil is not a field of kplugin.yaml"),
    "document-list": Case(rewrite(lambda _doc: [1, 2]), "the document must be a mapping"),
    "document-empty": Case(raw(""), "the document must be a mapping"),
    "document-scalar": Case(raw("hello\n"), "the document must be a mapping"),
    # the file itself
    "anchors": Case(lambda w: raw("x: &a 1\ny: *a\n" + (w.project / "kplugin.yaml").read_text())(w), "anchors"),
    "duplicate-key": Case(lambda w: raw((w.project / "kplugin.yaml").read_text() + "name: q\n")(w), "duplicate"),
    "billion-laughs": Case(raw(hostile.BILLION_LAUGHS), "anchors"),
    "deep-flow": Case(raw(hostile.DEEP_FLOW), "nested more than"),
    "deep-block": Case(raw(hostile.DEEP_BLOCK), "nested more than"),
    "not-yaml": Case(raw("name: [unclosed\n"), "not valid YAML"),
    "tab-indent": Case(raw("name: p\nplugins:\n\t- x\n"), "not valid YAML"),
    "python-tag": Case(raw("name: !!python/object:os.system x\n"), "not valid YAML"),
    "latin-1": Case(lambda w: raw((w.project / "kplugin.yaml").read_bytes() + b"# caf\xe9\n")(w), "offset"),
    "utf-16": Case(lambda w: raw((w.project / "kplugin.yaml").read_text().encode("utf-16"))(w), "not UTF-8"),
    "too-large": Case(raw(b"# " + b"x" * (1 << 20) + b"\n"), "bytes"),
    "symlink-out": Case(meta_symlink, "is a symlink"),
    "a-directory": Case(meta_node("dir"), "is a directory"),
    "a-fifo": Case(meta_node("fifo"), "is a FIFO"),
    "missing": Case(lambda w: (w.project / "kplugin.yaml").unlink(), "is not a kplugin project"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_tampered_project_file(run: hostile.KplugIn, tmp_path: Path, case: str) -> None:
    """Each command that loads the project, on one tampered world (a refusal changes nothing,
    so the next command meets the same world)."""
    world = hostile.make_world(tmp_path)
    spec = CASES[case]
    spec.edit(world)
    before = world.snapshot()
    for name, args in COMMANDS.items():
        result = run(*args(world))
        code = spec.codes.get(name, 2)
        if code == 2:
            line = hostile.refused(result, 2, spec.needle)
            assert "kplugin.yaml" in line or case in {"missing", "generated-through-symlink", "generated-symlink-file"}
        else:
            hostile.no_crash(result)
            assert result.code == code, (name, result.stderr)
        assert world.snapshot() == before, name
    assert not (world.root / "evil").exists() and not (world.work / "evil").exists()


def test_untampered_project_is_accepted(run: hostile.KplugIn, tmp_path: Path) -> None:
    """The control: the same commands on the project as generated succeed, and add plugin
    changes only the files of the new plugin and those that register it."""
    world = hostile.make_world(tmp_path)
    before = world.snapshot()
    for name in ("render-config", "doctor"):
        hostile.succeeded(run(*COMMANDS[name](world)))
    assert world.snapshot() == before
    hostile.succeeded(run(*COMMANDS["add-plugin"](world)))
    changes = hostile.changed(before, world.snapshot())
    outside_project = {c for c in changes if not c.startswith("work/p/")}
    assert not outside_project, outside_project
    assert {c.removeprefix("work/p/") for c in changes} >= {"pkg/xx", "pkg/xx/plugin.go", "kplugin.yaml"}
    assert all(
        c.removeprefix("work/p/").startswith(
            ("pkg/xx", "charts/", "deploy/", "cmd/scheduler/plugins.go", "kplugin", "config/args/xx.yaml", "Makefile")
        )
        for c in changes
    ), changes


def test_symlinked_generated_file_is_not_deleted(run: hostile.KplugIn, tmp_path: Path) -> None:
    """The reproduction of the issue: a generated: entry naming a file outside the
    project with its sha256 must never get that file deleted, whatever the spelling."""
    world = hostile.make_world(tmp_path)
    victim = world.outside / "victim.txt"
    for spelling in (str(victim), "../../outside/victim.txt", "../outside/victim.txt"):
        rewrite(generated(spelling))(world)
        hostile.refused(run(*COMMANDS["add-plugin"](world)), 2, "kplugin.yaml")
        assert victim.read_text() == "a file no kplugin command may touch\n"
        rewrite(lambda d, s=spelling: d["generated"].pop(s) and None)(world)
