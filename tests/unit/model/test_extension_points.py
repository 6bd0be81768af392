"""The extension points' table (kplugin.model.points) against every consumer of it: a
point is one row there plus its template section, and each test here fails when a
consumer says something else."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from support import REPO, Run

from kplugin.generate import addplugin, scaffold, sections, templating
from kplugin.model import goapi, points, spec, versions
from kplugin.model.points import POINTS, ExtensionPoint
from kplugin.model.schedconfig import SchedulerConfig

TEMPLATE = REPO / "templates" / "project"
SECTIONS = TEMPLATE / "templates" / "sections"
# the files a section has a part of (a macro each); other macros are the section's helpers
FILES = ("plugin_go", "plugin_test_go", "adapter_go", "stub_go", "stub_test_go")
RULES = {"plugin_go": sections.PLUGIN_GO, "plugin_test_go": sections.PLUGIN_TEST_GO, "adapter_go": sections.ADAPTER_GO}
ALL = ",".join(ExtensionPoint)


def macros(section: str) -> set[str]:
    text = (SECTIONS / f"{section}.jinja").read_text()
    return set(re.findall(r"<%-? macro (\w+)\(", text))


def test_a_row_per_point_in_cycle_order() -> None:
    assert tuple(POINTS) == tuple(ExtensionPoint)
    assert spec.ExtensionPoint is ExtensionPoint  # doctor, scaffold, ... import it from spec
    for point, row in POINTS.items():
        assert point.row is row and row.help and row.methods and row.section
        assert row.parts and set(row.parts) <= set(FILES)
        assert all(m.name[:1].isupper() for m in row.methods)
        assert points.method(point) in {m.name for m in row.methods}


def test_spec_derives_from_the_table() -> None:
    for point, row in POINTS.items():
        assert point.config_name == row.config
        assert point.interface == row.interface and point.go_name == row.interface.removesuffix("Plugin")
    assert tuple(p for p, row in POINTS.items() if row.default) == spec.DEFAULT_EXTENSION_POINTS
    assert {p for p, row in POINTS.items() if row.sample_args} == spec.SAMPLE_ARGS_POINTS
    assert {p for p, row in POINTS.items() if row.rejects} == spec.REJECTING_POINTS
    assert {p for p, row in POINTS.items() if row.signs} == spec.SIGNING_POINTS
    assert spec.parse_extension_points(ALL) == tuple(ExtensionPoint)
    with pytest.raises(spec.UsageError) as raised:
        spec.parse_extension_points("nope")
    assert points.words() in str(raised.value)


def test_configuration_keys_are_the_tables() -> None:
    """render-config enables a plugin under each point's key (the scheduler's Plugins
    struct: preEnqueue, queueSort, ...), and under none for a point without one."""
    plugin = spec.PluginSpec.new("All", tuple(ExtensionPoint))
    section = SchedulerConfig(scheduler_names=("s",), plugins=(plugin,)).plugins_section()
    assert set(section) == {row.config for row in POINTS.values() if row.config}
    assert [row.config for row in POINTS.values()][-1] is None  # EnqueueExtensions


def test_help_lists_the_tables_points(kplugin: Callable[..., Run]) -> None:
    from kplugin.cli import new

    assert f"Comma-separated: {points.words()}. Default: {points.default_words()}." == new.POINTS_HELP
    for command in (("new",), ("add", "plugin")):
        run = kplugin(*command, "--help")
        assert run.code == 0, run.stderr
        assert f"Default: {points.default_words()}." in " ".join(run.stdout.split())
    readme = (REPO / "README.md").read_text()
    assert f"| `--extension-points` | `{points.default_words()}` | any of `{points.words()}` (" in readme


def test_add_extension_point_finds_each_points_method() -> None:
    assert {p: points.method(p) for p in ExtensionPoint} == addplugin._METHODS
    assert len(set(addplugin._METHODS.values())) == len(ExtensionPoint)  # each shows one point only


def test_bench_labels_are_the_tables() -> None:
    from kplugin.bench import run

    assert tuple(label for row in POINTS.values() for label in row.metrics) == run.EXTENSION_POINTS
    assert len(set(run.EXTENSION_POINTS)) == len(run.EXTENSION_POINTS)
    assert all(row.metrics for row in POINTS.values() if row.config)  # a configured point is timed


def test_cookiecutter_json_has_the_tables_variables() -> None:
    """cookiecutter.json must declare every variable (cookiecutter ignores others): a
    boolean per point, in the table's order, true for the default points."""
    declared = json.loads((TEMPLATE / "cookiecutter.json").read_text())
    keys = list(declared)
    at = keys.index(str(next(iter(POINTS))))
    flags = {key: declared[key] for key in keys[at : at + len(POINTS)]}
    assert flags == points.template_flags(), "cookiecutter.json's booleans: " + json.dumps(points.template_flags())
    for variable in ("point", "go_name", "interface"):  # what a stub renders with
        assert variable in declared


def test_template_context_has_the_tables_variables() -> None:
    target = versions.resolve("1.38.0-beta.0")  # the newest (pre-)release has every point
    project = spec.ProjectSpec.create("all", target, extension_points=ALL)
    context = scaffold.template_context(project, point=ExtensionPoint.PRE_BIND)
    assert {key: context[key] for key in points.template_flags()} == dict.fromkeys(points.template_flags(), True)
    assert context["_data"]["points"] == [{"name": str(p), "interface": row.interface} for p, row in POINTS.items()]
    assert (context["point"], context["interface"]) == ("prebind", "PreBindPlugin")
    for row in POINTS.values():  # templates spell every interface through the names table
        assert row.interface in goapi.layer_names()


@pytest.mark.parametrize("point", list(ExtensionPoint))
def test_sections_on_disk_and_in_the_rules(point: ExtensionPoint) -> None:
    row = POINTS[point]
    assert (SECTIONS / f"{row.section}.jinja").is_file()
    assert macros(row.section) & set(FILES) == set(row.parts)
    assert {"stub_go", "stub_test_go"} <= set(row.parts)  # kplugin add extension-point writes them
    for file, rules in RULES.items():
        listed = [name for name, _ in rules]
        assert (row.section in listed) == (file in row.parts), f"{row.section} in sections.{file.upper()}"
    # tested in plugin_test.go: by its own section or the shared one the table names
    if row.tested_in is None:
        assert "plugin_test_go" in row.parts
    else:
        assert "plugin_test_go" not in row.parts and "plugin_test_go" in macros(row.tested_in)
        assert row.tested_in in [name for name, _ in sections.PLUGIN_TEST_GO]


def test_every_section_on_disk_is_used() -> None:
    listed = {name for rules in RULES.values() for name, _ in rules} | {row.section for row in POINTS.values()}
    assert {path.stem for path in SECTIONS.glob("*.jinja")} == listed


def _minors_that_differ() -> list[str]:
    """The oldest and newest minor kplugin supports, and on each side of every minor
    where a point or a method comes or goes."""
    supported = [r.key for r in versions.supported_releases()]
    edges = {supported[0], supported[-1]}
    for row in POINTS.values():
        for first, last in [(row.first, row.last), *((m.first, m.last) for m in row.methods)]:
            if first in supported:
                edges |= {supported[max(supported.index(first) - 1, 0)], first}
            if last in supported:
                edges |= {last, supported[min(supported.index(last) + 1, len(supported) - 1)]}
    return sorted(edges, key=points.parse_minor)


@pytest.mark.parametrize("minor", _minors_that_differ())
def test_native_code_implements_each_minors_methods(minor: str) -> None:
    """A plugin written against a minor's own API (--api native) defines exactly the
    methods the table gives each point on that minor."""
    target = versions.newest_target(minor)
    key = (target.version.major, target.version.minor)
    present = tuple(p for p in ExtensionPoint if points.available(p, key))
    project = spec.ProjectSpec.create("all", target, extension_points=",".join(present), api="native")
    rendered = templating.render_tree(scaffold.template_context(project))
    plugin = {str(path): content for path, content in rendered.items()}["all/pkg/all/plugin.go"].decode()
    defined = set(re.findall(r"^func \(\w+ \*?All\) (\w+)\(", plugin, re.M))
    for point in ExtensionPoint:
        wanted = set(points.methods(point, key)) if point in present else set()
        every = {m.name for m in POINTS[point].methods}
        assert defined & every == wanted, f"{point} on {minor}"


def test_layer_code_has_the_newest_methods() -> None:
    """internal/fw has the newest framework's shape: a --api layer plugin defines the
    methods of the newest minor kplugin supports, on every minor that has the point."""
    newest = versions.supported_releases()[-1].newest
    for minor in ("1.28", "1.36"):
        target = versions.resolve(minor)
        present = [p for p in ExtensionPoint if points.available(p, (target.version.major, target.version.minor))]
        project = spec.ProjectSpec.create("all", target, extension_points=",".join(present))
        rendered = templating.render_tree(scaffold.template_context(project))
        plugin = {str(path): content for path, content in rendered.items()}["all/pkg/all/plugin.go"].decode()
        defined = set(re.findall(r"^func \(\w+ \*?All\) (\w+)\(", plugin, re.M))
        for point in present:
            assert set(points.methods(point, (newest.major, newest.minor))) <= defined, point
    assert ExtensionPoint.PLACEMENT_SCORE in present  # 1.36 has every point


@pytest.mark.parametrize("minor", sorted(versions.catalog(), key=points.parse_minor))
def test_the_go_names_spell_each_point_s_interface_where_the_minor_has_it(minor: str) -> None:
    """goapi spells every available point's Go interface from this table (in the minor's
    package), and no interface of a point the minor lacks; the framework types that moved
    to fwk in 1.35 (model.apichanges) include every interface the points had then."""
    from kplugin.model import apichanges

    target = versions.newest_target(minor)
    key = (target.version.major, target.version.minor)
    native = goapi.native_names(target.facts)
    for point in ExtensionPoint:
        interface = POINTS[point].interface
        if points.available(point, key):
            assert native.get(interface, "").endswith(f".{interface}"), (point, minor)
        else:
            assert interface not in native, (point, minor)
    before = {POINTS[p].interface for p in ExtensionPoint if points.available(p, (1, 35))}
    assert before <= set(apichanges.MOVED_TO_FWK["1.35"])
