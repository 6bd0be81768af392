"""What adopt writes: kplugin.yaml, the one file it adds to a repository (never over
another without --force), and what it shows of what it found."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any, NamedTuple

from kplugin import __version__
from kplugin.adopt.discover import Adoption
from kplugin.core import safefs, yamlio
from kplugin.model import layout as layouts
from kplugin.model.goapi import NATIVE
from kplugin.model.project import PROJECT_FILE, Project

__all__ = ["PROJECT_FILE", "Refreshed", "document", "layout", "refresh", "text", "write"]
from kplugin.model.spec import default_image


def layout(adoption: Adoption) -> layouts.Layout:
    found = adoption.files
    return layouts.Layout(
        main=str(adoption.main),
        arguments=adoption.arguments,
        plugins={
            p.name: layouts.Registration(p.package, p.factory, p.type_name, p.args_type) for p in adoption.plugins
        },
        configs=tuple(layouts.ConfigRecord(str(c.path), c.api_version) for c in found.configs),
        crds=tuple(str(p) for p in found.crds),
        dockerfiles=tuple(str(p) for p in found.dockerfiles),
        makefile=str(found.makefile) if found.makefile else None,
        charts=tuple(str(p) for p in found.charts),
        manifests=tuple(str(p) for p in found.manifests),
    )


def document(adoption: Adoption, image: str | None = None) -> dict[str, Any]:
    """kplugin.yaml for the repository, its keys in a fixed order; ``image``: the one
    kplugin.yaml names already (kplugin refresh keeps it), else the default."""
    plugins = [
        {"name": p.name, "extensionPoints": [str(x) for x in p.points], "args": p.args_type is not None}
        for p in adoption.plugins
    ]
    return {
        "kplugin": __version__,
        "name": adoption.name,
        "module": adoption.module,
        "kubernetes": str(adoption.target.version),
        "api": str(NATIVE),
        "schedulerName": adoption.scheduler_name,
        "image": image or default_image(adoption.name, adoption.target.version),
        "plugins": plugins,
        "adopted": layout(adoption).document(),
    }


def text(adoption: Adoption, image: str | None = None) -> str:
    return yamlio.dump(document(adoption, image))


def write(
    adoption: Adoption, force: bool, extra: dict[PurePosixPath, str] | None = None
) -> tuple[list[PurePosixPath], list[PurePosixPath]]:
    """Write ROOT/kplugin.yaml (an existing one only with ``force``) and each ``extra``
    file that does not exist yet, every destination checked before the first write; the
    extra files written, and those that existed (left as they are)."""
    target = safefs.check_writable_target(adoption.root, PROJECT_FILE, replace=force)
    added, kept = [], []
    for path in sorted(extra or {}):
        if safefs.lstat_mode(safefs.inside(adoption.root, path, "file")) is not None:
            kept.append(path)
        else:
            safefs.check_writable_target(adoption.root, path)
            added.append(path)
    for path in added:
        destination = adoption.root / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        safefs.write_atomic(destination, (extra or {})[path].encode())
    recorded = _with_added(adoption) if added else adoption
    safefs.write_atomic(target, text(recorded).encode())
    return added, kept


def _with_added(adoption: Adoption) -> Adoption:
    """The repository read again with the files --with added (its manifests, its chart),
    as kplugin refresh would record it next; as it was read, should reading fail now."""
    from kplugin.adopt import discover
    from kplugin.core.errors import KpluginError

    try:
        again = discover.discover(adoption.root, adoption.name)
    except KpluginError:
        return adoption
    return again._replace(scheduler_name=adoption.scheduler_name)


class Refreshed(NamedTuple):
    before: str  # kplugin.yaml as it was ("" when missing)
    now: str  # as recorded again

    @property
    def changed(self) -> bool:
        return self.now != self.before


def refresh(project: Project, dry_run: bool) -> Refreshed:
    """kplugin.yaml recorded again from the adopted repository's code and files (as
    kplugin adopt --force would), keeping what the file says of the project itself: its
    name, scheduler name and image. Written unless ``dry_run`` (and only when changed)."""
    from kplugin.adopt import discover

    again = discover.discover(project.root, project.name)._replace(scheduler_name=project.scheduler_name)
    now = text(again, image=project.image)
    data = safefs.read_project_file(project.root, PROJECT_FILE)
    before = safefs.decode(data, "kplugin.yaml", project.root / PROJECT_FILE) if data is not None else ""
    refreshed = Refreshed(before, now)
    if refreshed.changed and not dry_run:
        safefs.write_atomic(project.root / PROJECT_FILE, now.encode())
    return refreshed
