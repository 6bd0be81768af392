"""kplugin upgrade and kplugin add plugin through the CLI, where no Go is needed: every
refusal leaves the project byte for byte as it was; dry runs list exactly the
version-specific files; add plugin --no-tidy writes the new package and registers it.
The successful upgrades (go.mod re-pinned, tidied, built) are in test_integration_compat."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from support import Kplugin, Run, tree

from kplugin.core import digest
from kplugin.generate import scaffold


@pytest.fixture
def project(kplugin: Kplugin, tmp_path: Path) -> Path:
    run = kplugin("new", "gpu", "--k8s", "1.28.15", "--no-tidy", "-o", str(tmp_path), "--extension-points",
                  "prefilter,filter,score")  # fmt: skip
    assert run.code == 0, run.stderr
    return tmp_path / "gpu"


def refused(run: Run, code: int, *needles: str) -> None:
    assert run.code == code, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("kplugin: error: ")
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert "Traceback" not in run.stderr


def test_dry_run_lists_only_generated_files(kplugin: Kplugin, project: Path) -> None:
    """Without go mod tidy here (no Go module downloads in unit tests): go.mod is re-pinned
    in the stage, go.sum left alone; test_integration_compat compares a tidied dry run
    with the real run."""
    before = tree(project)
    run = kplugin("upgrade", str(project), "--k8s", "1.37", "--dry-run", "--json", "--no-tidy")
    assert run.code == 0, run.stderr
    result = json.loads(run.stdout)
    assert (result["from"], result["to"], result["dry_run"]) == ("1.28.15", "1.37.2", True)
    changed = set(result["changed"])
    assert "go.sum" not in changed
    assert {
        "go.mod",
        "Dockerfile",
        "internal/fw/zz_generated.fw.go",
        "internal/schedtest/zz_generated.schedtest.go",
        "pkg/gpu/zz_generated.adapter.go",
        "deploy/rbac.yaml",  # 1.34 added DRA rules
    } <= changed
    assert not any(scaffold.is_user_file(Path(p)) for p in changed), changed
    assert tree(project) == before
    real = kplugin("upgrade", str(project), "--k8s", "1.37", "--json", "--no-tidy")
    assert real.code == 0, real.stderr
    assert json.loads(real.stdout)["changed"] == result["changed"], "the dry run lists what the run changes"


def test_a_refresh_at_the_same_version_lists_what_it_rewrites(kplugin: Kplugin, project: Path) -> None:
    """A new schedulerName in kplugin.yaml, then the same version again: deploy/, the
    chart and kplugin.yaml's digests are rewritten. The dry run lists exactly that, as
    the run does; go.mod and go.sum are not listed (they do not change)."""
    meta = project / "kplugin.yaml"
    meta.write_text(meta.read_text().replace("schedulerName: gpu\n", "schedulerName: gpu-two\n"))
    before = tree(project)
    dry = kplugin("upgrade", str(project), "--k8s", "1.28.15", "--dry-run", "--json", "--no-tidy")
    assert dry.code == 0, dry.stderr
    assert tree(project) == before
    real = kplugin("upgrade", str(project), "--k8s", "1.28.15", "--json", "--no-tidy")
    assert real.code == 0, real.stderr
    changed = json.loads(real.stdout)["changed"]
    assert json.loads(dry.stdout)["changed"] == changed
    after = tree(project)
    assert changed == sorted(p for p in {*before, *after} if before.get(p) != after.get(p))
    assert {"kplugin.yaml", "deploy/configmap.yaml", "charts/gpu/values.yaml"} <= set(changed), changed
    assert not {"go.mod", "go.sum"} & set(changed)


def test_a_refresh_brings_the_reporting_plugin_to_a_project_made_before_it(kplugin: Kplugin, project: Path) -> None:
    """A project as kplugin wrote it before the reporting plugin came: cmd/scheduler/main.go
    without it (as recorded), no internal/rejections. The same version again writes both."""
    import hashlib
    import re
    import subprocess

    from kplugin.e2e import run as e2e_run

    old = (project / "cmd/scheduler/main.go").read_text().replace('\t"example.com/gpu/internal/rejections"\n', "")
    old = old.replace("\treturn append(opts, app.WithPlugin(rejections.Name, rejections.New))", "\treturn opts")
    assert "rejections" not in old.split("package main")[1], "the old main.go registers the plugins only"
    (project / "cmd/scheduler/main.go").write_text(old)
    (project / e2e_run.REJECTIONS_SOURCE).unlink()
    (project / "internal/rejections").rmdir()
    meta = project / "kplugin.yaml"
    recorded = re.sub(r"  internal/rejections/zz_generated.rejections.go: [0-9a-f]+\n", "", meta.read_text())
    recorded = re.sub(r"(  cmd/scheduler/main.go: )[0-9a-f]+",
                      lambda m: m.group(1) + hashlib.sha256(old.encode()).hexdigest(), recorded)  # fmt: skip
    meta.write_text(recorded)
    real = kplugin("upgrade", str(project), "--k8s", "1.28.15", "--json", "--no-tidy")
    assert real.code == 0, real.stderr
    changed = json.loads(real.stdout)["changed"]
    assert changed == ["cmd/scheduler/main.go", e2e_run.REJECTIONS_SOURCE, "kplugin.yaml"], changed
    main = (project / "cmd/scheduler/main.go").read_text()
    assert "app.WithPlugin(rejections.Name, rejections.New)" in main
    gofmt = subprocess.run(["gofmt", "-l", str(project / "cmd"), str(project / "internal")],
                           capture_output=True, text=True, check=False)  # fmt: skip
    assert gofmt.returncode == 0 and gofmt.stdout == "", gofmt.stdout + gofmt.stderr


@pytest.mark.parametrize(
    ("version", "needle"),
    [
        ("1.27", "Kubernetes 1.27 is not supported; supported: 1.28 to 1.37"),
        ("1.99.0", "Kubernetes 1.99 is not supported"),
        ("latest", "is not a Kubernetes version"),
    ],
)
def test_unsupported_version(kplugin: Kplugin, project: Path, version: str, needle: str) -> None:
    before = tree(project)
    refused(kplugin("upgrade", str(project), "--k8s", version), 2, needle)
    assert tree(project) == before


def test_missing_version(kplugin: Kplugin, project: Path) -> None:
    refused(kplugin("upgrade", str(project)), 2, "missing --k8s")


def test_not_a_project(kplugin: Kplugin, tmp_path: Path) -> None:
    (tmp_path / "main.go").write_text("package main\n")
    refused(kplugin("upgrade", str(tmp_path), "--k8s", "1.37"), 2, "is not a kplugin project", "kplugin.yaml")
    assert tree(tmp_path) == {"main.go": b"package main\n"}


@pytest.mark.parametrize(
    ("corrupt", "needle"),
    [
        ("kplugin: [unclosed\n", "is not valid YAML"),
        ("name: gpu\n", "module is missing"),
        ("{{}", "is not valid YAML"),
    ],
)
def test_corrupt_project_file(kplugin: Kplugin, project: Path, corrupt: str, needle: str) -> None:
    (project / "kplugin.yaml").write_text(corrupt)
    before = tree(project)
    refused(kplugin("upgrade", str(project), "--k8s", "1.37"), 2, "kplugin.yaml", needle)
    assert tree(project) == before


def test_corrupt_version_in_project_file_names_the_file(kplugin: Kplugin, project: Path) -> None:
    meta = project / "kplugin.yaml"
    meta.write_text(meta.read_text().replace("kubernetes: 1.28.15", "kubernetes: 1.12.0"))
    refused(
        kplugin("upgrade", str(project), "--k8s", "1.37"),
        2,
        "kplugin.yaml: kubernetes 1.12.0: Kubernetes 1.12 is not supported",
    )


@pytest.mark.parametrize("edited", ["internal/fw/zz_generated.fw.go", "pkg/gpu/zz_generated.adapter.go", "Dockerfile"])
def test_hand_edited_generated_file_stops_upgrade(kplugin: Kplugin, project: Path, edited: str) -> None:
    with (project / edited).open("a") as handle:
        handle.write("\n// my change\n")
    before = tree(project)
    refused(kplugin("upgrade", str(project), "--k8s", "1.37"), 1, edited, "edited by hand", "nothing was changed")
    assert tree(project) == before


def test_edited_generated_file_that_does_not_change_is_no_conflict(kplugin: Kplugin, project: Path) -> None:
    """.golangci.yml is the same on every version: an edit there does not block."""
    with (project / ".golangci.yml").open("a") as handle:
        handle.write("# mine\n")
    run = kplugin("upgrade", str(project), "--k8s", "1.37", "--dry-run", "--json", "--no-tidy")
    assert run.code == 0, run.stderr
    assert ".golangci.yml" not in json.loads(run.stdout)["changed"]


def test_keep_edited_names_the_kept_files(kplugin: Kplugin, project: Path) -> None:
    with (project / "Makefile").open("a") as handle:
        handle.write("\nmine:\n\techo mine\n")
    run = kplugin("upgrade", str(project), "--k8s", "1.37", "--dry-run", "--json", "--keep-edited", "--no-tidy")
    assert run.code == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["kept_edited"] == ["Makefile"]
    assert "Makefile.kplugin-new" in result["changed"] and "Makefile" not in result["changed"]


def test_file_in_the_way_is_a_conflict(kplugin: Kplugin, project: Path) -> None:
    """A file kplugin did not generate where the target version needs one."""
    meta = project / "kplugin.yaml"
    data = YAML(typ="safe").load(meta)
    del data["generated"]["internal/fw/zz_generated.fw.go"]
    from kplugin.core import yamlio

    meta.write_text(yamlio.dump(data))
    (project / "internal/fw/zz_generated.fw.go").write_text("package fw // mine\n")
    refused(kplugin("upgrade", str(project), "--k8s", "1.37"), 1, "not generated by kplugin")


def test_a_native_project_s_move_across_minors_needs_tidy(kplugin: Kplugin, tmp_path: Path) -> None:
    """Its code is rewritten and must compile there (tests/integration/test_integration_adopt.py)."""
    assert kplugin("new", "nat", "--k8s", "1.28.3", "--api", "native", "--no-tidy", "-o", str(tmp_path)).code == 0
    project = tmp_path / "nat"
    before = tree(project)
    refused(
        kplugin("upgrade", str(project), "--k8s", "1.33", "--no-tidy"),
        2,
        "written against the framework API of Kubernetes 1.28 (--api native)",
        "(pkg/nat/plugin.go)",
        "leave --no-tidy out",
    )
    assert tree(project) == before
    run = kplugin("upgrade", str(project), "--k8s", "1.28.15", "--dry-run", "--json", "--no-tidy")
    assert run.code == 0, run.stderr  # a patch upgrade keeps the API


def test_bad_api_mode(kplugin: Kplugin, tmp_path: Path) -> None:
    run = kplugin("new", "gpu", "--api", "fancy", "--no-tidy", "-o", str(tmp_path))
    refused(run, 2, "--api 'fancy'")
    assert list(tmp_path.iterdir()) == []


# --- kplugin add plugin ------------------------------------------------------------


def test_add_plugin_creates_the_package_and_registers_it(kplugin: Kplugin, project: Path) -> None:
    mine = project / "pkg/gpu/plugin.go"
    mine.write_text(mine.read_text() + "\n// my own change\n")
    before = tree(project)
    args = ("add", "plugin", "Another", "-p", str(project), "--extension-points", "prefilter,filter", "--no-tidy")
    dry = kplugin(*args, "--dry-run")
    assert dry.code == 0, dry.stderr
    assert tree(project) == before
    run = kplugin(*args)
    assert run.code == 0, run.stderr
    after = tree(project)
    listed = [line.split()[-1] for line in dry.stderr.splitlines() if line.startswith("  ")]
    assert listed == [line.split()[-1] for line in run.stderr.splitlines() if line.startswith("  ")]
    assert sorted(listed) == sorted(p for p in {*before, *after} if before.get(p) != after.get(p)), listed
    for name in ["plugin.go", "plugin_test.go", "args.go", "register.go", "zz_generated.adapter.go"]:
        assert f"pkg/another/{name}" in after, name
    assert after["pkg/gpu/plugin.go"] == before["pkg/gpu/plugin.go"]
    imports = after["cmd/scheduler/plugins.go"].decode()
    assert (
        '\t_ "example.com/gpu/pkg/another"\n\t_ "example.com/gpu/pkg/gpu"\n\t// +kplugin:scaffold:plugin-imports'
        in (imports)
    )
    meta = YAML(typ="safe").load(after["kplugin.yaml"])
    assert [p["name"] for p in meta["plugins"]] == ["Gpu", "Another"]
    assert meta["generated"]["pkg/another/zz_generated.adapter.go"] == digest.sha256_hex(
        after["pkg/another/zz_generated.adapter.go"]
    )
    config = YAML(typ="safe").load(after["deploy/scheduler-config.yaml"])
    filters = [p["name"] for p in config["profiles"][0]["plugins"]["filter"]["enabled"]]
    assert filters == ["Gpu", "Another"]
    assert {c["name"] for c in config["profiles"][0]["pluginConfig"]} == {"Gpu", "Another"}
    changed = {line.strip() for line in run.stderr.splitlines()[1:]}
    assert "deploy/scheduler-config.yaml" in changed and "pkg/gpu/plugin.go" not in changed


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["Gpu"], "plugin 'Gpu' is already in this project"),
        (["bad_name"], "plugin name 'bad_name'"),
        (["NodeResourcesFit"], "clashes with"),
        (["Second", "--extension-points", "nope"], "unknown extension point 'nope'"),
    ],
)
def test_add_plugin_bad_input(kplugin: Kplugin, project: Path, args: list[str], needle: str) -> None:
    before = tree(project)
    refused(kplugin("add", "plugin", *args, "-p", str(project), "--no-tidy"), 2, needle)
    assert tree(project) == before


def test_add_second_queue_sort_refused(kplugin: Kplugin, tmp_path: Path) -> None:
    assert kplugin("new", "qs", "--extension-points", "queuesort", "--no-tidy", "-o", str(tmp_path)).code == 0
    refused(
        kplugin("add", "plugin", "Other", "-p", str(tmp_path / "qs"), "--extension-points", "queuesort,filter"),
        2,
        "Qs already sorts the queue",
    )


def test_add_plugin_without_marker(kplugin: Kplugin, project: Path) -> None:
    imports = project / "cmd/scheduler/plugins.go"
    imports.write_text(imports.read_text().replace("\t// +kplugin:scaffold:plugin-imports\n", ""))
    before = tree(project)
    refused(kplugin("add", "plugin", "Another", "-p", str(project), "--no-tidy"), 1, "+kplugin:scaffold:plugin-imports")
    assert tree(project) == before


def test_add_plugin_stops_on_edited_config(kplugin: Kplugin, project: Path) -> None:
    config = project / "deploy/scheduler-config.yaml"
    config.write_text(config.read_text() + "# tuned by hand\n")
    before = tree(project)
    refused(
        kplugin("add", "plugin", "Another", "-p", str(project), "--no-tidy"),
        1,
        "deploy/scheduler-config.yaml",
        "edited by hand",
    )
    assert tree(project) == before
    run = kplugin("add", "plugin", "Another", "-p", str(project), "--no-tidy", "--keep-edited")
    assert run.code == 0, run.stderr
    assert config.read_text().endswith("# tuned by hand\n")
    assert "name: Another" in (project / "deploy/scheduler-config.yaml.kplugin-new").read_text()


def test_project_without_recorded_files_is_refused(kplugin: Kplugin, project: Path) -> None:
    """A kplugin.yaml of an earlier kplugin (no generated: section) cannot be upgraded safely."""
    from kplugin.core import yamlio

    meta = project / "kplugin.yaml"
    data = YAML(typ="safe").load(meta)
    del data["generated"]
    meta.write_text(yamlio.dump(data))
    before = tree(project)
    refused(kplugin("upgrade", str(project), "--k8s", "1.37"), 2, "records no generated files", "kplugin new")
    refused(kplugin("add", "plugin", "Other", "-p", str(project), "--no-tidy"), 2, "records no generated files")
    assert tree(project) == before


def test_disk_full_while_copying_for_another_version(
    kplugin: Kplugin, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OSError kplugin does not wrap itself (here: the disk fills while build --k8s
    copies the project) is a failed operation: one line with the reason and the fix, exit
    1, not an internal error; the project is untouched and the copy removed."""
    import errno

    from kplugin.generate import stage as engine

    def full(source: Path, stage: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(stage / "go.sum"))

    monkeypatch.setattr(engine, "_copy_project", full)
    before = tree(project)
    run = kplugin("build", str(project), "--k8s", "1.37", "--builder", "local")
    assert run.code == 1, run.stderr
    (error,) = [line for line in run.stderr.splitlines() if "error" in line]  # besides the progress line
    assert error.startswith("kplugin: error: No space left on device: "), error
    assert error.endswith("go.sum (free some disk space and run the command again)"), error
    assert "Traceback" not in run.stderr
    assert tree(project) == before
    assert not [p for p in project.parent.iterdir() if ".kplugin-" in p.name], "the copy is left"


def image_lines(project: Path) -> list[str]:
    files = ["kplugin.yaml", "deploy/deployment.yaml", "charts/gpu/values.yaml"]
    return [line.strip() for f in files for line in (project / f).read_text().splitlines() if "image" in line or
            line.strip().startswith(("repository:", "tag:"))]  # fmt: skip


def test_upgrade_keeps_a_custom_image(kplugin: Kplugin, project: Path) -> None:
    """A custom image in kplugin.yaml survives upgrade (the Kubernetes version in its tag
    follows) and reaches the Deployment and the chart; the default follows the version."""
    meta = project / "kplugin.yaml"
    assert "image: gpu:0.1.0-k8s1.28.15\n" in meta.read_text()
    meta.write_text(meta.read_text().replace("image: gpu:0.1.0-k8s1.28.15", "image: reg.example.com/gpu:3-k8s1.28.15"))
    assert kplugin("upgrade", str(project), "--k8s", "1.37", "--no-tidy").code == 0
    assert image_lines(project) == [
        "image: reg.example.com/gpu:3-k8s1.37.2",
        "image: reg.example.com/gpu:3-k8s1.37.2",
        "imagePullPolicy: IfNotPresent",
        "image:",
        "repository: reg.example.com/gpu",
        "tag: 3-k8s1.37.2",
    ]
    run = kplugin("add", "plugin", "Another", "-p", str(project), "--no-tidy")
    assert run.code == 0, run.stderr
    assert "image: reg.example.com/gpu:3-k8s1.37.2\n" in meta.read_text()


def test_upgrade_moves_the_default_image(kplugin: Kplugin, project: Path) -> None:
    assert kplugin("upgrade", str(project), "--k8s", "1.37", "--no-tidy").code == 0
    assert image_lines(project)[0] == "image: gpu:0.1.0-k8s1.37.2"
    assert "tag: 0.1.0-k8s1.37.2" in image_lines(project)


def test_corrupt_image_in_project_file(kplugin: Kplugin, project: Path) -> None:
    meta = project / "kplugin.yaml"
    meta.write_text(meta.read_text().replace("image: gpu:0.1.0-k8s1.28.15", "image: 'gpu:1;rm -rf /'"))
    before = tree(project)
    refused(kplugin("upgrade", str(project), "--k8s", "1.37"), 2, "kplugin.yaml", "'gpu:1;rm -rf /'")
    refused(kplugin("build", str(project), "--builder", "local"), 2, "kplugin.yaml", "'gpu:1;rm -rf /'")
    assert tree(project) == before


def test_build_refuses_a_bad_image(kplugin: Kplugin, project: Path) -> None:
    refused(kplugin("build", str(project), "--image", "Gpu:latest"), 2, "'Gpu:latest'", "with a tag")


# --- user files: never rewritten, and once deleted never re-created ---------------------


def test_deleted_user_files_stay_deleted(kplugin: Kplugin, project: Path) -> None:
    deleted = [
        "pkg/gpu/args.go",
        "pkg/gpu/args_test.go",
        "pkg/gpu/zz_generated.deepcopy.go",
        "pkg/gpu/benchmark_test.go",
        "README.md",
    ]
    for name in deleted:
        (project / name).unlink()
    run = kplugin("add", "plugin", "Other", "-p", str(project), "--no-tidy", "--extension-points", "queuesort")
    assert run.code == 0, run.stderr
    for name in deleted:
        assert not (project / name).exists(), name
    # said once, in one line (issue 44, item 10), not a line per file
    (line,) = [line for line in run.stderr.splitlines() if "not re-created" in line]
    assert line.startswith("note: 5 file(s) of yours were deleted and are not re-created: ") and line.endswith(" …")
    run = kplugin("upgrade", str(project), "--k8s", "1.28.14", "--no-tidy", "--json")
    assert run.code == 0, run.stderr
    assert sorted(json.loads(run.stdout)["not_recreated"]) == sorted(deleted)
    assert not any((project / name).exists() for name in deleted)
    run = kplugin("upgrade", str(project), "--k8s", "1.28.15", "--no-tidy")
    assert run.code == 0 and "5 file(s) of yours were deleted and are not re-created" in run.stderr, run.stderr
    # a refresh, run again and again, does not say it every time
    run = kplugin("refresh", str(project))
    assert run.code == 0 and "not re-created" not in run.stderr, run.stderr


def test_args_file_edits_survive(kplugin: Kplugin, project: Path) -> None:
    """config/args is the user's: its edits stand through add plugin and upgrade, and
    the generated configuration carries them (over the sample's defaults)."""
    args = project / "config/args/gpu.yaml"
    args.write_text("# mine\nnodeLabel: example.com/pool\n")
    assert kplugin("add", "plugin", "Other", "-p", str(project), "--no-tidy").code == 0
    assert kplugin("upgrade", str(project), "--k8s", "1.28.14", "--no-tidy").code == 0
    assert args.read_text() == "# mine\nnodeLabel: example.com/pool\n"
    config = YAML(typ="safe").load(project / "deploy/scheduler-config.yaml")
    assert {c["name"]: c["args"] for c in config["profiles"][0]["pluginConfig"]} == {
        "Gpu": {"nodeLabel": "example.com/pool", "resourceName": "cpu"},
        "Other": {"resourceName": "cpu"},
    }


# --- kplugin add extension-point ---------------------------------------------------------


def test_add_extension_point_writes_adapter_config_and_stub(kplugin: Kplugin, project: Path) -> None:
    before = tree(project)
    run = kplugin("add", "extension-point", "Gpu", "reserve,permit", "-p", str(project), "--no-tidy")
    assert run.code == 0, run.stderr
    after = tree(project)
    changed = {p for p in after if before.get(p) != after[p]}
    assert changed == {
        "pkg/gpu/reserve.go",
        "pkg/gpu/reserve_test.go",
        "pkg/gpu/permit.go",
        "pkg/gpu/permit_test.go",
        "pkg/gpu/zz_generated.adapter.go",
        "deploy/scheduler-config.yaml",
        "deploy/configmap.yaml",
        "charts/gpu/values.yaml",
        "kplugin.yaml",
    }
    assert b"var _ fw.ReservePlugin = &Gpu{}" in after["pkg/gpu/reserve.go"]
    assert b"framework.PermitPlugin = (*adapter)(nil)" in after["pkg/gpu/zz_generated.adapter.go"]
    config = YAML(typ="safe").load(project / "deploy/scheduler-config.yaml")["profiles"][0]["plugins"]
    assert config["reserve"] == {"enabled": [{"name": "Gpu"}]} and config["permit"] == {"enabled": [{"name": "Gpu"}]}
    meta = YAML(typ="safe").load(project / "kplugin.yaml")
    assert meta["plugins"][0]["extensionPoints"] == ["prefilter", "filter", "score", "reserve", "permit"]
    # the stubs are the user's: upgrade keeps them and does not list them as generated
    assert "pkg/gpu/reserve.go" not in meta["generated"]
    assert kplugin("upgrade", str(project), "--k8s", "1.37", "--no-tidy").code == 0
    assert (project / "pkg/gpu/reserve.go").read_bytes() == after["pkg/gpu/reserve.go"]


def test_add_extension_point_already_in_code_writes_no_stub(kplugin: Kplugin, project: Path) -> None:
    with (project / "pkg/gpu/plugin.go").open("a") as plugin:
        plugin.write("\nfunc (pl *Gpu) PostBind(_ context.Context, _ fw.CycleState, _ *v1.Pod, _ string) {}\n")
    run = kplugin("add", "extension-point", "Gpu", "postbind", "-p", str(project), "--no-tidy")
    assert run.code == 0, run.stderr
    assert "postbind: the code already has it (pkg/gpu/plugin.go:" in run.stderr
    assert not (project / "pkg/gpu/postbind.go").exists()


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["Nope", "reserve"], 2, "plugin 'Nope' is not in this project"),
        (["Gpu", "filter"], 2, "Gpu is already at filter"),
        (["Gpu", "reservee"], 2, "unknown extension point 'reservee'"),
        (["Gpu", ""], 2, "is empty"),
    ],
)
def test_add_extension_point_bad_input(
    kplugin: Kplugin, project: Path, args: list[str], code: int, needle: str
) -> None:
    before = tree(project)
    refused(kplugin("add", "extension-point", *args, "-p", str(project), "--no-tidy"), code, needle)
    assert tree(project) == before


def test_add_extension_point_second_queue_sort_refused(kplugin: Kplugin, project: Path) -> None:
    run = kplugin("add", "plugin", "Sorter", "-p", str(project), "--no-tidy", "--extension-points", "queuesort")
    assert run.code == 0, run.stderr
    before = tree(project)
    refused(kplugin("add", "extension-point", "Gpu", "queuesort", "-p", str(project), "--no-tidy"), 2, "Sorter")
    assert tree(project) == before
