"""The project template is a true cookiecutter template: plain cookiecutter renders it
into the same files kplugin new writes, and a team's fork of it renders through
kplugin new --template (no Go needed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import pytest
from support import REPO, Run, tree

from kplugin.core import yamlio
from kplugin.generate import scaffold
from kplugin.generate.templating import templates_root
from kplugin.model.spec import ProjectSpec
from kplugin.model.versions import resolve

New = Callable[..., Run]
# what kplugin renders in Python, around the template: the configuration, manifests, args files
# (the chart too, from deploy/'s data: only its _helpers.tpl is in the template)
AROUND = ("deploy/", "config/args/", "config/rbac/", "kplugin.yaml", "charts/parity/Chart.yaml",
          "charts/parity/values.yaml",
          *(f"charts/parity/templates/{name}.yaml" for name in ("configmap", "deployment", "rbac")))  # fmt: skip


CASES = [("1.28.3", "prefilter,filter,score", "layer"), ("1.37", "queuesort,enqueueextensions,preenqueue", "native")]


@pytest.mark.parametrize(("version", "points", "api"), CASES)
def test_plain_cookiecutter_writes_what_kplugin_new_writes(
    kplugin: New, tmp_path: Path, version: str, points: str, api: str
) -> None:
    spec = ProjectSpec.create("parity", resolve(version), extension_points=points, api=api)
    config = tmp_path / "cookiecutter.yaml"
    config.write_text(yamlio.dump({"default_context": scaffold.template_context(spec)}))
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # the template's hook uses this kplugin
    cookiecutter = shutil.which("cookiecutter") or f"{Path(sys.executable).parent}/cookiecutter"
    proc = subprocess.run(
        [cookiecutter, "--no-input", "--config-file", str(config), str(templates_root() / "project"),
         "-o", str(tmp_path / "plain")],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    run = kplugin("new", "parity", "--k8s", version, "--extension-points", points, "--api", api,
                  "--no-tidy", "-o", str(tmp_path / "kplugin"))  # fmt: skip
    assert run.code == 0, run.stderr
    plain, ours = tree(tmp_path / "plain/parity"), tree(tmp_path / "kplugin/parity")
    assert sorted(plain) == sorted(p for p in ours if not p.startswith(AROUND))
    for path, content in plain.items():
        assert ours[path] == content, path


def test_new_with_a_fork_of_the_template(kplugin: New, tmp_path: Path) -> None:
    """A team keeps its house style in a fork: kplugin new --template DIR or ZIP renders
    it, with kplugin's validation and staging around it."""
    fork = tmp_path / "fork"
    shutil.copytree(templates_root() / "project", fork)
    readme = fork / "[[cookiecutter.project_name]]/README.md"
    readme.write_text("# [[ cookiecutter.project_name ]]: built the ACME way\n")
    run = kplugin("new", "acme", "--no-tidy", "--template", str(fork), "-o", str(tmp_path / "a"))
    assert run.code == 0, run.stderr
    assert (tmp_path / "a/acme/README.md").read_text() == "# acme: built the ACME way\n"
    assert (tmp_path / "a/acme/pkg/acme/plugin.go").is_file()
    archive = tmp_path / "fork.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(fork.rglob("*")):
            if path.is_file():
                zipped.write(path, Path("fork") / path.relative_to(fork))
    run = kplugin("new", "acme", "--no-tidy", "--template", str(archive), "-o", str(tmp_path / "z"))
    assert run.code == 0, run.stderr
    assert tree(tmp_path / "z/acme") == tree(tmp_path / "a/acme")


def acme_fork(tmp_path: Path) -> Path:
    """A fork with a document of the team's own, declared the user's (docs/TEAM.md), and
    its house style in a managed file (a line in the Makefile)."""
    fork = tmp_path / "fork"
    shutil.copytree(templates_root() / "project", fork)
    top = fork / "[[cookiecutter.project_name]]"
    (top / "docs").mkdir()
    (top / "docs/TEAM.md").write_text("# [[ cookiecutter.project_name ]] at ACME\nOwners: team-sched\n")
    config = json.loads((fork / "cookiecutter.json").read_text())
    config["_files"]["user"].append("docs/TEAM.md")
    (fork / "cookiecutter.json").write_text(json.dumps(config, indent=2))
    makefile = top / "Makefile"
    makefile.write_text("# ACME house style\n" + makefile.read_text())
    return fork


def test_upgrade_and_add_render_the_fork_the_project_was_made_from(kplugin: New, tmp_path: Path) -> None:
    """kplugin.yaml records that a project comes from a fork (template: fork), never where
    the fork is: upgrade and add plugin refuse to go on without --template (kplugin's own
    template would drop the team's files and style), and with it they render the fork,
    its files owned as the fork declares them."""
    fork = acme_fork(tmp_path)
    run = kplugin("new", "acme", "--k8s", "1.28.3", "--no-tidy", "--template", str(fork), "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    project = tmp_path / "acme"
    meta = yamlio.parse((project / "kplugin.yaml").read_text(), "kplugin.yaml")
    assert meta["template"] == "fork"
    assert "docs/TEAM.md" not in meta["generated"] and "Makefile" in meta["generated"]
    team = project / "docs/TEAM.md"
    team.write_text(team.read_text() + "On call: ops-2\n")  # the team's own edit
    before = tree(project)
    for args in (("upgrade", str(project), "--k8s", "1.37"), ("add", "plugin", "FifoSort", "-p", str(project))):
        run = kplugin(*args, "--no-tidy")
        assert run.code == 2, run.stderr
        assert run.stderr.strip().splitlines() == [
            f"kplugin: error: {project.resolve() / 'kplugin.yaml'} says the project was made from a fork of "
            "kplugin's project template (template: fork): give the fork again with --template DIR|ZIP (or delete "
            "that line to move the project to kplugin's own template)"
        ]
        assert tree(project) == before
    run = kplugin("upgrade", str(project), "--k8s", "1.37", "--no-tidy", "--template", str(fork))
    assert run.code == 0, run.stderr
    # another shape of plugin, through the same fork
    run = kplugin("add", "plugin", "FifoSort", "--extension-points", "queuesort", "-p", str(project), "--no-tidy",
                  "--template", str(fork))  # fmt: skip
    assert run.code == 0, run.stderr
    assert team.read_text() == "# acme at ACME\nOwners: team-sched\nOn call: ops-2\n"
    assert (project / "Makefile").read_text().startswith("# ACME house style\n")
    assert "k8s.io/kubernetes v1.37" in (project / "go.mod").read_text()
    assert (project / "pkg/fifosort/plugin.go").is_file()
    meta = yamlio.parse((project / "kplugin.yaml").read_text(), "kplugin.yaml")
    assert meta["template"] == "fork" and "docs/TEAM.md" not in meta["generated"]
    assert [p["name"] for p in meta["plugins"]] == ["Acme", "FifoSort"]


def test_a_copy_for_another_version_renders_the_fork(kplugin: New, tmp_path: Path) -> None:
    """build, e2e and bench --k8s work on a copy moved to that version, rendered from the
    template: for a fork project, its fork (--template), else they refuse before anything
    is built."""
    from kplugin.generate import sync
    from kplugin.generate.templating import fork as checked
    from kplugin.model import project as projects

    fork = acme_fork(tmp_path)
    run = kplugin("new", "acme", "--k8s", "1.28.3", "--no-tidy", "--template", str(fork), "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    project = tmp_path / "acme"
    before = tree(project)
    for command in (("build", "--builder", "local"), ("e2e",), ("bench",)):
        run = kplugin(command[0], str(project), "--k8s", "1.37", *command[1:])
        assert run.code == 2, run.stderr
        assert (
            run.stderr.strip()
            .splitlines()[-1]
            .endswith(
                "says the project was made from a fork of kplugin's project template (template: fork): give the fork "
                "again with --template DIR|ZIP (or delete that line to move the project to kplugin's own template)"
            )
        ), run.stderr
        assert tree(project) == before
    # what the copy is made of: the fork's files, none of the team's deleted
    loaded = projects.load(project)._replace(template=checked(fork))
    plan = sync.plan(loaded, loaded.spec(resolve("1.37")), force=True)
    assert plan.writes[PurePosixPath("Makefile")].startswith(b"# ACME house style\n")
    assert PurePosixPath("docs/TEAM.md") not in plan.deletes and not plan.conflicts
    assert b"template: fork" in plan.metadata


def test_a_project_of_kplugins_own_template_may_move_to_a_fork(kplugin: New, tmp_path: Path) -> None:
    fork = acme_fork(tmp_path)
    run = kplugin("new", "acme", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    project = tmp_path / "acme"
    assert "template" not in yamlio.parse((project / "kplugin.yaml").read_text(), "kplugin.yaml")
    run = kplugin("upgrade", str(project), "--k8s", "1.28.3", "--no-tidy", "--template", str(fork))
    assert run.code == 0, run.stderr
    assert (project / "docs/TEAM.md").read_text() == "# acme at ACME\nOwners: team-sched\n"
    assert yamlio.parse((project / "kplugin.yaml").read_text(), "kplugin.yaml")["template"] == "fork"


@pytest.mark.parametrize(
    ("broken", "needle"),
    [
        ("no-json", "no cookiecutter.json"),
        ("missing-variable", "lacks"),
        ("files-not-strings", "cookiecutter.json's _files must be"),
        ("zip-slip", "leads out of the archive"),
        ("no-top-directory", "its top directory must be [[cookiecutter.project_name]]"),
        # Jinja's default delimiters, as a fork may choose: then the top directory is {{...}}
        ("default-delimiters", "its top directory must be {{cookiecutter.project_name}}"),
    ],
)
def test_a_fork_kplugin_cannot_use_is_refused(kplugin: New, tmp_path: Path, broken: str, needle: str) -> None:
    fork = tmp_path / "fork"
    shutil.copytree(templates_root() / "project", fork)
    template = fork
    if broken == "no-json":
        (fork / "cookiecutter.json").unlink()
    elif broken == "missing-variable":
        text = (fork / "cookiecutter.json").read_text().replace('  "plugin_name": "GpuAware",\n', "")
        (fork / "cookiecutter.json").write_text(text)
    elif broken == "files-not-strings":
        config = json.loads((fork / "cookiecutter.json").read_text())
        config["_files"]["user"].append({"path": "docs/TEAM.md"})
        (fork / "cookiecutter.json").write_text(json.dumps(config))
    elif broken == "no-top-directory":
        (fork / "[[cookiecutter.project_name]]").rename(fork / "project")
    elif broken == "default-delimiters":
        config = json.loads((fork / "cookiecutter.json").read_text())
        config["_jinja2_env_vars"] = {"trim_blocks": True, "lstrip_blocks": True}
        (fork / "cookiecutter.json").write_text(json.dumps(config))
    else:
        template = tmp_path / "evil.zip"
        with zipfile.ZipFile(template, "w") as zipped:
            zipped.writestr("../../evil.txt", "x")
    run = kplugin("new", "acme", "--no-tidy", "--template", str(template), "-o", str(tmp_path / "out"))
    assert run.code == 2, run.stderr
    assert needle in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists() and not (tmp_path.parent / "evil.txt").exists()


def test_a_file_exists_where_its_declared_condition_holds(kplugin: New, tmp_path: Path) -> None:
    """_files.when in cookiecutter.json decides whether a file exists; a file that renders
    empty without a declared condition is an error naming it, not silently left out."""
    fork = tmp_path / "fork"
    shutil.copytree(templates_root() / "project", fork)
    config = json.loads((fork / "cookiecutter.json").read_text())
    config["_files"]["when"]["NATIVE.md"] = "cookiecutter.api == 'native'"
    (fork / "cookiecutter.json").write_text(json.dumps(config))
    (fork / "[[cookiecutter.project_name]]/NATIVE.md").write_text("written against [[ cookiecutter.k8s_minor ]]\n")
    for api in ("layer", "native"):
        run = kplugin("new", "acme", "--no-tidy", "--api", api, "--template", str(fork), "-o", str(tmp_path / api))
        assert run.code == 0, run.stderr
    assert not (tmp_path / "layer/acme/NATIVE.md").exists()
    assert (tmp_path / "native/acme/NATIVE.md").read_text().startswith("written against 1.")
    assert not (tmp_path / "native/acme/internal/fw").exists()  # kplugin's own: api == 'layer'

    (fork / "[[cookiecutter.project_name]]/EMPTY.md").write_text("<% if false %>never<% endif %>\n\n")
    run = kplugin("new", "acme", "--no-tidy", "--template", str(fork), "-o", str(tmp_path / "empty"))
    assert run.code == 1
    assert "EMPTY.md renders empty; declare when it exists in cookiecutter.json's _files.when" in run.stderr
    assert not (tmp_path / "empty").exists()


def test_ownership_is_what_the_template_declares() -> None:
    """The user's files are _files.user of the template (a path variable is a glob, the
    extension point each point): the stubs are the user's, the adapter is managed."""
    from kplugin.generate.scaffold import is_managed, is_user_file

    for user in ("pkg/gpuaware/plugin.go", "pkg/gpuaware/reserve.go", "pkg/x/permit_test.go", "config/args/x.yaml"):
        assert is_user_file(PurePosixPath(user)), user
    for managed in ("pkg/gpuaware/zz_generated.adapter.go", "pkg/x/other.go", "internal/fw/zz_generated.fw.go",
                    "deploy/rbac.yaml", "Makefile"):  # fmt: skip
        assert not is_user_file(PurePosixPath(managed)) and is_managed(PurePosixPath(managed)), managed
