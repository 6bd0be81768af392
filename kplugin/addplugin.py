"""``kplugin add plugin``: a new plugin package in an existing project, registered by
one blank import inserted at the scaffold marker of cmd/scheduler/plugins.go."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from kplugin import golang, safefs, sync
from kplugin.errors import OperationError, UsageError
from kplugin.project import Project
from kplugin.spec import (
    DEFAULT_EXTENSION_POINTS,
    ExtensionPoint,
    PluginSpec,
    package_name,
    parse_extension_points,
    validate_plugin_name,
)

IMPORTS_FILE = PurePosixPath("cmd/scheduler/plugins.go")
MARKER = "// +kplugin:scaffold:plugin-imports"


@dataclass
class AddResult:
    plugin: PluginSpec
    changed: list[PurePosixPath] = field(default_factory=list)
    kept: list[sync.Conflict] = field(default_factory=list)


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
    if ExtensionPoint.QUEUE_SORT in points and any(p.has(ExtensionPoint.QUEUE_SORT) for p in project.plugins):
        sorter = next(p.name for p in project.plugins if p.has(ExtensionPoint.QUEUE_SORT))
        raise UsageError(
            f"--extension-points: {sorter} already sorts the queue, and a profile takes one QueueSort plugin; "
            "leave out queuesort"
        )
    return PluginSpec(name, points)


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
) -> AddResult:
    plugin = new_plugin(project, name, extension_points)
    spec = project.spec(plugins=(*project.plugins, plugin))
    plan = sync.plan(project, spec, keep_edited=keep_edited)
    if plan.conflicts and not keep_edited:
        raise OperationError(plan.conflict_message(f"kplugin add plugin {name}"))
    source = safefs.read_project_file(project.root, IMPORTS_FILE)
    if source is None:
        raise OperationError(f"{IMPORTS_FILE} is missing; restore it (it imports each plugin package)")
    text = safefs.decode(source, str(IMPORTS_FILE), project.root / IMPORTS_FILE)
    plan.writes[IMPORTS_FILE] = insert_import(text, f"{project.module}/pkg/{plugin.package}").encode()
    result = AddResult(plugin=plugin, kept=plan.conflicts)
    if dry_run:
        result.changed = sorted({*plan.writes, *plan.deletes})
        return result
    result.changed = sync.apply(project, plan, golang.mod_tidy if tidy else None)
    return result
