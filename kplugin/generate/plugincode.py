"""What kplugin reads of a project's plugin code where a command needs it (not doctor's
findings, which read the same sources through doctor's own reader): the plugin's Go
files, the feature gates that code needs on the target minor, and the custom resources it
reads (whose rules config/rbac/rules.yaml must give)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from kplugin.core import safefs
from kplugin.generate import gosource
from kplugin.model.project import Project
from kplugin.model.spec import PluginSpec


def sources(project: Project, plugin: PluginSpec) -> Iterator[tuple[Path, str]]:
    """The plugin's own Go files (not tests, not kplugin's zz_generated ones) and their
    text; a file that is no regular UTF-8 file is a UsageError (safefs)."""
    directory = project.root / "pkg" / plugin.package
    if not directory.is_dir() or directory.is_symlink():
        return
    for name in sorted(os.listdir(directory)):
        if name.endswith(".go") and not name.endswith("_test.go") and not name.startswith("zz_generated"):
            relative = f"pkg/{plugin.package}/{name}"
            data = safefs.read_project_file(project.root, relative)
            if data is not None:
                yield directory / name, safefs.decode(data, "Go file", directory / name)


def names_pre_hints(project: Project, plugin: PluginSpec) -> bool:
    """Whether the plugin's EventsToRegister names a PreQueueingHintFn."""
    return any(gosource.pre_hints(text, plugin.name) for _, text in sources(project, plugin))


def _project_go(project: Project) -> Iterator[tuple[Path, str]]:
    """Where a plugin's constants may be declared: the Go files of pkg/ and apis/ (not
    tests, not pkg/generated/), as regular UTF-8 files."""
    for top in ("pkg", "apis"):
        base = project.root / top
        if not base.is_dir() or base.is_symlink():
            continue
        for directory, subdirectories, files in os.walk(base):  # symlinked directories are not entered
            subdirectories[:] = sorted(d for d in subdirectories if not d.startswith((".", "_")) and d != "testdata")
            relative_dir = Path(directory).relative_to(project.root)
            if relative_dir.parts[:2] == ("pkg", "generated"):
                subdirectories[:] = []
                continue
            for name in sorted(files):
                if name.endswith(".go") and not name.endswith("_test.go"):
                    data = safefs.read_project_file(project.root, (relative_dir / name).as_posix())
                    if data is not None:
                        yield Path(directory) / name, safefs.decode(data, "Go file", Path(directory) / name)


def resources_read(project: Project) -> list[tuple[Path, int, str, str]]:
    """(file, line, group, plural) of each custom resource the plugins' code names (an
    informer's, or the events it registers), in order."""
    constants = gosource.GoConstants(_project_go(project))
    found = []
    for plugin in project.plugins:
        for path, text in sources(project, plugin):
            found += [(path, line, group, plural) for line, group, plural in
                      gosource.custom_resources(text, constants, path.parent.name)]  # fmt: skip
    return found
