"""``kplugin add plugin``: a new plugin package in an existing project, registered by
one blank import inserted at the scaffold marker of cmd/scheduler/plugins.go."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from kplugin.core import golang, safefs
from kplugin.core.errors import OperationError, Setting, UsageError
from kplugin.generate import argsinfo, gosource, scaffold, sync
from kplugin.model.points import method as point_method
from kplugin.model.project import Project
from kplugin.model.spec import (
    DEFAULT_EXTENSION_POINTS,
    ExtensionPoint,
    PluginSpec,
    package_name,
    parse_extension_points,
    require_available,
    validate_plugin_name,
)

IMPORTS_FILE = PurePosixPath("cmd/scheduler/plugins.go")
MARKER = "// +kplugin:scaffold:plugin-imports"


@dataclass(kw_only=True)
class AddResult(sync.Changed):
    plugin: PluginSpec
    # extension points whose methods the code already had (no stub written)
    found_in_code: dict[str, str] = field(default_factory=dict)


def new_plugin(project: Project, name: str, extension_points: str | None) -> PluginSpec:
    """Validate the new plugin against the project: a fresh name and package, and at
    most one QueueSort plugin per profile."""
    validate_plugin_name(name)
    if any(p.name == name for p in project.plugins):
        raise UsageError(f"plugin {name!r} is already in this project; choose another name")
    package = package_name(name)
    if any(p.package == package for p in project.plugins) or safefs.lstat_mode(project.root / "pkg" / package):
        raise UsageError(f"plugin {name!r}: pkg/{package} already exists; choose another name")
    points = parse_extension_points(extension_points) if extension_points is not None else DEFAULT_EXTENSION_POINTS
    require_available(points, project.target)
    _one_queue_sort(project, name, points)
    return PluginSpec.new(name, points)


def _one_queue_sort(project: Project, name: str, points: tuple[ExtensionPoint, ...]) -> None:
    if ExtensionPoint.QUEUE_SORT in points:
        sorter = next((p.name for p in project.plugins if p.has(ExtensionPoint.QUEUE_SORT) and p.name != name), None)
        if sorter is not None:
            raise UsageError(
                f"{Setting.EXTENSION_POINTS}: {sorter} already sorts the queue, and a profile takes one QueueSort "
                "plugin; leave out queuesort"
            )


def insert_import(source: str, import_path: str) -> str:
    """Insert a blank import at the marker, keeping the imports above it sorted."""
    lines = source.splitlines(keepends=True)
    marker = next((i for i, line in enumerate(lines) if line.strip() == MARKER), None)
    if marker is None:
        raise OperationError(
            f"{IMPORTS_FILE} has no '{MARKER}' line; add `_ \"{import_path}\"` to its imports yourself, "
            "or restore the marker"
        )
    first = marker
    while first > 0 and lines[first - 1].strip().startswith('_ "'):
        first -= 1
    imports = sorted({*(line.strip() for line in lines[first:marker]), f'_ "{import_path}"'})
    return "".join(lines[:first] + [f"\t{line}\n" for line in imports] + lines[marker:])


def add_plugin(
    project: Project,
    name: str,
    extension_points: str | None = None,
    *,
    keep_edited: bool = False,
    tidy: bool = True,
    dry_run: bool = False,
    progress: Callable[[str], None] = lambda _: None,
) -> AddResult:
    plugin = new_plugin(project, name, extension_points)
    spec = project.spec(plugins=(*project.plugins, plugin))
    rendered, notices = sync.render_spec(project, spec, progress)
    create = (PurePosixPath("pkg", plugin.package), argsinfo.args_file(plugin))
    plan = sync.plan(project, spec, keep_edited=keep_edited, rendered=rendered, create=create)
    if plan.conflicts and not keep_edited:
        raise OperationError(plan.conflict_message(f"kplugin add plugin {name}"))
    source = safefs.read_project_file(project.root, IMPORTS_FILE)
    if source is None:
        raise OperationError(f"{IMPORTS_FILE} is missing; restore it (it imports each plugin package)")
    text = safefs.decode(source, str(IMPORTS_FILE), project.root / IMPORTS_FILE)
    plan.writes[IMPORTS_FILE] = insert_import(text, f"{project.module}/pkg/{plugin.package}").encode()
    result = AddResult(plugin=plugin, kept=plan.conflicts, not_recreated=plan.not_recreated, notices=notices)
    return _apply(project, plan, result, tidy, dry_run)


def _apply(project: Project, plan: sync.Sync, result: AddResult, tidy: bool, dry_run: bool) -> AddResult:
    in_stage = golang.mod_tidy if tidy else None
    # a dry run stages what the run would and lists what differs: the run's own list
    result.changed = sync.preview(project, plan, in_stage) if dry_run else sync.apply(project, plan, in_stage)
    return result


# --- kplugin add extension-point ---------------------------------------------------------

# How a plugin's code shows it implements an extension point: the method on its type
# (the table's, kplugin.model.points).
_METHODS = {point: point_method(point) for point in ExtensionPoint}


def methods_in_code(project: Project, plugin: PluginSpec) -> dict[ExtensionPoint, str]:
    """The extension points whose method the plugin's own code (not tests, not kplugin's
    zz_generated files) defines on its type, with file:line."""
    found: dict[ExtensionPoint, str] = {}
    package = PurePosixPath("pkg", plugin.package)
    directory = safefs.inside(project.root, package)
    if not directory.is_dir() or directory.is_symlink():
        return found
    wanted = {method: point for point, method in _METHODS.items()}
    for path in sorted(directory.glob("*.go")):
        if path.name.endswith("_test.go") or path.name.startswith("zz_generated"):
            continue
        data = safefs.read_project_file(project.root, (package / path.name).as_posix())
        text = safefs.decode(data or b"", "Go file", path)
        for method in gosource.methods(text, plugin.name):
            point = wanted.get(method.name)
            if point is not None and point not in found:
                found[point] = f"{package / path.name}:{method.line}"
    return found


def add_extension_points(
    project: Project,
    name: str,
    extension_points: str,
    *,
    keep_edited: bool = False,
    tidy: bool = True,
    dry_run: bool = False,
    progress: Callable[[str], None] = lambda _: None,
) -> AddResult:
    """Add extension points to an existing plugin: its adapter and the configuration
    (generated), and, where its code has no such method yet, a stub of the method and a
    test (new files of the user's: pkg/<package>/<point>.go and <point>_test.go)."""
    plugin = next((p for p in project.plugins if p.name == name), None)
    if plugin is None:
        raise UsageError(f"plugin {name!r} is not in this project ({', '.join(p.name for p in project.plugins)})")
    added = parse_extension_points(extension_points, "POINTS")
    require_available(added, project.target, "POINTS")
    already = [str(p) for p in added if plugin.has(p)]
    if already:
        raise UsageError(f"{name} is already at {', '.join(already)}; kplugin.yaml lists its extension points")
    points = tuple(p for p in ExtensionPoint if plugin.has(p) or p in added)
    parse_extension_points(",".join(points), "POINTS")  # e.g. enqueueextensions needs a point that rejects
    _one_queue_sort(project, name, points)
    updated = replace(plugin, extension_points=points)
    spec = project.spec(plugins=tuple(updated if p.name == name else p for p in project.plugins))
    rendered, notices = sync.render_spec(project, spec, progress)
    in_code = methods_in_code(project, plugin)
    stubs: list[PurePosixPath] = []
    for point in added:
        if point in in_code:
            continue
        for path, content in scaffold.render_stub(spec, updated, point).items():
            if safefs.lstat_mode(project.root / path) is not None:
                raise UsageError(f"{path} exists; move it away to add {point} (kplugin writes its stub there)")
            rendered[path] = content
            stubs.append(path)
    plan = sync.plan(project, spec, keep_edited=keep_edited, rendered=rendered, create=tuple(stubs))
    if plan.conflicts and not keep_edited:
        raise OperationError(plan.conflict_message(f"kplugin add extension-point {name}"))
    result = AddResult(
        plugin=updated,
        kept=plan.conflicts,
        not_recreated=plan.not_recreated,
        notices=notices,
        found_in_code={str(p): where for p, where in in_code.items() if p in added},
    )
    return _apply(project, plan, result, tidy, dry_run)
