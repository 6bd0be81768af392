"""kplugin adopt reads a repository as it is: tests/fixtures/adopt/ holds repositories of
our own writing in the shapes found in public ones (a fork of scheduler-plugins, a cobra
subcommand of a larger binary, a forked app package, a scheduler without plugins, a pin
older than kplugin knows)."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
from support import REPO

from kplugin.adopt import gomod, registry
from kplugin.adopt.discover import discover, project_name
from kplugin.adopt.gocode import Module
from kplugin.core.errors import UsageError
from kplugin.model.points import ExtensionPoint as P

FIXTURES = REPO / "tests/fixtures/adopt"


def test_a_fork_of_scheduler_plugins_is_read_from_its_main_and_its_plugin_packages() -> None:
    found = discover(FIXTURES / "forkshape")
    assert (found.name, found.module, str(found.target.version)) == ("forkshape", "example.com/forkshape", "1.37.2")
    assert (found.main_package, found.arguments) == ("./cmd/scheduler", ())
    plugins = {p.name: p for p in found.plugins}
    assert list(plugins) == ["Capacity", "Gang"]  # Spread's registration is commented out
    capacity, gang = plugins["Capacity"], plugins["Gang"]
    assert capacity.points == (P.PRE_FILTER, P.FILTER, P.RESERVE, P.ENQUEUE_EXTENSIONS)
    assert capacity.args_type == "example.com/forkshape/apis/config.CapacityArgs"
    assert (capacity.package, capacity.factory, capacity.type_name) == (
        "example.com/forkshape/pkg/capacity",
        "New",
        "Capacity",
    )
    # Gang's name is a variable of pkg/gang set from a constant of pkg/names
    assert gang.points == (P.QUEUE_SORT, P.POST_FILTER, P.PERMIT) and gang.args_type is None
    assert found.missing_replaces == ()


def test_a_fork_s_own_files_are_found_with_their_api_versions() -> None:
    found = discover(FIXTURES / "forkshape")
    files = found.files
    assert [(str(c.path), c.api_version) for c in files.configs] == [
        ("manifests/capacity/scheduler-config.yaml", "kubescheduler.config.k8s.io/v1"),
        ("manifests/legacy/scheduler-config.yaml", "kubescheduler.config.k8s.io/v1beta3"),
    ]
    assert [str(p) for p in files.crds] == ["manifests/crds/example.com_quotas.yaml"]
    assert [str(p) for p in files.dockerfiles] == ["build/scheduler/Dockerfile"]
    assert str(files.makefile) == "Makefile"
    assert [str(p) for p in files.manifests] == ["manifests/capacity/deployment.yaml", "manifests/capacity/rbac.yaml"]
    # the scheduler name of the configuration in the pinned minor's apiVersion, not the legacy one's
    assert found.scheduler_name == "forkshape-scheduler"


def test_a_scheduler_that_is_a_cobra_subcommand_records_the_word_before_its_flags() -> None:
    found = discover(FIXTURES / "cobrashape")
    assert (found.main_package, found.arguments, str(found.target.version)) == (
        "./cmd/platform",
        ("scheduler",),
        "1.36.5",
    )
    (plugin,) = found.plugins
    assert (plugin.name, plugin.points) == ("NodeAge", (P.SCORE,))
    # Args decoded with DecodeInto into a plain struct of the plugin's own package
    assert plugin.args_type == "example.com/cobrashape/pkg/nodeage.NodeAgeArgs"
    assert found.scheduler_name == "nodeage-scheduler" and found.files.makefile is None


def test_a_subcommand_added_in_the_main_package_itself_records_its_word() -> None:
    """crdshape makes the command in main() and adds it to its root there (cmd.Use renamed)."""
    found = discover(FIXTURES / "crdshape")
    assert (found.main_package, found.arguments) == ("./cmd/fleet", ("schedule",))
    assert [p.name for p in found.plugins] == ["NodeReservation"]
    assert [str(c) for c in found.files.crds] == ["deploy/crds/nodereservations.yaml"]


def test_a_command_made_inside_add_command_records_its_word(tmp_path: Path) -> None:
    copy = Path(shutil.copytree(FIXTURES / "crdshape", tmp_path / "crdshape"))
    main = copy / "cmd/fleet/main.go"
    text = main.read_text()
    inline = text.replace(
        "\tschedule := app.NewSchedulerCommand(app.WithPlugin(reservation.Name, reservation.New))\n"
        '\tschedule.Use = "schedule"\n\troot.AddCommand(schedule)\n',
        "\troot.AddCommand(app.NewSchedulerCommand(app.WithPlugin(reservation.Name, reservation.New)))\n",
    )
    assert inline != text
    main.write_text(inline)
    assert discover(copy).arguments == ("kube-scheduler",), "the command's own Use: not renamed"


@pytest.mark.parametrize(
    ("fixture", "words"),
    [
        ("forkedapp", ["copy of the app package of its own", "example.com/forkedapp/cmd/scheduler/app",
                       "cmd/scheduler/main.go:"]),
        ("noplugins", ["without app.WithPlugin", "main.go:"]),
        ("oldpin", ["k8s.io/kubernetes v1.23.3", "older than 1.28", "move the repository to 1.28 first"]),
    ],
)  # fmt: skip
def test_a_repository_kplugin_cannot_adopt_is_one_reason(fixture: str, words: list[str]) -> None:
    with pytest.raises(UsageError) as refused:
        discover(FIXTURES / fixture)
    message = str(refused.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def _module(tmp_path: Path, files: dict[str, str], pin: str = "v1.37.2") -> Path:
    (tmp_path / "go.mod").write_text(f"module example.com/shapes\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes {pin}\n")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


MAIN = """\
package main

import (
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"example.com/shapes/pkg/sorter"
	ext "example.com/other/plugins/remote"
)

func main() {
	opts := []app.Option{
		app.WithPlugin(sorter.Name, sorter.New),
		app.WithPlugin(sorter.Computed(), sorter.New),
		app.WithPlugin("Remote", ext.New),
	}
	_ = app.NewSchedulerCommand(opts...).Execute()
}
"""
SORTER = """\
package sorter

const Name = "Sorter"

func Computed() string { return "x" }

type sorter struct{}

func (*sorter) Name() string { return Name }

// a receiver without a name is a method all the same
func (sorter) Less(a, b interface{}) bool { return false }

func New(_ context.Context, _ runtime.Object, _ fwk.Handle) (fwk.Plugin, error) { return &sorter{}, nil }
"""


def test_options_built_beside_the_call_are_read_and_what_cannot_be_is_said(tmp_path: Path) -> None:
    found = discover(_module(tmp_path, {"main.go": MAIN, "pkg/sorter/sorter.go": SORTER}))
    assert [(p.name, p.points, p.args_type) for p in found.plugins] == [("Sorter", (P.QUEUE_SORT,), None)]
    reasons = {u.what.split(" at ")[0]: u.reason for u in found.unread}
    assert (
        "does not say which name sorter.Computed() stands for" in reasons["WithPlugin(sorter.Computed(), sorter.New)"]
    )
    assert "outside the repository's module" in reasons['WithPlugin("Remote", ext.New)']


def test_a_module_without_go_mod_or_without_kubernetes_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"has no go\.mod"):
        discover(tmp_path)
    (tmp_path / "go.mod").write_text("module example.com/x\n\ngo 1.26.0\n")
    with pytest.raises(UsageError, match=r"does not require k8s\.io/kubernetes"):
        discover(tmp_path)


def test_a_pin_newer_than_kplugin_knows_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="newer than any minor kplugin knows"):
        discover(_module(tmp_path, {"main.go": MAIN}, pin="v1.99.0"))


def test_go_mod_blocks_replacements_and_comments_are_read() -> None:
    mod = gomod.parse(
        "module example.com/m // the module\n\ngo 1.25.0\n\nrequire (\n\tk8s.io/kubernetes v1.34.1\n"
        "\tk8s.io/api v0.34.1 // indirect\n)\n\nreplace k8s.io/api => k8s.io/api v0.34.3\n"
        "replace (\n\tk8s.io/kubernetes => k8s.io/kubernetes v1.34.3\n\texample.com/x => ../x\n)\n"
    )
    assert (mod.module, mod.go, mod.kubernetes) == ("example.com/m", "1.25.0", "v1.34.3")
    assert mod.replaces["example.com/x"] == gomod.Replacement("../x", "")
    assert mod.missing_replaces(("k8s.io/api", "k8s.io/kms")) == ("k8s.io/kms",)


def test_a_dependency_written_against_another_minor_is_found_in_the_module_graph() -> None:
    graph = (
        "example.com/m k8s.io/api@v0.37.2\n"  # the module itself: its own pins
        "example.com/dep@v1.2.0 k8s.io/apimachinery@v0.34.1\n"
        "example.com/dep@v1.2.0 k8s.io/apimachinery@v0.37.0\n"  # the same minor: fine
        "k8s.io/api@v0.37.2 k8s.io/apimachinery@v0.30.0\n"  # Kubernetes' own edges
        "example.com/old@v0.1.0 k8s.io/kubernetes@v1.31.4\n"
        "example.com/dep@v1.2.0 github.com/x/y@v1.0.0\n"
    )
    pins = gomod.foreign_pins(graph, "example.com/m", ("k8s.io/api", "k8s.io/apimachinery"), 37)
    assert pins == [
        "example.com/dep@v1.2.0 requires k8s.io/apimachinery v0.34.1",
        "example.com/old@v0.1.0 requires k8s.io/kubernetes v1.31.4",
    ]


def test_the_project_name_comes_from_the_module_path_or_from_name() -> None:
    assert project_name("github.com/acme/Our_Scheduler", None) == "our-scheduler"
    assert project_name("github.com/acme/sched/v2", None) == "sched"
    assert project_name("example.com/x", "given") == "given"
    with pytest.raises(UsageError, match="project name 'Not A Name'"):
        project_name("example.com/x", "Not A Name")


def test_nested_modules_vendor_and_tests_are_not_read(tmp_path: Path) -> None:
    root = _module(tmp_path, {"main.go": MAIN, "pkg/sorter/sorter.go": SORTER})
    shutil.copytree(root / "pkg", root / "vendor/example.com/shapes/pkg")
    (root / "tools").mkdir()
    (root / "tools/go.mod").write_text("module example.com/tools\n")
    (root / "tools/main.go").write_text(MAIN)
    (root / "pkg/sorter/sorter_test.go").write_text(MAIN.replace("package main", "package sorter"))
    module = Module(root, "example.com/shapes")
    assert sorted(str(d) for d in module.packages) == [".", "pkg/sorter"]
    assert [str(c.file.path) for c in registry.commands(module)] == ["main.go"]


LIBRARY_RUN = """\
package cli

import (
	"os"

	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"example.com/shapes/pkg/sorter"
)

// Run is the binary's whole job: the scheduler is its root command.
func Run() {
	c := app.NewSchedulerCommand(app.WithPlugin(sorter.Name, sorter.New))
	if err := c.Execute(); err != nil {
		os.Exit(1)
	}
}
"""
RUN_MAIN = 'package main\n\nimport "example.com/shapes/internal/cli"\n\nfunc main() { cli.Run() }\n'
GENERATOR = "//go:build ignore\n\npackage main\n\nfunc main() {}\n"


def test_a_command_made_in_a_library_but_run_as_the_root_takes_no_word_before_its_flags(tmp_path: Path) -> None:
    root = _module(
        tmp_path,
        {
            "internal/cli/run.go": LIBRARY_RUN,
            "internal/cli/gen.go": GENERATOR,  # a generator go run builds: not the package's
            "cmd/sched/main.go": RUN_MAIN,
            "pkg/sorter/sorter.go": SORTER.replace("func (sorter) Less", "func (sorter) Less"),
        },
    )
    found = discover(root)
    assert (found.main_package, found.arguments) == ("./cmd/sched", ())


def test_a_value_receiver_without_a_name_is_read(tmp_path: Path) -> None:
    unnamed = SORTER.replace("func (*sorter) Name() string", "func (sorter) Name() string")
    found = discover(_module(tmp_path, {"main.go": MAIN, "pkg/sorter/sorter.go": unnamed}))
    assert [(p.name, p.type_name) for p in found.plugins] == [("Sorter", "sorter")]


def test_a_file_of_several_configurations_is_recorded_once(tmp_path: Path) -> None:
    root = _module(tmp_path, {"main.go": MAIN, "pkg/sorter/sorter.go": SORTER})
    (root / "config.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles: [{schedulerName: one}]\n---\n"
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles: [{schedulerName: two}]\n"
    )
    found = discover(root)
    assert [(str(c.path), c.scheduler_names) for c in found.files.configs] == [("config.yaml", ("one", "two"))]
    # two scheduler names: none is the project's, its own name is
    assert found.scheduler_name == "shapes"
